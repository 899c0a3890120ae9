/**
 * @module test/realtime/reducer
 * A reference client for the events oracle: applies Zulip wire events to a POST
 * /register snapshot (JSON, wire shapes), the way Zulip's apply_event does, so that
 * snapshot + every event received == a fresh snapshot taken afterwards.
 *
 * Written from Zulip's documented event semantics, independently of src/realtime: it
 * must not share code with what it checks.
 *
 * unread_msgs is kept raw (message ID -> where it lives, which mention flags it has)
 * and aggregated on output under the current mutes, as the web app does; Zulip's own
 * apply_event decides muting at event time, which drifts when a channel or topic is
 * muted after its messages arrived. Aggregation follows parley's snapshot rules
 * (src/engine/queries/unread.ts): channel messages of channels the user is not
 * subscribed to are left out; muted channel/topic messages are listed but not
 * counted; personal and group mentions are always in `mentions`, wildcard mentions
 * only outside muted channels/topics.
 */

export type Json = Record<string, unknown>;

/** Sections the reducer maintains; compared against a fresh snapshot by the oracle. */
export const MAINTAINED_SECTIONS = [
  "realm_users",
  "realm_non_active_users",
  "subscriptions",
  "unsubscribed",
  "never_subscribed",
  "streams",
  "realm_default_streams",
  "realm_default_stream_groups",
  "channel_folders",
  "realm_bots",
  "realm_user_groups",
  "user_topics",
  "unread_msgs",
  "starred_messages",
  "max_message_id",
  // Own-user fields of the realm_user section.
  "user_id",
  "email",
  "delivery_email",
  "full_name",
  "is_admin",
  "is_owner",
  "is_moderator",
  "is_guest",
  "can_create_public_streams",
  "can_create_private_streams",
  "can_create_streams",
  "can_create_web_public_streams",
  "can_subscribe_other_users",
  "avatar_url",
  "avatar_url_medium",
  "avatar_source",
  "can_invite_others_to_realm",
  // Personal state (settings, the realm's defaults, drafts, saved snippets).
  "user_settings",
  "realm_user_settings_defaults",
  "drafts",
  "saved_snippets",
  // Everyone's statuses (user_status events) and the user's muted users (muted_users events).
  "user_status",
  "muted_users",
  // The user's alert words (complete list in each event).
  "alert_words",
  // The user's client devices and their push registration (device events, FL 468).
  "devices",
  // The realm's code playgrounds (complete list in each event).
  "realm_playgrounds",
  // The realm's linkifiers in their order (complete list in each event).
  "realm_linkifiers",
  "realm_emoji",
  // The realm's email domains (add/change/remove by domain).
  "realm_domains",
  // The realm's custom profile fields (complete list in each event).
  "custom_profile_fields",
] as const;

type UnreadPlace =
  | { readonly kind: "stream"; streamId: number; topic: string }
  | { readonly kind: "pm"; readonly otherUserId: number }
  | { readonly kind: "huddle"; readonly userIdsString: string };

interface RawUnread {
  readonly places: Map<number, UnreadPlace>;
  /** Personal or group mentions: listed in `mentions` even when muted. */
  readonly personal: Set<number>;
  /** Stream or topic wildcard mentions: listed only outside muted channels/topics. */
  readonly wildcard: Set<number>;
}

export interface ClientState {
  readonly userId: number;
  /** The snapshot's JSON, mutated in place by events (unread_msgs is derived, see toComparable). */
  readonly snapshot: Json;
  readonly unread: RawUnread;
  /**
   * Channels the user has an inactive subscription to: their unread messages are not
   * listed (Zulip and parley exclude inactive subscriptions only, so a message one
   * sent to a channel one never joined stays listed). Kept apart from `unsubscribed`
   * because a private channel one left may vanish from every list (stream delete).
   */
  readonly left: Set<number>;
  /**
   * Past subscriptions to channels the client stopped seeing (stream delete): a fresh
   * register lists them in `unsubscribed` again, with their personal settings, once the
   * channel is visible again (a role change, a channel made public), so a `stream
   * create` for one puts it back there.
   */
  readonly hiddenLeft: Map<number, Json>;
  /**
   * What the client knows of its UserMessage rows, for max_message_id (the newest row):
   * the snapshot's max_message_id and the IDs events gave it rows for since. A deletion
   * of the newest row leaves the next one unknowable when it was older than the
   * snapshot's newest and never seen; then `maxMessageIdUnknown` is set and the oracle
   * takes max_message_id from the fresh snapshot (Zulip's apply_event asks its database).
   */
  readonly rows: { readonly initialMax: number; readonly seen: Set<number>; readonly deleted: Set<number> };
  maxMessageIdUnknown: boolean;
  /** The client declared bulk_message_deletion: delete_message events must carry `message_ids`. */
  readonly bulkMessageDeletion: boolean;
}

// ---- small JSON accessors (the events are parsed JSON: unknown until checked) ----

