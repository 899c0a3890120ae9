/**
 * @module export/zulip-realm-columns
 * The realm's settings as zerver_realm columns (Zulip's Realm model field names): the
 * PATCH /realm properties, spectator access, the announcement and moderation channels
 * (foreign keys without `_id`, as Django serializes them), the message editing rules
 * (the history policy as Zulip's integer enum) and every permission group setting as a
 * UserGroup ID, so tools/import can set each one back through PATCH /realm's action.
 */
import { REALM_GROUP_SETTING_WIRE_NAMES, realmGroupSettingByWire, realmProperties } from "../actions/realm-settings.js";
import { realmMessagePolicy } from "../actions/realm-message-policy.js";
import { REALM_PROPERTIES, REALM_PROPERTY_NAMES } from "../settings/realm-settings.js";
import { MESSAGE_POLICY_GROUP_SETTINGS, MESSAGE_POLICY_WIRE_NAMES } from "../settings/message-policy.js";
import type { StoreState } from "../state.js";
import type { GroupSettingValue } from "../types.js";

/** Zulip's MessageEditHistoryVisibilityPolicyEnum. */
export const EDIT_HISTORY_VISIBILITY = { all: 1, moves: 2, none: 3 } as const;

/** A channel setting's zerver_realm column: Zulip's model field (`…_stream`, `…_channel`). */
export function realmChannelColumn(wire: string): string {
  return wire.replace(/_id$/, "");
}

export function realmSettingColumns(
  state: StoreState,
  realmId: number,
  groupIdOf: (value: GroupSettingValue) => number,
): Record<string, unknown> {
  const realm = state.realms.get(realmId);
  if (!realm) return {};
  const out: Record<string, unknown> = {
    enable_spectator_access: realm.enableSpectatorAccess,
    new_stream_announcements_stream: realm.newChannelAnnouncementsChannelId ?? null,
  };
  const properties = realmProperties(state, realmId);
  for (const name of REALM_PROPERTY_NAMES) {
    const spec = REALM_PROPERTIES[name];
    out[spec.type === "channel" ? realmChannelColumn(spec.wire) : spec.wire] = properties[name];
  }
  const policy = realmMessagePolicy(state, realmId);
  const groupKeys: readonly string[] = MESSAGE_POLICY_GROUP_SETTINGS;
  for (const [key, wire] of Object.entries(MESSAGE_POLICY_WIRE_NAMES) as [keyof typeof policy, string][]) {
    if (groupKeys.includes(key)) continue;
    const value = policy[key];
    out[wire] = key === "messageEditHistoryVisibilityPolicy" ? EDIT_HISTORY_VISIBILITY[policy[key]] : value;
  }
  for (const wire of REALM_GROUP_SETTING_WIRE_NAMES)
    out[wire] = groupIdOf(realmGroupSettingByWire(state, realmId, wire));
  return out;
}
