/**
 * @module http/endpoints/realm/update-realm
 * PATCH /realm — https://zulip.com/api/update-realm
 * Organization settings (administrators; owners for Zulip's owner-only ones). The rules
 * and the table of settings are the engine's (actions/realm-settings). Answers the
 * changed settings as Zulip does: "updated" for a text, the new value otherwise.
 *
 * Not taken: authentication_methods (parley has password login only), string_id (no
 * demo organizations), bot_creation_policy and the other policies Zulip replaced with
 * group settings.
 */
import { z } from "zod";
import {
  BadRequestError,
  MAX_REALM_NAME_LENGTH,
  REALM_GROUP_SETTING_WIRE_NAMES,
  REALM_PROPERTIES,
  REALM_PROPERTY_NAMES,
  type GroupSettingChange,
  type MessagePolicyChanges,
  type RealmPropertyName,
  type RealmPropertyValue,
} from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { groupSettingFromWire, groupSettingToWire } from "../../../wire/channel.js";
import { checkSettingSize } from "../user-groups/limits.js";
import { messagePolicyToWire } from "../../../wire/message-policy.js";

const changeSchema = z.object({ new: j.groupSetting(), old: j.groupSetting().optional() }).strict();
/** Zulip's MAX_REALM_DESCRIPTION_LENGTH and welcome_message_custom_text's limit. */
const TEXT_LIMITS: Readonly<Record<string, number>> = {
  description: 1000,
  welcome_message_custom_text: 8000,
  default_code_block_language: 100,
  default_language: 10,
};

type Schema = z.ZodType<unknown>;

function propertyParam(name: RealmPropertyName): Schema {
  const { wire, type } = REALM_PROPERTIES[name];
  if (wire === "message_retention_days") return p.intOrString().optional();
  if (wire === "jitsi_server_url") return p.json(z.string()).optional();
  if (type === "bool") return p.bool().optional();
  if (type === "int") return p.int().optional();
  if (type === "channel") return ref(p.int(), "channel").optional();
  return p.str({ maxLength: TEXT_LIMITS[wire] ?? 1000 }).optional();
}

const propertyParams = Object.fromEntries(
  REALM_PROPERTY_NAMES.map((name) => [REALM_PROPERTIES[name].wire, propertyParam(name)]),
);
const groupParams = Object.fromEntries(
  REALM_GROUP_SETTING_WIRE_NAMES.map((wire) => [wire, ref(p.json(changeSchema), "groupSettingChange").optional()]),
);

/** Zulip's limits take seconds or "unlimited" (null); zero or less is refused. */
const limitParam = () => p.intOrString().optional();
const LIMITS = {
  message_content_edit_limit_seconds: "messageContentEditLimitSeconds",
  message_content_delete_limit_seconds: "messageContentDeleteLimitSeconds",
  move_messages_within_stream_limit_seconds: "moveMessagesWithinStreamLimitSeconds",
  move_messages_between_streams_limit_seconds: "moveMessagesBetweenStreamsLimitSeconds",
} as const;

/** An integer or Zulip's special word (given bare or as a JSON string). */
function intOrSpecial(wire: string, value: unknown, special: string, meaning: number | null): number | null {
  if (typeof value === "number") {
    if (value <= 0 && !(meaning === -1 && value === -1)) throw new BadRequestError(`Bad value for '${wire}': ${value}`);
    return value;
  }
  const word = typeof value === "string" ? value.replace(/^"(.*)"$/, "$1") : "";
  if (word === special) return meaning;
  throw new BadRequestError(`Bad value for '${wire}': ${String(value)}`);
}