export function isObj(x: unknown): x is Json {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
function obj(x: unknown, what: string): Json {
  if (!isObj(x)) throw new Error(`reducer: ${what} is not an object: ${JSON.stringify(x)}`);
  return x;
}
function arr(x: unknown, what: string): unknown[] {
  if (!Array.isArray(x)) throw new Error(`reducer: ${what} is not an array: ${JSON.stringify(x)}`);
  return x;
}
function num(x: unknown, what: string): number {
  if (typeof x !== "number") throw new Error(`reducer: ${what} is not a number: ${JSON.stringify(x)}`);
  return x;
}
function str(x: unknown, what: string): string {
  if (typeof x !== "string") throw new Error(`reducer: ${what} is not a string: ${JSON.stringify(x)}`);
  return x;
}
function objs(x: unknown, what: string): Json[] {
  return arr(x, what).map((v, i) => obj(v, `${what}[${i}]`));
}
function nums(x: unknown, what: string): number[] {
  return arr(x, what).map((v, i) => num(v, `${what}[${i}]`));
}
function clone<T>(x: T): T {
  return structuredClone(x);
}
const ascending = (a: number, b: number) => a - b;
/** Zulip compares topic names case-insensitively (parley folds them the same way for ASCII). */
const fold = (topic: string) => topic.toLowerCase();

// ---- building the state ----

/** A client state from a POST /register response. */
export function fromSnapshot(register: Json, options: { bulkMessageDeletion?: boolean } = {}): ClientState {
  const snapshot = clone(register);
  const userId = num(snapshot["user_id"], "user_id");
  const unread: RawUnread = { places: new Map(), personal: new Set(), wildcard: new Set() };
  const u = obj(snapshot["unread_msgs"], "unread_msgs");
  for (const s of objs(u["streams"], "unread_msgs.streams")) {
    for (const id of nums(s["unread_message_ids"], "unread_message_ids"))
      unread.places.set(id, {
        kind: "stream",
        streamId: num(s["stream_id"], "stream_id"),
        topic: str(s["topic"], "topic"),
      });
  }
  for (const p of objs(u["pms"], "unread_msgs.pms")) {
    for (const id of nums(p["unread_message_ids"], "unread_message_ids"))
      unread.places.set(id, { kind: "pm", otherUserId: num(p["other_user_id"], "other_user_id") });
  }
  for (const h of objs(u["huddles"], "unread_msgs.huddles")) {
    for (const id of nums(h["unread_message_ids"], "unread_message_ids"))
      unread.places.set(id, { kind: "huddle", userIdsString: str(h["user_ids_string"], "user_ids_string") });
  }
  // The snapshot cannot say which kind of mention each was; listed ones are kept listed.
  for (const id of nums(u["mentions"], "unread_msgs.mentions")) unread.personal.add(id);
  const left = new Set(objs(snapshot["unsubscribed"], "unsubscribed").map((s) => num(s["stream_id"], "stream_id")));
  const rows = {
    initialMax: num(snapshot["max_message_id"], "max_message_id"),
    seen: new Set<number>(),
    deleted: new Set<number>(),
  };
  return {
    userId,
    snapshot,
    unread,
    left,
    hiddenLeft: new Map(),
    rows,
    maxMessageIdUnknown: false,
    bulkMessageDeletion: options.bulkMessageDeletion ?? false,
  };
}

// ---- channel records: one channel appears in several lists ----

const CHANNEL_LISTS = ["subscriptions", "unsubscribed", "never_subscribed"] as const;

/** The snapshot's own array (mutations stick). */
function list(state: ClientState, name: string): Json[] {
  const items = state.snapshot[name];
  objs(items, name);
  return items as Json[];
}
function setList(state: ClientState, name: string, items: Json[]): void {
  state.snapshot[name] = items;
}

/** Every record of a channel: its Subscription/never_subscribed entry and its `streams` entry. */
function channelRecords(state: ClientState, streamId: number): Json[] {
  const out: Json[] = [];
  for (const name of [...CHANNEL_LISTS, "streams"])
    for (const item of list(state, name)) if (item["stream_id"] === streamId) out.push(item);
  return out;
}

/**
 * An event about a channel the client does not know reached someone who may not see
 * it (or the client missed the event that showed it): a failure either way.
 */
function requireKnown(
  state: ClientState,
  streamId: number,
  what: string,
  lists: readonly string[] = [...CHANNEL_LISTS, "streams"],
): void {
  for (const name of lists) if (list(state, name).some((item) => item["stream_id"] === streamId)) return;
  throw new Error(`reducer: ${what} about channel ${streamId}, which this client does not know (${lists.join("/")})`);
}

function removeChannelEverywhere(
  state: ClientState,
  streamIds: ReadonlySet<number>,
  lists: readonly string[] = [...CHANNEL_LISTS, "streams"],
): Json[] {
  const removed: Json[] = [];
  for (const name of lists) {
    const kept: Json[] = [];
    for (const item of list(state, name))
      (streamIds.has(num(item["stream_id"], "stream_id")) ? removed : kept).push(item);
    setList(state, name, kept);
  }
  return removed;
}

/** subscriber_count follows the subscriber list wherever the client holds one. */
function syncSubscriberCount(state: ClientState, streamId: number): void {
  const records = channelRecords(state, streamId);
  const withList = records.find((r) => Array.isArray(r["subscribers"]));
  if (!withList) return;
  const count = arr(withList["subscribers"], "subscribers").length;
  for (const r of records) r["subscriber_count"] = count;
}

/** Fields of a channel object that belong to the channel (not to one user's subscription). */
const PERSONAL_FIELDS = new Set([
  "color",
  "is_muted",
  "in_home_view",
  "pin_to_top",
  "desktop_notifications",
  "email_notifications",
  "push_notifications",
  "audible_notifications",
  "wildcard_mentions_notify",
  "subscribers",
  "partial_subscribers",
]);

function basicChannelOf(sub: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(sub)) if (!PERSONAL_FIELDS.has(k)) out[k] = clone(v);
  return out;
}

// ---- events ----

