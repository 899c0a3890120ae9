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
import { userAudience, usersWhere } from "../events/audience.js";
import {
  accessChanges,
  accessibleUserIds,
  conversationPartners,
  isAccessRestricted,
  type SubscriptionChange,
} from "../user-access.js";

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
 * The limited guests whose only way to see `user` is a shared channel: those who lose
 * access when the user is deactivated (Zulip's send_events_for_user_deactivation sends
 * them a realm_user remove) and regain it on reactivation. Guests who share a direct
 * message with the user keep seeing them, deactivated (register lists DM partners
 * deactivated or not). Empty where the realm lets everyone see everyone, and for bots.
 */
export function guestsSharingOnlyChannels(state: StoreState, user: User): number[] {
  if (user.isBot || !isAccessRestricted(state, user.realmId)) return [];
  const dmPartners = new Set<number>();
  for (const ids of conversationPartners(state, user.id)) for (const id of ids) dmPartners.add(id);
  const channelPeers = new Set<number>();
  for (const sub of state.channelDirectory.subscriptionsOf(user.id)) {
    if (!sub.active) continue;
    for (const id of state.activeSubscriberList(sub.channelId)) channelPeers.add(id);
  }
  const out: number[] = [];
  for (const id of channelPeers) {
    const peer = state.users.get(id);
    if (id !== user.id && peer?.role === ROLE.GUEST && !dmPartners.has(id)) out.push(id);
  }
  return out;
}

/**
 * Zulip's get_recipients_for_user_creation_events: a direct message gives each limited
 * guest among its participants access to the others. Per user, the guests that gain
 * access to them; read before the message is indexed.
 */
export function directMessageAccessGains(state: StoreState, participants: readonly number[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const guestId of participants) {
    const guest = state.users.get(guestId);
    if (guest === undefined || !guest.isActive) continue;
    const visible = accessibleUserIds(state, guest);
    if (visible === null) continue;
    for (const id of participants) {
      if (visible.has(id) || state.users.get(id)?.isBot !== false) continue;
      const list = out.get(id);
      if (list === undefined) out.set(id, [guestId]);
      else list.push(guestId);
    }
  }
  return out;
}

/** The realm_user adds of directMessageAccessGains, in the message's write. */
export function emitDirectMessageAccessGains(
  state: StoreState,
  ctx: WriteContext,
  gains: ReadonlyMap<number, readonly number[]>,
): void {
  for (const [userId, guests] of gains) {
    const person = state.users.get(userId);
    if (person !== undefined)
      ctx.emit({ type: "realm_user", op: "add", person }, () =>
        usersWhere([...guests], (id) => state.users.get(id)?.isActive === true),
      );
  }
}

/**
 * A role crossing the guest line where guests are limited: the person hears of each
 * user they now see (full adds) or no longer see (removes), so their user list matches
 * what register would give them. Deviation: Zulip sends neither (do_change_user_role).
 */
export function emitOwnAccessChange(state: StoreState, ctx: WriteContext, before: User, after: User): void {
  if ((before.role === ROLE.GUEST) === (after.role === ROLE.GUEST)) return;
  if (!isAccessRestricted(state, after.realmId)) return;
  const saw = accessibleUserIds(state, before);
  const sees = accessibleUserIds(state, after);
  for (const id of state.usersOfRealm(after.realmId)) {
    const user = state.users.get(id);
    if (user === undefined || user.isBot || id === after.id) continue;
    const was = saw === null || saw.has(id);
    const is = sees === null || sees.has(id);
    if (is && !was) ctx.emit({ type: "realm_user", op: "add", person: user }, () => userAudience(after.id));
    else if (was && !is) ctx.emit({ type: "realm_user", op: "remove", userId: id }, () => userAudience(after.id));
  }
}
