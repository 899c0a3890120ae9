/**
 * @module test/support/flutter-decoders
 * zulip-flutter's decoders for the events and register sections of user status and
 * muted users, transcribed from lib/api/model/events.g.dart (UserStatusEvent,
 * MutedUsersEvent), model.dart (UserStatusChange.fromJson, MutedUserItem),
 * reaction.dart (ReactionType.fromApiValue) and initial_snapshot.g.dart (`user_status`,
 * `muted_users`), AlertWordsEvent and SubmessageEvent, zulip/zulip-flutter at e989e4f, and
 * submessage.dart (Submessage, WidgetData, PollWidgetData) at 06ce603. Each throws where the Dart code would
 * (a failed cast, a null `!`): what parley sends must decode without throwing.
 */

type Json = Record<string, unknown>;

function fail(path: string, what: string): never {
  throw new Error(`${path}: ${what}`);
}

function int(json: Json, key: string, path: string): number {
  const v = json[key];
  if (typeof v !== "number" || !Number.isInteger(v)) fail(`${path}.${key}`, `expected int, got ${JSON.stringify(v)}`);
  return v;
}

function optString(json: Json, key: string, path: string): string | null {
  const v = json[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") fail(`${path}.${key}`, `expected String?, got ${JSON.stringify(v)}`);
  return v;
}

function obj(v: unknown, path: string): Json {
  if (v === null || typeof v !== "object" || Array.isArray(v)) fail(path, `expected Map, got ${JSON.stringify(v)}`);
  return v as Json;
}

/** ReactionType's API values (_$ReactionTypeEnumMap); fromApiValue's `!` throws on others. */
const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"];

/** A decoded UserStatusChange: undefined = no change (OptionNone), null = cleared. */
export interface FlutterStatusChange {
  readonly text: string | null | undefined;
  readonly emoji: { name: string; code: string; reactionType: string } | null | undefined;
}

/** UserStatusChange.fromJson. */
export function decodeUserStatusChange(json: Json, path = "$"): FlutterStatusChange {
  const text = optString(json, "status_text", path);
  const name = optString(json, "emoji_name", path);
  const code = optString(json, "emoji_code", path);
  const type = optString(json, "reaction_type", path);
  let emoji: FlutterStatusChange["emoji"];
  if (name === null || code === null || type === null) emoji = undefined;
  else if (name === "" || code === "" || type === "") emoji = null;
  else {
    if (!REACTION_TYPES.includes(type)) fail(`${path}.reaction_type`, `unknown ReactionType ${type}`);
    emoji = { name, code, reactionType: type };
  }
  return { text: text === null ? undefined : text === "" ? null : text, emoji };
}

/** UserStatusEvent.fromJson (the change is read from the event itself). */
export function decodeUserStatusEvent(json: Json): { userId: number; change: FlutterStatusChange } {
  return { userId: int(json, "user_id", "$"), change: decodeUserStatusChange(json) };
}

/** MutedUserItem.fromJson (the timestamp is not read). */
function decodeMutedUserItem(v: unknown, path: string): number {
  return int(obj(v, path), "id", path);
}

function mutedList(v: unknown, path: string): number[] {
  if (!Array.isArray(v)) fail(path, `expected List, got ${JSON.stringify(v)}`);
  return v.map((item, i) => decodeMutedUserItem(item, `${path}[${i}]`));
}

/** MutedUsersEvent.fromJson. */
export function decodeMutedUsersEvent(json: Json): number[] {
  return mutedList(json["muted_users"], "$.muted_users");
}

/** InitialSnapshot's `user_status` (Map<int, UserStatusChange>, keys int.parse'd) and `muted_users`. */
export function decodeSnapshotSections(snapshot: Json): {
  userStatuses: Map<number, FlutterStatusChange>;
  mutedUsers: number[];
} {
  const statuses = obj(snapshot["user_status"], "$.user_status");
  const userStatuses = new Map<number, FlutterStatusChange>();
  for (const [k, v] of Object.entries(statuses)) {
    if (!/^-?\d+$/.test(k)) fail(`$.user_status`, `key ${k} is not an int`);
    userStatuses.set(Number(k), decodeUserStatusChange(obj(v, `$.user_status.${k}`), `$.user_status.${k}`));
  }
  return { userStatuses, mutedUsers: mutedList(snapshot["muted_users"], "$.muted_users") };
}

/** AlertWordsEvent.fromJson (events.g.dart): `id` as num, `alert_words` a List cast to String each. */
export function decodeAlertWordsEvent(json: Json): string[] {
  int(json, "id", "$");
  const list = json["alert_words"];
  if (!Array.isArray(list)) fail("$.alert_words", `expected List, got ${JSON.stringify(list)}`);
  return list.map((w, i) =>
    typeof w === "string" ? w : fail(`$.alert_words[${i}]`, `expected String, got ${JSON.stringify(w)}`),
  );
}

function str(json: Json, key: string, path: string): string {
  const v = json[key];
  if (typeof v !== "string") fail(`${path}.${key}`, `expected String, got ${JSON.stringify(v)}`);
  return v;
}

/** SubmessageType with unknownEnumValue: any string decodes ("widget" or unknown). */
function submessageType(json: Json, path: string): "widget" | "unknown" {
  return str(json, "msg_type", path) === "widget" ? "widget" : "unknown";
}

export interface FlutterSubmessage {
  readonly senderId: number;
  readonly msgType: "widget" | "unknown";
  readonly content: string;
}

/** Submessage.fromJson (submessage.g.dart): sender_id as num, msg_type an enum with a fallback, content a String. */
export function decodeSubmessage(v: unknown, path = "$"): FlutterSubmessage {
  const json = obj(v, path);
  return {
    senderId: int(json, "sender_id", path),
    msgType: submessageType(json, path),
    content: str(json, "content", path),
  };
}

/** SubmessageEvent.fromJson (events.g.dart): id, msg_type, content, message_id, sender_id, submessage_id. */
export function decodeSubmessageEvent(json: Json): FlutterSubmessage & { messageId: number; submessageId: number } {
  int(json, "id", "$");
  return {
    msgType: submessageType(json, "$"),
    content: str(json, "content", "$"),
    messageId: int(json, "message_id", "$"),
    senderId: int(json, "sender_id", "$"),
    submessageId: int(json, "submessage_id", "$"),
  };
}

/**
 * WidgetData.fromJson then PollWidgetData / PollWidgetExtraData (submessage.dart): the
 * first submessage's content as a Map, `widget_type` a String (todo is "unknown" there),
 * a poll's question a String (default "") and options a List of String (default []).
 */
export function decodeWidgetData(content: string): { widgetType: string; question?: string; options?: string[] } {
  const json = obj(JSON.parse(content), "$");
  const widgetType = str(json, "widget_type", "$");
  if (widgetType !== "poll") return { widgetType };
  const extra = obj(json["extra_data"], "$.extra_data");
  const question = extra["question"] === undefined ? "" : str(extra, "question", "$.extra_data");
  const rawOptions = extra["options"] ?? [];
  if (!Array.isArray(rawOptions)) fail("$.extra_data.options", `expected List, got ${JSON.stringify(rawOptions)}`);
  const options = rawOptions.map((o, i) =>
    typeof o === "string" ? o : fail(`$.extra_data.options[${i}]`, `expected String, got ${JSON.stringify(o)}`),
  );
  return { widgetType, question, options };
}