/** Applies one GET /events event to the state. Throws on an event it cannot understand. */
export function applyEvent(state: ClientState, event: Json): void {
  const type = str(event["type"], "event.type");
  switch (type) {
    case "heartbeat":
    case "typing":
    case "typing_edit_message":
    case "reaction":
    case "submessage":
    case "realm":
    case "restart":
      // No /register section holds these (reactions and submessages travel with messages).
      return;
    case "message":
      return applyMessage(state, event);
    case "update_message_flags":
      return applyFlags(state, event);
    case "update_message":
      return applyUpdateMessage(state, event);
    case "delete_message":
      return applyDeleteMessage(state, event);
    case "subscription":
      return applySubscription(state, event);
    case "stream":
      return applyStream(state, event);
    case "realm_user":
      return applyRealmUser(state, event);
    case "user_group":
      return applyUserGroup(state, event);
    case "user_topic":
      return applyUserTopic(state, event);
    case "realm_bot": {
      const op = str(event["op"], "realm_bot.op");
      const bots = arr(state.snapshot["realm_bots"] ?? [], "realm_bots");
      const bot = obj(event["bot"], "realm_bot.bot");
      const known = bots.some((b) => obj(b, "bot")["user_id"] === bot["user_id"]);
      if (op === "add") {
        if (known) throw new Error(`reducer: realm_bot add for a listed bot: ${JSON.stringify(event)}`);
        state.snapshot["realm_bots"] = [...bots, bot];
      } else if (op === "delete")
        state.snapshot["realm_bots"] = bots.filter((b) => obj(b, "bot")["user_id"] !== bot["user_id"]);
      else if (op === "update") {
        // Zulip's apply_event: the changed Bot object fields, for a bot the client lists.
        if (!known) throw new Error(`reducer: realm_bot update for an unlisted bot: ${JSON.stringify(event)}`);
        state.snapshot["realm_bots"] = bots.map((b) =>
          obj(b, "bot")["user_id"] === bot["user_id"] ? { ...obj(b, "bot"), ...clone(bot) } : b,
        );
      } else throw new Error(`reducer: unexpected realm_bot op: ${JSON.stringify(event)}`);
      return;
    }
    case "user_settings":
    case "realm_user_settings_defaults": {
      if (str(event["op"], `${type}.op`) !== "update")
        throw new Error(`reducer: unexpected ${type} op: ${JSON.stringify(event)}`);
      const property = str(event["property"], `${type}.property`);
      obj(state.snapshot[type], type)[property] = clone(event["value"]);
      // Zulip's apply_event: turning synchronization off drops the server's drafts.
      if (type === "user_settings" && property === "enable_drafts_synchronization" && event["value"] === false)
        state.snapshot["drafts"] = [];
      return;
    }
    case "drafts": {
      const op = str(event["op"], "drafts.op");
      const drafts = objs(state.snapshot["drafts"], "drafts");
      if (op === "add") state.snapshot["drafts"] = [...drafts, ...objs(event["drafts"], "drafts.drafts").map(clone)];
      else if (op === "update") {
        const draft = obj(event["draft"], "drafts.draft");
        state.snapshot["drafts"] = drafts.map((d) => (d["id"] === draft["id"] ? clone(draft) : d));
      } else if (op === "remove")
        state.snapshot["drafts"] = drafts.filter((d) => d["id"] !== num(event["draft_id"], "draft_id"));
      else throw new Error(`reducer: unexpected drafts op: ${JSON.stringify(event)}`);
      return;
    }
    case "device": {
      const op = str(event["op"], "device.op");
      const id = String(num(event["device_id"], "device.device_id"));
      const devices = obj(state.snapshot["devices"], "devices");
      if (op === "add")
        devices[id] = {
          push_key_id: null,
          push_token_id: null,
          pending_push_token_id: null,
          push_token_last_updated_timestamp: null,
          push_registration_error_code: null,
        };
      else if (op === "remove") delete devices[id];
      else if (op === "update") {
        const { type: _type, op: _op, id: _id, device_id: _deviceId, ...changes } = event;
        devices[id] = { ...obj(devices[id], "devices[id]"), ...clone(changes) };
      } else throw new Error(`reducer: unexpected device op: ${JSON.stringify(event)}`);
      break;
    }
    case "user_status": {
      // Zulip's apply_event: each field the event carries sets or ("", false) clears; an empty status goes.
      const statuses = obj(state.snapshot["user_status"], "user_status");
      const key = String(num(event["user_id"], "user_status.user_id"));
      const status: Json = { ...(isObj(statuses[key]) ? statuses[key] : {}) };
      if (event["away"] === true) status["away"] = true;
      else if (event["away"] === false) delete status["away"];
      if (typeof event["status_text"] === "string") {
        if (event["status_text"] === "") delete status["status_text"];
        else status["status_text"] = event["status_text"];
      }
      if (typeof event["emoji_name"] === "string") {
        for (const field of ["emoji_name", "emoji_code", "reaction_type"]) {
          if (event["emoji_name"] === "") delete status[field];
          else status[field] = str(event[field], `user_status.${field}`);
        }
      }
      if (Object.keys(status).length === 0) delete statuses[key];
      else statuses[key] = status;
      return;
    }
    case "muted_users":
      state.snapshot["muted_users"] = objs(event["muted_users"], "muted_users").map(clone);
      return;
    case "alert_words":
      state.snapshot["alert_words"] = arr(event["alert_words"], "alert_words").map((w) => str(w, "alert_words[]"));
      return;
    case "saved_snippets": {
      const op = str(event["op"], "saved_snippets.op");
      const snippets = objs(state.snapshot["saved_snippets"], "saved_snippets");
      if (op === "add")
        state.snapshot["saved_snippets"] = [...snippets, clone(obj(event["saved_snippet"], "saved_snippet"))];
      else if (op === "update") {
        const snippet = obj(event["saved_snippet"], "saved_snippet");
        state.snapshot["saved_snippets"] = snippets.map((x) => (x["id"] === snippet["id"] ? clone(snippet) : x));
      } else if (op === "remove")
        state.snapshot["saved_snippets"] = snippets.filter(
          (x) => x["id"] !== num(event["saved_snippet_id"], "saved_snippet_id"),
        );
      else throw new Error(`reducer: unexpected saved_snippets op: ${JSON.stringify(event)}`);
      return;
    }
    case "muted_topics":
      // The deprecated duplicate of user_topic events (its section is not compared).
      return;
    case "realm_emoji": {
      // individual_emoji_changes: add carries the emoji, update_one the changed fields.
      const all = obj(state.snapshot["realm_emoji"], "realm_emoji");
      if (event["op"] === "add") {
        const emoji = obj(event["emoji"], "emoji");
        all[String(emoji["id"])] = clone(emoji);
      } else if (event["op"] === "update_one") {
        const id = String(event["emoji_id"]);
        all[id] = { ...obj(all[id], `realm_emoji ${id}`), ...clone(obj(event["data"], "data")) };
      } else throw new Error(`realm_emoji op ${String(event["op"])} without the individual_emoji_changes format`);
      return;
    }
    case "realm_playgrounds":
      state.snapshot["realm_playgrounds"] = objs(event["realm_playgrounds"], "realm_playgrounds").map(clone);
      return;
    case "custom_profile_fields": {
      const fields = objs(event["fields"], "custom_profile_fields.fields").map(clone);
      state.snapshot["custom_profile_fields"] = fields;
      // A deleted field's values go with it (Zulip's clients drop them; no realm_user event says so).
      const live = new Set(fields.map((f) => String(f["id"])));
      for (const section of ["realm_users", "realm_non_active_users"])
        for (const u of objs(state.snapshot[section] ?? [], section)) {
          const data = u["profile_data"];
          if (data === undefined) continue;
          for (const key of Object.keys(obj(data, "profile_data")))
            if (!live.has(key)) delete obj(data, "profile_data")[key];
        }
      return;
    }
    case "realm_domains": {
      const domains = objs(state.snapshot["realm_domains"], "realm_domains");
      const op = str(event["op"], "realm_domains.op");
      if (op === "remove") {
        const gone = str(event["domain"], "realm_domains.domain");
        if (!domains.some((d) => d["domain"] === gone)) throw new Error(`reducer: remove of unknown domain ${gone}`);
        state.snapshot["realm_domains"] = domains.filter((d) => d["domain"] !== gone);
        return;
      }
      const changed = clone(obj(event["realm_domain"], "realm_domain"));
      const known = domains.find((d) => d["domain"] === changed["domain"]);
      if (op === "add" && !known) domains.push(changed);
      else if (op === "change" && known) Object.assign(known, changed);
      else throw new Error(`reducer: unexpected realm_domains event: ${JSON.stringify(event)}`);
      state.snapshot["realm_domains"] = domains;
      return;
    }
    case "realm_linkifiers":
      state.snapshot["realm_linkifiers"] = objs(event["realm_linkifiers"], "realm_linkifiers").map(clone);
      return;
    case "presence": {
      // Presence is kept by polling (the presences section is not compared); the event
      // must still name a user this client knows.
      const userId = num(
        event["user_id"] ?? Number(Object.keys(obj(event["presences"], "presence.presences"))[0]),
        "presence.user_id",
      );
      const known = [
        ...objs(state.snapshot["realm_users"], "realm_users"),
        ...objs(state.snapshot["realm_non_active_users"] ?? [], "realm_non_active_users"),
      ].some((u) => u["user_id"] === userId);
      if (!known) throw new Error(`reducer: presence of user ${userId}, whom this client does not know`);
      return;
    }
    case "channel_folder": {
      // Kept in Zulip's order (`order`, then ID), as register lists them.
      const folders = objs(state.snapshot["channel_folders"], "channel_folders");
      const op = str(event["op"], "channel_folder.op");
      if (op === "add") folders.push(clone(obj(event["channel_folder"], "channel_folder")));
      else if (op === "update") {
        const id = num(event["channel_folder_id"], "channel_folder_id");
        const folder = folders.find((f) => f["id"] === id);
        if (!folder) throw new Error(`reducer: channel_folder update for unknown folder ${id}`);
        Object.assign(folder, clone(obj(event["data"], "channel_folder.data")));
      } else if (op === "reorder") {
        const order = nums(event["order"], "channel_folder.order");
        for (const folder of folders) folder["order"] = order.indexOf(num(folder["id"], "id"));
      } else throw new Error(`reducer: unexpected channel_folder op: ${JSON.stringify(event)}`);
      folders.sort(
        (a, b) => num(a["order"], "order") - num(b["order"], "order") || num(a["id"], "id") - num(b["id"], "id"),
      );
      state.snapshot["channel_folders"] = folders;
      return;
    }
    case "default_streams": {
      const value = arr(event["default_streams"], "default_streams");
      state.snapshot["realm_default_streams"] = value.map((v) =>
        typeof v === "number" ? v : num(obj(v, "default stream")["stream_id"], "stream_id"),
      );
      return;
    }
    case "default_stream_groups":
      // The whole list, as Zulip sends it (role changes across the guest line send it to the user).
      state.snapshot["realm_default_stream_groups"] = arr(event["default_stream_groups"], "default_stream_groups");
      return;
    default:
      throw new Error(`reducer: unexpected event type ${type}: ${JSON.stringify(event)}`);
  }
}

