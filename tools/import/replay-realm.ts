/**
 * @module import/replay-realm
 * The realm's settings from zerver_realm's columns (Zulip's Realm field names), each set
 * through PATCH /realm's action as the owner, one at a time so that a value the engine
 * refuses is reported and the others still apply. A column the export lacks keeps
 * parley's default; channels and groups are mapped to their new IDs.
 */
import {
  EDIT_HISTORY_VISIBILITY,
  GROUP_SETTINGS,
  MESSAGE_POLICY_WIRE_NAMES,
  PERSONAL_SETTING_NAMES,
  REALM_GROUP_SETTING_WIRE_NAMES,
  REALM_PROPERTIES,
  REALM_PROPERTY_NAMES,
  realmChannelColumn,
  SUBSCRIPTION_NOTIFICATIONS,
  type EditHistoryVisibility,
  type MessagePolicyChanges,
  type SettingChanges,
  type RealmPropertyValue,
  type SubscriptionPropertyChange,
  type UpdateRealmInput,
} from "../../src/engine/index.js";
import { anonymousGroups, attempt, groupValue, reason, type SettingsReplay } from "./settings-replay.js";

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

/** Zulip's check_color. */
const HEX_COLOR = /^#([a-fA-F0-9]{3,6})$/;

/**
 * A zerver_subscription row's own settings as PATCH /users/me/subscriptions changes:
 * colour, pin and the notification overrides (null: the user's default, left alone).
 * Muting is set by the importer's own step.
 */
export function subscriptionProperties(row: Record<string, unknown>, channelId: number): SubscriptionPropertyChange[] {
  const changes: SubscriptionPropertyChange[] = [];
  const color = row.color;
  if (typeof color === "string" && HEX_COLOR.test(color)) changes.push({ channelId, property: "color", value: color });
  if (row.pin_to_top === true) changes.push({ channelId, property: "pin_to_top", value: true });
  for (const property of SUBSCRIPTION_NOTIFICATIONS) {
    const value = row[property];
    if (typeof value === "boolean") changes.push({ channelId, property, value });
  }
  return changes;
}

/** zerver_userprofile's settings columns, set as each person through PATCH /settings (bots have none). */
export function replayPersonalSettings(c: SettingsReplay): void {
  for (const u of c.data.users) {
    const userId = c.users.get(u.id);
    if (userId === undefined || u.is_bot === true) continue;
    const row = u as Record<string, unknown>;
    const settings: Record<string, boolean | number | string> = {};
    for (const name of PERSONAL_SETTING_NAMES) {
      const value = row[name];
      if (typeof value === "boolean" || typeof value === "number" || typeof value === "string") settings[name] = value;
    }
    if (Object.keys(settings).length === 0) continue;
    const apply = (changes: SettingChanges) => () => c.store.updateSettings(userId, { settings: changes });
    try {
      apply(settings as SettingChanges)();
      c.count("personal settings");
    } catch {
      // One refused value (a newer Zulip's choice parley lacks) keeps the others.
      for (const [name, value] of Object.entries(settings))
        attempt(c, "personal settings", `${u.email}: ${name}`, apply({ [name]: value } as SettingChanges));
    }
  }
}

/** Each named group's own permission settings, after every group and subgroup exists, as the owner. */
export function replayGroupSettings(c: SettingsReplay): void {
  const anonymous = anonymousGroups(c);
  for (const g of c.data.groups) {
    const groupId = c.groups.get(g.id);
    if (groupId === undefined) continue;
    for (const spec of GROUP_SETTINGS) {
      const raw = g.settings[spec.wire];
      if (raw === undefined) continue;
      attempt(c, "user group settings", `${g.name}: ${spec.wire}`, () =>
        c.store.updateGroup(c.ownerId, groupId, { settings: { [spec.field]: { new: groupValue(c, raw, anonymous) } } }),
      );
    }
  }
}
