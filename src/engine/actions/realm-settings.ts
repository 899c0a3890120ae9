/**
 * @module actions/realm-settings
 * PATCH /realm: an administrator changes organization settings (owners only for some),
 * every value checked before any is stored, one event per changed setting as Zulip sends
 * them (realm update for a property, realm update_dict for a permission group setting).
 * The message editing rules go through actions/realm-message-policy's checks and event.
 */
import { isAdmin } from "../access.js";
import { realmAudience } from "../events/audience.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import {
  OTHER_REALM_GROUP_SETTINGS,
  REALM_GROUP_SETTINGS,
  REALM_PROPERTIES,
  REALM_PROPERTY_NAMES,
  type RealmGroupSettingName,
  type RealmGroupSettingSpec,
  type RealmProperties,
  type RealmPropertyName,
  type RealmPropertyValue,
} from "../settings/realm-settings.js";
import { MESSAGE_POLICY_WIRE_NAMES, type MessagePolicyGroupSetting } from "../settings/message-policy.js";
import type { StoreState, WriteContext } from "../state.js";
import { ROLE, type GroupSettingChange, type GroupSettingValue, type Realm, type User } from "../types.js";
import { checkMessagePolicyChanges, realmMessagePolicy, type MessagePolicyChanges } from "./realm-message-policy.js";
import { emitFullMemberChanges } from "./full-members.js";
import { systemGroupId } from "./realms.js";
import { requireActiveUser } from "./users.js";

/** Zulip's MAX_REALM_NAME_LENGTH. */
export const MAX_REALM_NAME_LENGTH = 40;

export interface UpdateRealmInput {
  readonly name?: string;
  readonly topicsPolicy?: Realm["topicsPolicy"];
  readonly enableSpectatorAccess?: boolean;
  /** -1: none. */
  readonly newChannelAnnouncementsChannelId?: number;
  /** Channel properties take -1 for none. */
  readonly properties?: Partial<RealmProperties>;
  readonly messagePolicy?: MessagePolicyChanges;
  /** Every realm permission setting by Zulip's name, those of the message policy included. */
  readonly groups?: Readonly<Record<string, GroupSettingChange>>;
}

/** The realm's properties, defaults filled in. */
export function realmProperties(state: StoreState, realmId: number): RealmProperties {
  const stored = state.realms.get(realmId)?.properties ?? {};
  const out = {} as Record<RealmPropertyName, RealmPropertyValue>;
  for (const name of REALM_PROPERTY_NAMES) out[name] = stored[name] ?? REALM_PROPERTIES[name].byDefault;
  return out;
}

/** The realm's permission settings of REALM_GROUP_SETTINGS, defaults resolved to its system groups. */
export function realmGroupSettings(
  state: StoreState,
  realmId: number,
): Record<RealmGroupSettingName, GroupSettingValue> {
  const stored = state.realms.get(realmId)?.groupSettings ?? {};
  const out = {} as Record<RealmGroupSettingName, GroupSettingValue>;
  for (const [name, spec] of Object.entries(REALM_GROUP_SETTINGS) as [RealmGroupSettingName, RealmGroupSettingSpec][])
    out[name] = stored[name] ?? systemGroupId(state, realmId, spec.byDefault);
  return out;
}

const MESSAGE_POLICY_GROUP_BY_WIRE = new Map(
  (Object.entries(MESSAGE_POLICY_WIRE_NAMES) as [MessagePolicyGroupSetting, string][]).map(([k, v]) => [v, k]),
);
const GROUP_SETTING_BY_WIRE = new Map(
  (Object.entries(REALM_GROUP_SETTINGS) as [RealmGroupSettingName, RealmGroupSettingSpec][]).map(([k, v]) => [
    v.wire,
    k,
  ]),
);

/** Every realm permission setting PATCH /realm takes, by Zulip's name. */
export const REALM_GROUP_SETTING_WIRE_NAMES: readonly string[] = [
  ...GROUP_SETTING_BY_WIRE.keys(),
  ...Object.keys(OTHER_REALM_GROUP_SETTINGS),
];