function applyMessage(state: ClientState, event: Json): void {
  const message = obj(event["message"], "message");
  const id = num(message["id"], "message.id");
  state.snapshot["max_message_id"] = Math.max(num(state.snapshot["max_message_id"], "max_message_id"), id);
  state.rows.seen.add(id);
  const flags = arr(event["flags"], "flags").map((f) => str(f, "flag"));
  if (message["type"] === "stream") {
    const streamId = num(message["stream_id"], "stream_id");
    // A sender always gets its own message; a bot may post where only its owner is subscribed.
    if (message["sender_id"] !== state.userId) requireKnown(state, streamId, "message event");
    for (const r of channelRecords(state, streamId)) if (r["first_message_id"] === null) r["first_message_id"] = id;
  }
  if (flags.includes("read")) return;
  state.unread.places.set(id, placeOfMessage(state.userId, message));
  if (flags.includes("mentioned") || flags.includes("group_mentioned")) state.unread.personal.add(id);
  if (
    flags.includes("stream_wildcard_mentioned") ||
    flags.includes("topic_wildcard_mentioned") ||
    flags.includes("wildcard_mentioned")
  )
    state.unread.wildcard.add(id);
}

const PERSONAL_MENTION_FLAGS = ["mentioned", "group_mentioned"];
const WILDCARD_MENTION_FLAGS = ["stream_wildcard_mentioned", "topic_wildcard_mentioned", "wildcard_mentioned"];

/**
 * update_message, as a client keeps its unreads (zulip-flutter's Unreads): a content
 * edit's `flags` (the user's flags on `message_id`) say whether an unread message is
 * still a mention; a move (new_stream_id and/or subject) carries every unread message
 * of `message_ids` to the new channel and topic. rendering_only events change nothing
 * a snapshot holds.
 */