export default defineEndpoint({
  method: "PATCH",
  path: "/realm",
  auth: "user",
  params: {
    name: p.str({ maxLength: MAX_REALM_NAME_LENGTH }).optional(),
    topics_policy: p.oneOf(["allow_empty_topic", "disable_empty_topic"] as const).optional(),
    mandatory_topics: p.bool().optional(),
    enable_spectator_access: p.bool().optional(),
    new_stream_announcements_stream_id: ref(p.int(), "channel").optional(),
    allow_message_editing: p.bool().optional(),
    allow_edit_history: p.bool().optional(),
    message_edit_history_visibility_policy: p.oneOf(["all", "moves", "none"] as const).optional(),
    message_content_edit_limit_seconds: limitParam(),
    message_content_delete_limit_seconds: limitParam(),
    move_messages_within_stream_limit_seconds: limitParam(),
    move_messages_between_streams_limit_seconds: limitParam(),
    ...propertyParams,
    ...groupParams,
  },
  handler(ctx, raw) {
    const input = raw as Readonly<Record<string, unknown>>;
    const properties: Partial<Record<RealmPropertyName, RealmPropertyValue>> = {};
    for (const name of REALM_PROPERTY_NAMES) {
      const wire = REALM_PROPERTIES[name].wire;
      const value = input[wire];
      if (value === undefined) continue;
      if (wire === "message_retention_days") properties[name] = intOrSpecial(wire, value, "unlimited", -1);
      else if (wire === "jitsi_server_url") properties[name] = value === "default" ? null : (value as string);
      else properties[name] = value as RealmPropertyValue;
    }
    const policy: { -readonly [K in keyof MessagePolicyChanges]: MessagePolicyChanges[K] } = {};
    if (input["allow_message_editing"] !== undefined)
      policy.allowMessageEditing = input["allow_message_editing"] as boolean;
    if (input["allow_edit_history"] !== undefined)
      policy.messageEditHistoryVisibilityPolicy = input["allow_edit_history"] === true ? "all" : "none";
    const visibility = input["message_edit_history_visibility_policy"];
    if (visibility !== undefined) policy.messageEditHistoryVisibilityPolicy = visibility as "all" | "moves" | "none";
    for (const [wire, key] of Object.entries(LIMITS))
      if (input[wire] !== undefined) policy[key] = intOrSpecial(wire, input[wire], "unlimited", null);
    const groups: Record<string, GroupSettingChange> = {};
    for (const wire of REALM_GROUP_SETTING_WIRE_NAMES) {
      const change = input[wire] as z.infer<typeof changeSchema> | undefined;
      if (change === undefined) continue;
      const next = groupSettingFromWire(change.new);
      checkSettingSize(`${wire}["new"]`, next);
      groups[wire] = { new: next, ...(change.old !== undefined ? { old: groupSettingFromWire(change.old) } : {}) };
    }
    const mandatory = input["mandatory_topics"];
    const topicsPolicy =
      (input["topics_policy"] as "allow_empty_topic" | "disable_empty_topic" | undefined) ??
      (mandatory === undefined ? undefined : mandatory === true ? "disable_empty_topic" : "allow_empty_topic");
    const changed = ctx.store.updateRealm(ctx.user.id, {
      ...(input["name"] !== undefined ? { name: input["name"] as string } : {}),
      ...(topicsPolicy !== undefined ? { topicsPolicy } : {}),
      ...(input["enable_spectator_access"] !== undefined
        ? { enableSpectatorAccess: input["enable_spectator_access"] as boolean }
        : {}),
      ...(input["new_stream_announcements_stream_id"] !== undefined
        ? { newChannelAnnouncementsChannelId: input["new_stream_announcements_stream_id"] as number }
        : {}),
      properties,
      messagePolicy: policy,
      groups,
    });
    const out: Record<string, unknown> = {};
    const realmId = ctx.user.realmId;
    const policyWire = messagePolicyToWire(ctx.store.realmMessagePolicy(realmId));
    for (const wire of changed) {
      const property = REALM_PROPERTY_NAMES.find((n) => REALM_PROPERTIES[n].wire === wire);
      if (wire in groups) out[wire] = groupSettingToWire(ctx.store.realmGroupSetting(realmId, wire));
      else if (wire in policyWire) out[wire] = policyWire[wire];
      else if (property !== undefined) {
        const value = properties[property];
        out[wire] = typeof value === "string" ? "updated" : value;
      } else if (wire === "new_stream_announcements_stream_id") out[wire] = input[wire];
      else if (wire === "enable_spectator_access") out[wire] = input[wire];
      // name and topics_policy are texts.
      else out[wire] = "updated";
    }
    return out;
  },
});
