/**
 * @module actions/guest-access-events
 * realm_user events for limited guests whose access to a user changes inside a write
 * (user-access.ts holds the rule). Zulip sends them only for subscription changes and
 * deactivations: a guest gaining access gets the user's full realm_user add, one losing
 * it a realm_user remove naming them "Unknown user". Runs inside the write, on the state
 * before it: the caller names the subscriptions the write starts or ends.
 */
import { ROLE, type User } from "../types.js";
import type { StoreState } from "../state.js";
import type { WriteContext } from "../write-coordinator.js";
import type { Audience } from "../events/types.js";
import { realmAudience, usersWhere } from "../events/audience.js";
import { accessChanges, conversationPartners, isAccessRestricted, type SubscriptionChange } from "../user-access.js";

/**
 * Zulip's send_user_creation_events_on_adding_subscriptions and
 * send_user_remove_events_on_removing_subscriptions, as one rule: each limited guest of
 * the changed channels, and each changed guest, hears of every user they gain or lose.
 * Bots are left out (a guest always sees them; Zulip's functions also send adds and
 * "Unknown user" removes for bots sharing the channel).
 */
export function emitGuestAccessChanges(
  state: StoreState,
  ctx: WriteContext,
  changes: readonly SubscriptionChange[],
): void {
  if (changes.length === 0) return;
  const { gained, lost } = accessChanges(state, changes);
  const active = (id: number) => state.users.get(id)?.isActive === true;
  for (const [userId, guests] of gained) {
    const person = state.users.get(userId);
    if (person !== undefined) ctx.emit({ type: "realm_user", op: "add", person }, () => usersWhere(guests, active));
  }
  for (const [userId, guests] of lost)
    ctx.emit({ type: "realm_user", op: "remove", userId }, () => usersWhere(guests, active));
}

/**
 * Who hears of a person's deactivation where guests are limited (Zulip's
 * send_events_for_user_deactivation): the realm_user update goes to the non-guests and
 * to the user's group-DM peers; the guests who shared a channel with them, and no group
 * DM, get a realm_user remove instead. Null where the realm lets everyone see everyone
 * (or for a bot): the update then goes to everyone who may see the user.
 */
export function deactivationAudiences(
  state: StoreState,
  user: User,
): { readonly update: () => Audience; readonly removeTo: readonly number[] } | null {
  if (user.isBot || !isAccessRestricted(state, user.realmId)) return null;
  const groupPeers = new Set<number>();
  for (const ids of conversationPartners(state, user.id)) if (ids.length > 2) for (const id of ids) groupPeers.add(id);
  const channelPeers = new Set<number>();
  for (const sub of state.channelDirectory.subscriptionsOf(user.id)) {
    if (!sub.active) continue;
    for (const id of state.activeSubscriberList(sub.channelId)) channelPeers.add(id);
  }
  const removeTo: number[] = [];
  for (const id of channelPeers) {
    const peer = state.users.get(id);
    if (id !== user.id && peer?.role === ROLE.GUEST && !groupPeers.has(id)) removeTo.push(id);
  }
  return {
    update: () => realmAudience(state, user.realmId, (u) => u.role !== ROLE.GUEST || groupPeers.has(u.id)),
    removeTo,
  };
}