function applyUpdateMessage(state: ClientState, event: Json): void {
  if (event["rendering_only"] === true) return;
  const messageIds = nums(event["message_ids"], "update_message.message_ids");
  const flags = arr(event["flags"], "update_message.flags").map((f) => str(f, "flag"));
  if (typeof event["content"] === "string") {
    const id = num(event["message_id"], "update_message.message_id");
    if (state.unread.places.has(id)) {
      if (flags.some((f) => PERSONAL_MENTION_FLAGS.includes(f))) state.unread.personal.add(id);
      else state.unread.personal.delete(id);
      if (flags.some((f) => WILDCARD_MENTION_FLAGS.includes(f))) state.unread.wildcard.add(id);
      else state.unread.wildcard.delete(id);
    }
  }
  const newStreamId = event["new_stream_id"] === undefined ? undefined : num(event["new_stream_id"], "new_stream_id");
  const newTopic = event["subject"] === undefined ? undefined : str(event["subject"], "subject");
  if (newStreamId === undefined && newTopic === undefined) return;
  // Either channel may be one this client cannot see: Zulip tells the new channel's
  // subscribers of a move out of any channel with shared history, and a sender who was
  // never subscribed keeps the row of a message moved into a private channel.
  const origStreamId = num(event["stream_id"], "update_message.stream_id");
  for (const id of messageIds) {
    const place = state.unread.places.get(id);
    if (place?.kind !== "stream") continue;
    if (newStreamId !== undefined) place.streamId = newStreamId;
    if (newTopic !== undefined) place.topic = newTopic;
  }
  if (newStreamId === undefined || newStreamId === origStreamId) return;
  // Zulip's rows on a channel move, which a client can work out from its subscription
  // lists: whoever ever subscribed to the origin and is no active subscriber of the
  // destination loses the rows (read, starred and all); every active subscriber of a
  // protected-history destination gains rows marked read.
  const subscribed = (streamId: number) => list(state, "subscriptions").some((x) => x["stream_id"] === streamId);
  const everSubscribed = subscribed(origStreamId) || state.left.has(origStreamId);
  if (everSubscribed && !subscribed(newStreamId)) {
    forgetRows(state, messageIds);
    return;
  }
  const target = channelRecords(state, newStreamId)[0];
  if (subscribed(newStreamId) && target?.["history_public_to_subscribers"] === false) {
    for (const id of messageIds) state.rows.seen.add(id);
    state.snapshot["max_message_id"] = Math.max(num(state.snapshot["max_message_id"], "max_message_id"), ...messageIds);
  }
}

/**
 * The user's rows of `ids` are gone (deleted messages, or rows a move took): out of the
 * unreads, the mentions and the starred list; max_message_id falls back to the newest
 * row still known.
 */
function forgetRows(state: ClientState, ids: readonly number[]): void {
  for (const id of ids) {
    state.unread.places.delete(id);
    state.unread.personal.delete(id);
    state.unread.wildcard.delete(id);
    state.rows.seen.delete(id);
    state.rows.deleted.add(id);
  }
  const gone = new Set(ids);
  state.snapshot["starred_messages"] = nums(state.snapshot["starred_messages"], "starred_messages").filter(
    (id) => !gone.has(id),
  );
  const max = num(state.snapshot["max_message_id"], "max_message_id");
  if (!gone.has(max)) return;
  const { initialMax, seen, deleted } = state.rows;
  const candidates = [...seen, ...(deleted.has(initialMax) || initialMax < 0 ? [] : [initialMax])];
  const next = candidates.length === 0 ? -1 : Math.max(...candidates);
  // Rows older than the snapshot's newest one were never listed: past a deleted
  // initialMax the next row may be one of them.
  if (deleted.has(initialMax) && next < initialMax) state.maxMessageIdUnknown = true;
  state.snapshot["max_message_id"] = next;
}

/**
 * delete_message (both forms: `message_ids`, or `message_id` for clients without the
 * bulk_message_deletion capability): the messages leave the unreads, the mentions and
 * the starred list; max_message_id falls back to the newest row still known.
 */
function applyDeleteMessage(state: ClientState, event: Json): void {
  const bulk = event["message_ids"] !== undefined;
  if (bulk !== state.bulkMessageDeletion || (bulk && event["message_id"] !== undefined))
    throw new Error(`reducer: delete_message in the form the client did not ask for: ${JSON.stringify(event)}`);
  const ids = bulk
    ? nums(event["message_ids"], "delete_message.message_ids")
    : [num(event["message_id"], "delete_message.message_id")];
  const type = str(event["message_type"], "delete_message.message_type");
  if (type === "stream") requireKnown(state, num(event["stream_id"], "delete_message.stream_id"), "delete_message");
  forgetRows(state, ids);
}

function placeOfMessage(me: number, message: Json): UnreadPlace {
  if (message["type"] === "stream")
    return {
      kind: "stream",
      streamId: num(message["stream_id"], "stream_id"),
      topic: str(message["subject"], "subject"),
    };
  const ids = objs(message["display_recipient"], "display_recipient").map((r) => num(r["id"], "recipient id"));
  return placeOfDirect(
    me,
    ids.filter((u) => u !== me),
  );
}

/** Direct messages: one other participant (or none: to oneself) is a pm, more a huddle. */
function placeOfDirect(me: number, others: readonly number[]): UnreadPlace {
  if (others.length <= 1) return { kind: "pm", otherUserId: others[0] ?? me };
  return { kind: "huddle", userIdsString: [...others, me].sort(ascending).join(",") };
}

function applyFlags(state: ClientState, event: Json): void {
  const op = str(event["op"], "op");
  const flag = str(event["flag"], "flag");
  const messages = nums(event["messages"], "messages");
  // Starring (or marking unread) a message one has no row for gives one a (historical)
  // row, and max_message_id is the newest row: Zulip's apply_event misses this.
  if ((flag === "starred" && op === "add") || (flag === "read" && op === "remove")) {
    state.snapshot["max_message_id"] = Math.max(num(state.snapshot["max_message_id"], "max_message_id"), ...messages);
    for (const id of messages) state.rows.seen.add(id);
  }
  if (flag === "read" && op === "add") {
    const ids = event["all"] === true ? [...state.unread.places.keys()] : messages;
    for (const id of ids) {
      state.unread.places.delete(id);
      state.unread.personal.delete(id);
      state.unread.wildcard.delete(id);
    }
  } else if (flag === "read" && op === "remove") {
    const details = obj(event["message_details"], "message_details");
    for (const id of messages) {
      const d = obj(details[String(id)], `message_details[${id}]`);
      const place: UnreadPlace =
        d["type"] === "stream"
          ? { kind: "stream", streamId: num(d["stream_id"], "stream_id"), topic: str(d["topic"], "topic") }
          : placeOfDirect(state.userId, nums(d["user_ids"], "user_ids"));
      state.unread.places.set(id, place);
      // Zulip: `mentioned` says the message belongs in `mentions`.
      if (d["mentioned"] === true) state.unread.personal.add(id);
    }
  } else if (flag === "starred") {
    const starred = new Set(nums(state.snapshot["starred_messages"], "starred_messages"));
    for (const id of messages) {
      if (op === "add") starred.add(id);
      else starred.delete(id);
    }
    state.snapshot["starred_messages"] = [...starred].sort(ascending);
  }
}