function specOfGroupSetting(wire: string): RealmGroupSettingSpec {
  const key = GROUP_SETTING_BY_WIRE.get(wire);
  const spec = key !== undefined ? REALM_GROUP_SETTINGS[key] : OTHER_REALM_GROUP_SETTINGS[wire];
  if (!spec) throw new BadRequestError(`Invalid setting ${wire}`);
  return spec;
}

/** The current value of a realm permission setting by Zulip's name. */
export function realmGroupSettingByWire(state: StoreState, realmId: number, wire: string): GroupSettingValue {
  const key = GROUP_SETTING_BY_WIRE.get(wire);
  if (key !== undefined) return realmGroupSettings(state, realmId)[key];
  const realm = state.realms.get(realmId);
  const spec = specOfGroupSetting(wire);
  const own =
    wire === "can_add_custom_emoji_group"
      ? realm?.canAddCustomEmojiGroup
      : wire === "can_create_bots_group"
        ? realm?.canCreateBotsGroup
        : wire === "can_create_write_only_bots_group"
          ? realm?.canCreateWriteOnlyBotsGroup
          : undefined;
  if (own !== undefined) return own;
  const policyKey = MESSAGE_POLICY_GROUP_BY_WIRE.get(wire);
  if (policyKey !== undefined) return realmMessagePolicy(state, realmId)[policyKey];
  return systemGroupId(state, realmId, spec.byDefault);
}

/** Zulip's parse_group_setting_value: an anonymous group of one subgroup is that group. */
function normalized(value: GroupSettingValue): GroupSettingValue {
  if (typeof value === "number") return value;
  const members = [...new Set(value.directMembers)].sort((a, b) => a - b);
  const subgroups = [...new Set(value.directSubgroups)].sort((a, b) => a - b);
  if (members.length === 0 && subgroups.length === 1) return subgroups[0]!;
  return { directMembers: members, directSubgroups: subgroups };
}

function sameSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  return JSON.stringify(normalized(a)) === JSON.stringify(normalized(b));
}

/** Zulip's access_user_group_for_setting for a realm setting. */
function checkRealmGroupSetting(
  state: StoreState,
  realmId: number,
  spec: RealmGroupSettingSpec,
  raw: GroupSettingValue,
) {
  const value = normalized(raw);
  const named = (id: number) => {
    const group = state.groups.get(id);
    if (!group || group.realmId !== realmId) throw new BadRequestError("Invalid user group");
    if (group.deactivated) throw new BadRequestError("User group is deactivated.");
    return group;
  };
  if (typeof value === "number") {
    const group = named(value);
    const role = group.systemRole;
    const refuse = () => new BadRequestError(`'${spec.wire}' setting cannot be set to '${role}' group.`);
    if (spec.systemGroupsOnly) {
      if (role === null) throw new BadRequestError(`'${spec.wire}' must be a system user group.`);
      if (!spec.systemGroupsOnly.includes(role)) throw refuse();
    }
    if (role === "role:internet") throw refuse();
    if (role === "role:everyone" && !spec.allowEveryone) throw refuse();
    if (role === "role:nobody" && !spec.allowNobody) throw refuse();
    return value;
  }
  if (spec.systemGroupsOnly) throw new BadRequestError(`'${spec.wire}' must be a system user group.`);
  for (const id of value.directSubgroups) named(id);
  for (const id of value.directMembers) {
    const user = state.users.get(id);
    if (!user || user.realmId !== realmId || !user.isActive) throw new BadRequestError(`Invalid user ID: ${id}`);
  }
  if (!spec.allowNobody && value.directMembers.length === 0 && value.directSubgroups.length === 0)
    throw new BadRequestError(`'${spec.wire}' setting cannot be set to 'role:nobody' group.`);
  return value;
}

function checkChannel(state: StoreState, realmId: number, id: number): number | null {
  if (id === -1) return null;
  const channel = state.channels.get(id);
  if (!channel || channel.realmId !== realmId || channel.isArchived) throw new BadRequestError("Invalid channel ID");
  return id;
}

