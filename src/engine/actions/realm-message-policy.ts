/**
 * @module actions/realm-message-policy
 * Reading and changing the realm's message editing, moving and deletion rules
 * (settings/message-policy). PATCH /realm changes them through actions/realm-settings
 * with the checks here; the setter is the engine's way in for embedders and tests. Both
 * send Zulip's realm update_dict event so open clients follow.
 */
import { isAdmin } from "../access.js";
import { realmAudience } from "../events/audience.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import {
  MESSAGE_POLICY_DEFAULTS,
  MESSAGE_POLICY_GROUP_SETTINGS,
  type MessagePolicy as PolicyOf,
} from "../settings/message-policy.js";
import type { StoreState } from "../state.js";
import type { GroupSettingValue, Realm } from "../types.js";

export type MessagePolicy = PolicyOf<GroupSettingValue>;
export type MessagePolicyChanges = Partial<MessagePolicy>;
import { systemGroupId } from "./realms.js";
import { requireActiveUser } from "./users.js";

/** The realm's rules with Zulip's defaults filled in (group settings resolved to the realm's system groups). */
export function realmMessagePolicy(state: StoreState, realmId: number): MessagePolicy {
  const stored = state.realms.get(realmId)?.messagePolicy ?? {};
  const group = (name: (typeof MESSAGE_POLICY_GROUP_SETTINGS)[number]): GroupSettingValue =>
    stored[name] ?? systemGroupId(state, realmId, MESSAGE_POLICY_DEFAULTS[name]);
  return {
    ...MESSAGE_POLICY_DEFAULTS,
    ...stored,
    canMoveMessagesBetweenChannelsGroup: group("canMoveMessagesBetweenChannelsGroup"),
    canMoveMessagesBetweenTopicsGroup: group("canMoveMessagesBetweenTopicsGroup"),
    canResolveTopicsGroup: group("canResolveTopicsGroup"),
    canDeleteAnyMessageGroup: group("canDeleteAnyMessageGroup"),
    canDeleteOwnMessageGroup: group("canDeleteOwnMessageGroup"),
  };
}

const LIMIT_SETTINGS = [
  "messageContentEditLimitSeconds",
  "messageContentDeleteLimitSeconds",
  "moveMessagesWithinStreamLimitSeconds",
  "moveMessagesBetweenStreamsLimitSeconds",
] as const;

/** Zulip's checks of the rules' values (PATCH /realm checks them all before changing any). */
export function checkMessagePolicyChanges(state: StoreState, realm: Realm, changes: MessagePolicyChanges): void {
  for (const name of LIMIT_SETTINGS) {
    const value = changes[name];
    if (value !== undefined && value !== null && (!Number.isInteger(value) || value <= 0))
      throw new BadRequestError(`Invalid ${name}: a positive number of seconds, or null for no limit`);
  }
  const visibility = changes.messageEditHistoryVisibilityPolicy;
  if (visibility !== undefined && !["all", "moves", "none"].includes(visibility))
    throw new BadRequestError("Invalid message_edit_history_visibility_policy");
  for (const name of MESSAGE_POLICY_GROUP_SETTINGS) {
    const value = changes[name];
    if (value === undefined) continue;
    const groupIds = typeof value === "number" ? [value] : value.directSubgroups;
    const userIds = typeof value === "number" ? [] : value.directMembers;
    for (const id of groupIds)
      if (state.groups.get(id)?.realmId !== realm.id) throw new BadRequestError("Invalid user group");
    for (const id of userIds)
      if (state.users.get(id)?.realmId !== realm.id) throw new BadRequestError("Invalid user ID");
  }
}

/** Changes some of the rules (organization administrators, as in Zulip). Invalid values change nothing. */
export function setRealmMessagePolicy(
  state: StoreState,
  actorId: number,
  changes: MessagePolicyChanges,
): MessagePolicy {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor)) throw new PermissionDeniedError("Must be an organization administrator");
  const realm = state.realms.get(actor.realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  checkMessagePolicyChanges(state, realm, changes);
  const names = (Object.keys(changes) as (keyof MessagePolicy)[]).filter((k) => changes[k] !== undefined);
  if (names.length === 0) return realmMessagePolicy(state, realm.id);
  const next: Realm = { ...realm, messagePolicy: { ...realm.messagePolicy, ...changes } };
  state.write((ctx) => {
    state.tables.realms.putSync(realm.id, next);
    ctx.afterCommit(() => state.indexRealm(next));
    ctx.emit({ type: "realm", op: "update_message_policy", realm: next, settings: names }, () =>
      realmAudience(state, realm.id),
    );
  });
  return realmMessagePolicy(state, realm.id);
}