function applySubscription(state: ClientState, event: Json): void {
  const op = str(event["op"], "op");
  switch (op) {
    case "add": {
      for (const sub of objs(event["subscriptions"], "subscriptions")) {
        const streamId = num(sub["stream_id"], "stream_id");
        removeChannelEverywhere(state, new Set([streamId]), CHANNEL_LISTS);
        state.left.delete(streamId);
        state.hiddenLeft.delete(streamId);
        list(state, "subscriptions").push(clone(sub));
        // The client's one record of the channel takes the fresh channel fields.
        const stream = list(state, "streams").find((s) => s["stream_id"] === streamId);
        if (stream) Object.assign(stream, basicChannelOf(sub));
        syncSubscriberCount(state, streamId);
      }
      return;
    }
    case "remove": {
      for (const gone of objs(event["subscriptions"], "subscriptions")) {
        const streamId = num(gone["stream_id"], "stream_id");
        requireKnown(state, streamId, "subscription remove", ["subscriptions"]);
        state.left.add(streamId);
        const moved = removeChannelEverywhere(state, new Set([streamId]), ["subscriptions"]);
        for (const sub of moved) {
          if (Array.isArray(sub["subscribers"]))
            sub["subscribers"] = nums(sub["subscribers"], "subscribers").filter((u) => u !== state.userId);
          list(state, "unsubscribed").push(sub);
        }
        syncSubscriberCount(state, streamId);
      }
      return;
    }
    case "update": {
      const streamId = num(event["stream_id"], "stream_id");
      const property = str(event["property"], "property");
      requireKnown(state, streamId, "subscription update", ["subscriptions"]);
      for (const sub of list(state, "subscriptions")) {
        if (sub["stream_id"] !== streamId) continue;
        sub[property] = clone(event["value"]);
        // Zulip sends both; a client keeping one of them keeps the other in step.
        if (property === "is_muted") sub["in_home_view"] = event["value"] !== true;
        if (property === "in_home_view") sub["is_muted"] = event["value"] !== true;
      }
      return;
    }
    case "peer_add":
    case "peer_remove": {
      const streamIds = new Set(nums(event["stream_ids"], "stream_ids"));
      const userIds = nums(event["user_ids"], "user_ids");
      for (const streamId of streamIds) requireKnown(state, streamId, op, CHANNEL_LISTS);
      for (const name of CHANNEL_LISTS) {
        for (const sub of list(state, name)) {
          const streamId = num(sub["stream_id"], "stream_id");
          if (!streamIds.has(streamId) || !Array.isArray(sub["subscribers"])) continue;
          const subscribers = new Set(nums(sub["subscribers"], "subscribers"));
          for (const u of userIds) {
            if (op === "peer_add") subscribers.add(u);
            else subscribers.delete(u);
          }
          sub["subscribers"] = [...subscribers].sort(ascending);
        }
      }
      for (const streamId of streamIds) syncSubscriberCount(state, streamId);
      return;
    }
    default:
      throw new Error(`reducer: unexpected subscription op ${op}`);
  }
}

function streamIdsOf(event: Json): Set<number> {
  if (Array.isArray(event["stream_ids"])) return new Set(nums(event["stream_ids"], "stream_ids"));
  return new Set(objs(event["streams"], "streams").map((s) => num(s["stream_id"], "stream_id")));
}

function applyStream(state: ClientState, event: Json): void {
  const op = str(event["op"], "op");
  if (op === "create") {
    for (const stream of objs(event["streams"], "streams")) {
      const streamId = num(stream["stream_id"], "stream_id");
      if (channelRecords(state, streamId).length > 0)
        throw new Error(`reducer: stream create for a channel the client already has: ${streamId}`);
      const basic = basicChannelOf(stream);
      // The channel as it stood at delivery: subscribers named by the event (a revealed
      // channel has some no other event names); later peer_add / subscription add are
      // applied as set additions, so a subscriber named twice counts once.
      const subscribers = Array.isArray(stream["subscribers"])
        ? nums(stream["subscribers"], "subscribers").sort(ascending)
        : [];
      const past = state.hiddenLeft.get(streamId);
      state.hiddenLeft.delete(streamId);
      if (past !== undefined)
        list(state, "unsubscribed").push({
          ...clone(past),
          ...clone(basic),
          subscribers,
          subscriber_count: subscribers.length,
        });
      else list(state, "never_subscribed").push({ ...clone(basic), subscribers, subscriber_count: subscribers.length });
      list(state, "streams").push({ ...clone(basic), subscriber_count: subscribers.length });
    }
    return;
  }
  if (op === "delete") {
    const ids = streamIdsOf(event);
    for (const streamId of ids) requireKnown(state, streamId, "stream delete");
    for (const record of removeChannelEverywhere(state, ids, ["unsubscribed"]))
      state.hiddenLeft.set(num(record["stream_id"], "stream_id"), record);
    removeChannelEverywhere(state, ids);
    return;
  }
  if (op === "update") {
    const streamId = num(event["stream_id"], "stream_id");
    const property = str(event["property"], "property");
    requireKnown(state, streamId, `stream update ${property}`);
    for (const r of channelRecords(state, streamId)) {
      r[property] = clone(event["value"]);
      if (property === "description" && "rendered_description" in event)
        r["rendered_description"] = event["rendered_description"];
      if (event["history_public_to_subscribers"] !== undefined)
        r["history_public_to_subscribers"] = event["history_public_to_subscribers"];
      if (event["is_web_public"] !== undefined) r["is_web_public"] = event["is_web_public"];
    }
    return;
  }
  throw new Error(`reducer: unexpected stream op ${op}`);
}

const ROLE_OWNER = 100;
const ROLE_ADMIN = 200;
const ROLE_MODERATOR = 300;
const ROLE_MEMBER = 400;
const ROLE_GUEST = 600;