/**
 * Inside a channel's archiving (Zulip's maybe_set_moderation_or_announcement_channels_none):
 * the channel settings of the settings table (signup announcements, Zulip updates,
 * moderation requests) that named it name none now, each with its realm update event.
 * Answers the realm as it is after (the same object when nothing named the channel).
 */
export function withoutArchivedChannelSettingsInTxn(
  state: StoreState,
  ctx: WriteContext,
  realm: Realm,
  channelId: number,
): Realm {
  const cleared = REALM_PROPERTY_NAMES.filter(
    (name) => REALM_PROPERTIES[name].type === "channel" && realm.properties?.[name] === channelId,
  );
  if (cleared.length === 0) return realm;
  const properties = { ...realm.properties };
  for (const name of cleared) properties[name] = null;
  const next: Realm = { ...realm, properties };
  for (const name of cleared)
    ctx.emit({ type: "realm", op: "update_property", realm: next, property: REALM_PROPERTIES[name].wire }, () =>
      realmAudience(state, realm.id),
    );
  return next;
}

function requireOwner(actor: User): void {
  if (actor.role !== ROLE.OWNER)
    throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
}

/**
 * Changes the settings given (organization administrators; owners for Zulip's owner-only
 * ones). Returns Zulip's names of the settings that changed (a value equal to the current
 * one changes nothing and sends nothing).
 */
