/**
 * @module import/replay-realm
 * The realm's settings from zerver_realm's columns (Zulip's Realm field names), each set
 * through PATCH /realm's action as the owner, one at a time so that a value the engine
 * refuses is reported and the others still apply. A column the export lacks keeps
 * parley's default; channels and groups are mapped to their new IDs.
 */
import {
  EDIT_HISTORY_VISIBILITY,
  MESSAGE_POLICY_WIRE_NAMES,
  REALM_GROUP_SETTING_WIRE_NAMES,
  REALM_PROPERTIES,
  REALM_PROPERTY_NAMES,
  realmChannelColumn,
  type EditHistoryVisibility,
  type MessagePolicyChanges,
  type RealmPropertyValue,
  type UpdateRealmInput,
} from "../../src/engine/index.js";
import { anonymousGroups, attempt, groupValue, reason, type SettingsReplay } from "./replay-settings.js";

const TOPICS_POLICY: Record<number, "allow_empty_topic" | "disable_empty_topic"> = {
  2: "allow_empty_topic",
  3: "disable_empty_topic",
};

function isPropertyValue(value: unknown): value is RealmPropertyValue {
  return value === null || ["boolean", "number", "string"].includes(typeof value);
}

export function replayRealmSettingColumns(c: SettingsReplay): void {
  const row = c.data.realm as Record<string, unknown>;
  const inputs: [string, UpdateRealmInput][] = [];
  const channel = (value: unknown): number | undefined =>
    value === null ? -1 : typeof value === "number" ? c.channels.get(value) : undefined;

  if (typeof row.enable_spectator_access === "boolean")
    inputs.push(["enable_spectator_access", { enableSpectatorAccess: row.enable_spectator_access }]);
  const announcements = channel(row.new_stream_announcements_stream);
  if (announcements !== undefined)
    inputs.push(["new_stream_announcements_stream", { newChannelAnnouncementsChannelId: announcements }]);
  const topics = typeof row.topics_policy === "number" ? TOPICS_POLICY[row.topics_policy] : undefined;
  if (topics !== undefined) inputs.push(["topics_policy", { topicsPolicy: topics }]);

  for (const name of REALM_PROPERTY_NAMES) {
    const spec = REALM_PROPERTIES[name];
    const column = spec.type === "channel" ? realmChannelColumn(spec.wire) : spec.wire;
    if (!(column in row)) continue;
    const raw = row[column];
    const value = spec.type === "channel" ? channel(raw) : raw;
    if (value !== undefined && isPropertyValue(value)) inputs.push([column, { properties: { [name]: value } }]);
  }

  const visibilityByCode = new Map(
    (Object.entries(EDIT_HISTORY_VISIBILITY) as [EditHistoryVisibility, number][]).map(([k, v]) => [v, k]),
  );
  for (const [key, wire] of Object.entries(MESSAGE_POLICY_WIRE_NAMES) as [keyof MessagePolicyChanges, string][]) {
    if (REALM_GROUP_SETTING_WIRE_NAMES.includes(wire) || !(wire in row)) continue;
    const raw = row[wire];
    const value = key === "messageEditHistoryVisibilityPolicy" ? visibilityByCode.get(Number(raw)) : raw;
    if (value !== undefined) inputs.push([wire, { messagePolicy: { [key]: value } as MessagePolicyChanges }]);
  }

  const anonymous = anonymousGroups(c);
  for (const wire of REALM_GROUP_SETTING_WIRE_NAMES) {
    const raw = row[wire];
    if (typeof raw !== "number") continue;
    try {
      inputs.push([wire, { groups: { [wire]: { new: groupValue(c, raw, anonymous) } } }]);
    } catch (error) {
      c.skip(`realm setting refused: ${reason(error)}`, wire);
    }
  }

  for (const [column, input] of inputs)
    attempt(c, "realm settings", column, () => {
      c.store.updateRealm(c.ownerId, input);
    });
}

/** zerver_defaultstream: set while the channels are active (Zulip keeps no archived channel as default). */
export function replayDefaultChannels(c: SettingsReplay): void {
  for (const d of c.data.defaultStreams) {
    const channelId = c.channels.get(d.stream);
    if (channelId === undefined) {
      c.skip("default channel not in the export", String(d.stream));
      continue;
    }
    attempt(c, "default channels", String(d.stream), () => c.store.setDefaultChannel(c.ownerId, channelId, true));
  }
}