function applyRealmUser(state: ClientState, event: Json): void {
  const op = str(event["op"], "op");
  const person = obj(event["person"], "person");
  const userId = num(person["user_id"], "person.user_id");
  if (op === "add") {
    // A limited guest gaining access gets the full user in place of its placeholder (Zulip's apply_event overwrites).
    const known = findUser(state, userId);
    if (known && !isPlaceholder(known.record)) throw new Error(`reducer: realm_user add for a known user ${userId}`);
    if (known)
      setList(
        state,
        known.list,
        list(state, known.list).filter((u) => u !== known.record),
      );
    list(state, person["is_active"] === false ? "realm_non_active_users" : "realm_users").push({
      ...clone(person),
      is_active: person["is_active"] ?? true,
    });
    return;
  }
  if (op === "remove") {
    // A limited guest lost access: Zulip's apply_event puts get_data_for_inaccessible_user in its place.
    const known = findUser(state, userId);
    if (!known || isPlaceholder(known.record))
      throw new Error(`reducer: realm_user remove for a user not seen ${JSON.stringify(event)}`);
    if (person["full_name"] !== "Unknown user")
      throw new Error(`reducer: remove naming the user ${JSON.stringify(event)}`);
    setList(
      state,
      known.list,
      list(state, known.list).filter((u) => u !== known.record),
    );
    list(state, "realm_users").push(placeholder(state, userId));
    return;
  }
  if (op !== "update") throw new Error(`reducer: unexpected realm_user op ${op}`);
  const user = findUser(state, userId);
  if (!user) throw new Error(`reducer: realm_user update for an unknown user ${userId}`);
  for (const [k, v] of Object.entries(person)) if (k !== "user_id" && k in user.record) user.record[k] = clone(v);
  // A custom profile field value: {id, value, rendered_value?}; null value removes it.
  if (person["custom_profile_field"] !== undefined) {
    const change = obj(person["custom_profile_field"], "custom_profile_field");
    const data = obj(user.record["profile_data"] ?? {}, "profile_data");
    const key = String(num(change["id"], "custom_profile_field.id"));
    if (change["value"] === null) delete data[key];
    else
      data[key] =
        change["rendered_value"] === undefined
          ? { value: change["value"] }
          : { value: change["value"], rendered_value: change["rendered_value"] };
    user.record["profile_data"] = data;
  }
  // Zulip's apply_event: new_email is the API email.
  if (typeof person["new_email"] === "string") user.record["email"] = person["new_email"];
  if (typeof person["role"] === "number") {
    const role = person["role"];
    user.record["is_owner"] = role === ROLE_OWNER;
    user.record["is_admin"] = role <= ROLE_ADMIN;
    user.record["is_guest"] = role === ROLE_GUEST;
  }
  if (typeof person["is_active"] === "boolean") {
    const from = person["is_active"] ? "realm_non_active_users" : "realm_users";
    const to = person["is_active"] ? "realm_users" : "realm_non_active_users";
    if (user.list === from) {
      setList(
        state,
        from,
        list(state, from).filter((u) => u !== user.record),
      );
      list(state, to).push(user.record);
    }
  }
  if (userId === state.userId) {
    for (const field of ["full_name", "email", "delivery_email"])
      if (typeof person[field] === "string") state.snapshot[field] = person[field];
    if (typeof person["new_email"] === "string") state.snapshot["email"] = person["new_email"];
    // The own avatar (register's avatar_url and avatar_url_medium) follows avatar updates.
    if (typeof person["avatar_url"] === "string")
      for (const field of ["avatar_url", "avatar_url_medium", "avatar_source"])
        if (field in person) state.snapshot[field] = person[field];
    if (typeof person["role"] === "number") {
      const role = person["role"];
      state.snapshot["is_owner"] = role === ROLE_OWNER;
      state.snapshot["is_admin"] = role <= ROLE_ADMIN;
      state.snapshot["is_moderator"] = role <= ROLE_MODERATOR; // moderators and above (FL 380)
      state.snapshot["is_guest"] = role === ROLE_GUEST;
      // Own permissions that follow from the role (as Zulip's apply_event recomputes them).
      const canCreate = role <= ROLE_MEMBER;
      for (const field of ["can_create_public_streams", "can_create_private_streams", "can_create_streams"])
        if (field in state.snapshot) state.snapshot[field] = canCreate;
      if ("can_subscribe_other_users" in state.snapshot)
        state.snapshot["can_subscribe_other_users"] = role <= ROLE_MEMBER;
      // The realm's can_invite_users_group is role:members.
      if ("can_invite_others_to_realm" in state.snapshot)
        state.snapshot["can_invite_others_to_realm"] = role <= ROLE_MEMBER;
      if ("can_create_web_public_streams" in state.snapshot)
        state.snapshot["can_create_web_public_streams"] =
          state.snapshot["realm_enable_spectator_access"] === true && role <= ROLE_MODERATOR;
    }
  }
}

/** Zulip's get_data_for_inaccessible_user, as register lists it for a limited guest. */
function placeholder(state: ClientState, userId: number): Json {
  const host = new URL(str(state.snapshot["realm_url"], "realm_url")).host;
  return {
    email: `user${userId}@${host}`,
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    role: ROLE_MEMBER,
    is_bot: false,
    full_name: "Unknown user",
    timezone: "",
    is_active: true,
    date_joined: "1970-01-01T00:00:00+00:00",
    delivery_email: null,
    avatar_url: "/static/images/unknown-user-avatar.png",
    profile_data: {},
    is_imported_stub: false,
  };
}

function isPlaceholder(record: Json): boolean {
  return record["full_name"] === "Unknown user" && record["date_joined"] === "1970-01-01T00:00:00+00:00";
}

function findUser(state: ClientState, userId: number): { record: Json; list: string } | undefined {
  for (const name of ["realm_users", "realm_non_active_users"]) {
    const record = list(state, name).find((u) => u["user_id"] === userId);
    if (record) return { record, list: name };
  }
  return undefined;
}

function applyUserGroup(state: ClientState, event: Json): void {
  const op = str(event["op"], "op");
  const groups = list(state, "realm_user_groups");
  if (op === "add") {
    const group = obj(event["group"], "group");
    if (groups.some((g) => g["id"] === group["id"]))
      throw new Error(`reducer: user_group add for a known group ${String(group["id"])}`);
    groups.push(clone(group));
    return;
  }
  const groupId = num(event["group_id"], "group_id");
  if (op === "remove") {
    setList(
      state,
      "realm_user_groups",
      groups.filter((g) => g["id"] !== groupId),
    );
    return;
  }
  const group = groups.find((g) => g["id"] === groupId);
  if (!group) throw new Error(`reducer: user_group ${op} for an unknown group ${groupId}`);
  const edit = (field: string, ids: number[], add: boolean) => {
    const set = new Set(nums(group[field], field));
    for (const id of ids) {
      if (add) set.add(id);
      else set.delete(id);
    }
    group[field] = [...set].sort(ascending);
  };
  switch (op) {
    case "update":
      for (const [k, v] of Object.entries(obj(event["data"], "data"))) group[k] = clone(v);
      return;
    case "add_members":
    case "remove_members":
      return edit("members", nums(event["user_ids"], "user_ids"), op === "add_members");
    case "add_subgroups":
    case "remove_subgroups":
      return edit(
        "direct_subgroup_ids",
        nums(event["direct_subgroup_ids"], "direct_subgroup_ids"),
        op === "add_subgroups",
      );
    default:
      throw new Error(`reducer: unexpected user_group op ${op}`);
  }
}