export function updateRealm(state: StoreState, actorId: number, input: UpdateRealmInput): Set<string> {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  const realm = state.realms.get(actor.realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  const changed = new Set<string>();
  const next: Realm = { ...realm };

  if (input.name !== undefined) {
    const name = input.name.trim();
    if (name.length === 0) throw new BadRequestError("Organization name can't be empty.");
    if ([...input.name].length > MAX_REALM_NAME_LENGTH)
      throw new BadRequestError(`name is too long (limit: ${MAX_REALM_NAME_LENGTH} characters)`);
    if (input.name !== realm.name) {
      next.name = input.name;
      changed.add("name");
    }
  }
  if (input.topicsPolicy !== undefined && input.topicsPolicy !== realm.topicsPolicy) {
    next.topicsPolicy = input.topicsPolicy;
    changed.add("topics_policy");
  }
  if (input.enableSpectatorAccess !== undefined && input.enableSpectatorAccess !== realm.enableSpectatorAccess) {
    next.enableSpectatorAccess = input.enableSpectatorAccess;
    changed.add("enable_spectator_access");
  }
  if (input.newChannelAnnouncementsChannelId !== undefined) {
    const id = checkChannel(state, realm.id, input.newChannelAnnouncementsChannelId);
    if (id !== (realm.newChannelAnnouncementsChannelId ?? null)) {
      next.newChannelAnnouncementsChannelId = id;
      changed.add("new_stream_announcements_stream_id");
    }
  }

  const current = realmProperties(state, realm.id);
  const properties: Partial<Record<RealmPropertyName, RealmPropertyValue>> = { ...realm.properties };
  for (const [name, raw] of Object.entries(input.properties ?? {}) as [RealmPropertyName, RealmPropertyValue][]) {
    if (raw === undefined) continue;
    const spec: { readonly wire: string; readonly type: string; readonly ownersOnly?: boolean } & {
      readonly check?: (v: RealmPropertyValue) => string | null;
    } = REALM_PROPERTIES[name];
    if (spec.ownersOnly) requireOwner(actor);
    const value = spec.type === "channel" && typeof raw === "number" ? checkChannel(state, realm.id, raw) : raw;
    const refusal = spec.check?.(value) ?? null;
    if (refusal !== null) throw new BadRequestError(refusal);
    if (value === current[name]) continue;
    properties[name] = value;
    changed.add(spec.wire);
  }
  next.properties = properties;

  const policy: { -readonly [K in keyof MessagePolicyChanges]: MessagePolicyChanges[K] } = {
    ...input.messagePolicy,
  };
  const currentPolicy = realmMessagePolicy(state, realm.id);
  for (const key of Object.keys(policy) as (keyof MessagePolicyChanges)[])
    if (policy[key] === currentPolicy[key]) delete policy[key];

  const groupSettings: Partial<Record<RealmGroupSettingName, GroupSettingValue>> = { ...realm.groupSettings };
  const changedGroups: string[] = [];
  for (const [wire, change] of Object.entries(input.groups ?? {})) {
    const spec = specOfGroupSetting(wire);
    if (spec.ownersOnly) requireOwner(actor);
    const now = realmGroupSettingByWire(state, realm.id, wire);
    if (change.old !== undefined && !sameSetting(change.old, now))
      throw new BadRequestError("'old' value does not match the expected value.");
    const value = checkRealmGroupSetting(state, realm.id, spec, change.new);
    if (sameSetting(value, now)) continue;
    const key = GROUP_SETTING_BY_WIRE.get(wire);
    const policyKey = MESSAGE_POLICY_GROUP_BY_WIRE.get(wire);
    if (key !== undefined) groupSettings[key] = value;
    else if (policyKey !== undefined) policy[policyKey] = value;
    else if (wire === "can_add_custom_emoji_group") next.canAddCustomEmojiGroup = value;
    else if (wire === "can_create_bots_group") next.canCreateBotsGroup = value;
    else next.canCreateWriteOnlyBotsGroup = value;
    if (policyKey === undefined) changedGroups.push(wire);
    changed.add(wire);
  }
  next.groupSettings = groupSettings;
  checkMessagePolicyChanges(state, realm, policy);
  const policyNames = (Object.keys(policy) as (keyof MessagePolicyChanges)[]).filter((k) => policy[k] !== undefined);
  for (const k of policyNames) changed.add(MESSAGE_POLICY_WIRE_NAMES[k]);
  if (policyNames.length > 0) next.messagePolicy = { ...realm.messagePolicy, ...policy };
  if (changed.size === 0) return changed;
  // Full membership is evaluated from now on at this change (actions/full-members).
  if (changed.has("waiting_period_threshold")) next.fullMembersAsOf = state.now();

  state.write((ctx) => {
    state.tables.realms.putSync(realm.id, next);
    ctx.afterCommit(() => state.indexRealm(next));
    const audience = () => realmAudience(state, realm.id);
    for (const property of changed) {
      if (changedGroups.includes(property) || MESSAGE_POLICY_GROUP_BY_WIRE.has(property)) continue;
      if (Object.values(MESSAGE_POLICY_WIRE_NAMES).includes(property)) continue;
      if (property === "new_stream_announcements_stream_id")
        ctx.emit({ type: "realm", op: "update_announcements_channel", realm: next }, audience);
      else ctx.emit({ type: "realm", op: "update_property", realm: next, property }, audience);
    }
    for (const setting of changedGroups)
      ctx.emit({ type: "realm", op: "update_group_setting", realm: next, setting }, audience);
    if (policyNames.length > 0)
      ctx.emit({ type: "realm", op: "update_message_policy", realm: next, settings: policyNames }, audience);
    if (changed.has("waiting_period_threshold")) emitFullMemberChanges(state, ctx, realm, next);
  });
  return changed;
}

/** A realm setting's value in Zulip's form for a realm update event (channels: -1 for none). */
export function realmPropertyValue(state: StoreState, realm: Realm, property: string): RealmPropertyValue {
  if (property === "name") return realm.name;
  if (property === "topics_policy") return realm.topicsPolicy;
  if (property === "enable_spectator_access") return realm.enableSpectatorAccess;
  const name = REALM_PROPERTY_NAMES.find((n) => REALM_PROPERTIES[n].wire === property);
  if (name === undefined) throw new BadRequestError(`Invalid setting ${property}`);
  const value = realm.properties?.[name] ?? REALM_PROPERTIES[name].byDefault;
  return REALM_PROPERTIES[name].type === "channel" ? (value ?? -1) : value;
}