function applyUserTopic(state: ClientState, event: Json): void {
  const streamId = num(event["stream_id"], "stream_id");
  const topic = str(event["topic_name"], "topic_name");
  const policy = num(event["visibility_policy"], "visibility_policy");
  // No requireKnown: a user keeps topic policies in channels they left (Zulip's
  // get_user_topics has no subscription filter, and register lists them), and a topic
  // move migrates every holder's policy with its user_topic event (message_edit.py).
  const kept = list(state, "user_topics").filter(
    (t) => !(t["stream_id"] === streamId && fold(str(t["topic_name"], "topic_name")) === fold(topic)),
  );
  if (policy !== 0)
    kept.push({
      stream_id: streamId,
      topic_name: topic,
      last_updated: event["last_updated"],
      visibility_policy: policy,
    });
  setList(state, "user_topics", kept);
}

// ---- output ----

/** Is a channel message muted for the user now (channel mute, topic policies)? */
function isMuted(state: ClientState, streamId: number, topic: string): boolean {
  const sub = list(state, "subscriptions").find((s) => s["stream_id"] === streamId);
  const policy =
    list(state, "user_topics").find(
      (t) => t["stream_id"] === streamId && fold(str(t["topic_name"], "topic_name")) === fold(topic),
    )?.["visibility_policy"] ?? 0;
  if (policy === 1) return true;
  if (sub?.["is_muted"] === true) return policy !== 2 && policy !== 3;
  return false;
}

/** The unread_msgs section as a snapshot would show it now. */
export function unreadMsgs(state: ClientState): Json {
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const id of [...state.unread.places.keys()].sort(ascending)) {
    const place = state.unread.places.get(id)!;
    if (place.kind === "stream") {
      if (state.left.has(place.streamId)) continue;
      const muted = isMuted(state, place.streamId, place.topic);
      const k = `${place.streamId}\u0000${fold(place.topic)}`;
      let bucket = streams.get(k);
      if (!bucket) streams.set(k, (bucket = { stream_id: place.streamId, topic: place.topic, unread_message_ids: [] }));
      bucket.unread_message_ids.push(id);
      if (!muted) count++;
      if (state.unread.personal.has(id) || (state.unread.wildcard.has(id) && !muted)) mentions.push(id);
      continue;
    }
    count++;
    if (state.unread.personal.has(id)) mentions.push(id);
    if (place.kind === "pm") pms.set(place.otherUserId, [...(pms.get(place.otherUserId) ?? []), id]);
    else huddles.set(place.userIdsString, [...(huddles.get(place.userIdsString) ?? []), id]);
  }
  return {
    count,
    pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([s, ids]) => ({ user_ids_string: s, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: false,
  };
}

/**
 * The maintained sections in a canonical form: lists sorted where Zulip defines no
 * order (events append; /register sorts by name), ID lists ascending.
 */
export function comparable(snapshot: Json): Json {
  const out: Json = {};
  for (const key of MAINTAINED_SECTIONS) out[key] = clone(snapshot[key]);
  const byNum = (field: string) => (a: Json, b: Json) => num(a[field], field) - num(b[field], field);
  const sortIds = (x: Json, field: string) => {
    if (Array.isArray(x[field])) x[field] = nums(x[field], field).sort(ascending);
  };
  for (const name of ["realm_users", "realm_non_active_users"])
    out[name] = objs(out[name], name).sort(byNum("user_id"));
  if (Array.isArray(out["realm_bots"]))
    out["realm_bots"] = objs(out["realm_bots"], "realm_bots").sort(byNum("user_id"));
  for (const name of [...CHANNEL_LISTS, "streams"]) {
    const items = objs(out[name], name).sort(byNum("stream_id"));
    for (const item of items) sortIds(item, "subscribers");
    out[name] = items;
  }
  const groups = objs(out["realm_user_groups"], "realm_user_groups").sort(byNum("id"));
  for (const g of groups) {
    sortIds(g, "members");
    sortIds(g, "direct_subgroup_ids");
  }
  out["realm_user_groups"] = groups;
  out["user_topics"] = objs(out["user_topics"], "user_topics").sort(
    (a, b) =>
      num(a["stream_id"], "stream_id") - num(b["stream_id"], "stream_id") ||
      fold(str(a["topic_name"], "t")).localeCompare(fold(str(b["topic_name"], "t"))),
  );
  out["realm_default_streams"] = nums(out["realm_default_streams"], "realm_default_streams").sort(ascending);
  // Drafts are listed most recently edited first; the wire's whole-second timestamps can tie.
  out["drafts"] = objs(out["drafts"], "drafts").sort(
    (a, b) =>
      num(b["timestamp"], "timestamp") - num(a["timestamp"], "timestamp") || num(b["id"], "id") - num(a["id"], "id"),
  );
  out["saved_snippets"] = objs(out["saved_snippets"], "saved_snippets").sort(byNum("id"));
  out["starred_messages"] = nums(out["starred_messages"], "starred_messages").sort(ascending);
  const u = obj(out["unread_msgs"], "unread_msgs");
  u["streams"] = objs(u["streams"], "streams").sort(
    (a, b) =>
      num(a["stream_id"], "s") - num(b["stream_id"], "s") ||
      fold(str(a["topic"], "t")).localeCompare(fold(str(b["topic"], "t"))),
  );
  u["pms"] = objs(u["pms"], "pms").sort(byNum("other_user_id"));
  u["huddles"] = objs(u["huddles"], "huddles").sort((a, b) =>
    str(a["user_ids_string"], "s").localeCompare(str(b["user_ids_string"], "s")),
  );
  u["mentions"] = nums(u["mentions"], "mentions").sort(ascending);
  return out;
}

/** The client's state in the comparable form (unread_msgs aggregated now). */
export function toComparable(state: ClientState): Json {
  return comparable({ ...state.snapshot, unread_msgs: unreadMsgs(state) });
}
