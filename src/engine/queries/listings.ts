/**
 * @module queries/listings
 * What a user may list — channels, subscriptions, users, groups, topic policies —
 * with the access rules applied here, so the HTTP layer and embedders get the same
 * answers. Records are returned as the engine holds them; callers render them.
 */
import {
  canAccessChannelHistory,
  canSeeChannel,
  canSeeSubscribers,
  isAdmin,
  isSubscribed,
  membersOf,
} from "../access.js";
import { BadRequestError } from "../errors.js";
import type { ListingReader } from "../directory.js";
import type { Channel, Subscription, User, UserGroup, UserTopic } from "../types.js";
import { ROLE } from "../types.js";

/** Zulip sorts channel lists by name (code point order). */
function byName(a: { readonly name: string }, b: { readonly name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export interface GetChannelsInput {
  readonly includePublic?: boolean;
  readonly includeWebPublic?: boolean;
  readonly includeSubscribed?: boolean;
  readonly excludeArchived?: boolean;
  readonly includeAll?: boolean;
  readonly includeOwnerSubscribed?: boolean;
  readonly includeCanAccessContent?: boolean;
}

/**
 * Zulip's do_get_streams: the union of the requested classes, or every channel with
 * includeAll (administrators only), then only channels the caller can see; by name.
 */
export function getChannels(state: ListingReader, user: User, input: GetChannelsInput): Channel[] {
  const o = {
    includePublic: true,
    includeWebPublic: false,
    includeSubscribed: true,
    excludeArchived: true,
    includeAll: false,
    includeOwnerSubscribed: false,
    includeCanAccessContent: false,
    ...input,
  };
  if (o.includeAll && !isAdmin(user)) throw new BadRequestError("User not authorized for this query");
  const owner = user.isBot && user.botOwnerId !== null ? state.userDirectory.get(user.botOwnerId) : undefined;
  const wanted = (channel: Channel): boolean => {
    if (o.includeAll) return true;
    if (o.includeSubscribed && isSubscribed(state, user.id, channel.id)) return true;
    if (o.includePublic && !channel.inviteOnly) return true;
    if (o.includeWebPublic && channel.isWebPublic) return true;
    if (o.includeOwnerSubscribed && owner && isSubscribed(state, owner.id, channel.id)) return true;
    if (
      o.includeCanAccessContent &&
      (isSubscribed(state, user.id, channel.id) || canAccessChannelHistory(state, user, channel))
    )
      return true;
    return false;
  };
  const out: Channel[] = [];
  for (const channel of state.channelDirectory.all()) {
    if (channel.realmId !== user.realmId) continue;
    if (o.excludeArchived && channel.isArchived) continue;
    if (wanted(channel) && canSeeChannel(state, user, channel)) out.push(channel);
  }
  return out.sort(byName);
}

/** The channels the user can see (register's `streams`), by name. */
export function visibleChannels(state: ListingReader, user: User, includeArchived: boolean): Channel[] {
  const out: Channel[] = [];
  for (const c of state.channelDirectory.all())
    if (c.realmId === user.realmId && (includeArchived || !c.isArchived) && canSeeChannel(state, user, c)) out.push(c);
  return out.sort(byName);
}

export interface SubscribedChannel {
  readonly subscription: Subscription;
  readonly channel: Channel;
}

export interface SubscriptionLists {
  readonly subscribed: readonly SubscribedChannel[];
  readonly unsubscribed: readonly SubscribedChannel[];
  /** Channels the user can see and never subscribed to. */
  readonly neverSubscribed: readonly Channel[];
}

/** register's subscriptions / unsubscribed / never_subscribed, each by name. */
export function subscriptionLists(state: ListingReader, user: User, includeArchived: boolean): SubscriptionLists {
  const subscribed: SubscribedChannel[] = [];
  const unsubscribed: SubscribedChannel[] = [];
  const never: Channel[] = [];
  for (const channel of state.channelDirectory.all()) {
    if (channel.realmId !== user.realmId || (channel.isArchived && !includeArchived)) continue;
    const subscription = state.channelDirectory.subscription(user.id, channel.id);
    if (subscription?.active) subscribed.push({ subscription, channel });
    // A past subscription is listed only while the user may still see the channel:
    // leaving a private channel (or, for a guest, any channel) hides it, as the
    // stream delete event sent then tells clients.
    else if (subscription && canSeeChannel(state, user, channel)) unsubscribed.push({ subscription, channel });
    else if (!subscription && canSeeChannel(state, user, channel)) never.push(channel);
  }
  const sort = (list: SubscribedChannel[]) => list.sort((a, b) => byName(a.channel, b.channel));
  return { subscribed: sort(subscribed), unsubscribed: sort(unsubscribed), neverSubscribed: never.sort(byName) };
}

/** Active users with an active subscription, ascending (Zulip lists only active users). */
export function activeSubscriberIds(state: ListingReader, channelId: number): readonly number[] {
  return state.activeSubscriberList(channelId);
}

/** The channel's subscriber IDs if the viewer may list them, else undefined. */
export function subscribersVisibleTo(
  state: ListingReader,
  viewer: User,
  channel: Channel,
): readonly number[] | undefined {
  return canSeeSubscribers(state, viewer, channel) ? activeSubscriberIds(state, channel.id) : undefined;
}

/** Every user of the realm (active and deactivated), by ascending ID. */
export function realmUsers(state: ListingReader, realmId: number): User[] {
  const out: User[] = [];
  for (const id of state.userDirectory.ofRealm(realmId)) {
    const user = state.userDirectory.get(id);
    if (user) out.push(user);
  }
  return out.sort((a, b) => a.id - b.id);
}

/** The realm's bots (active and deactivated), by ascending ID, without walking every user. */
export function realmBots(state: ListingReader, realmId: number): User[] {
  const out: User[] = [];
  for (const id of state.userDirectory.botsOf(realmId)) {
    const user = state.userDirectory.get(id);
    if (user?.isBot) out.push(user);
  }
  return out.sort((a, b) => a.id - b.id);
}

/** GET /users: the realm's users, or those named (each must be of the realm). */
export function listUsers(state: ListingReader, viewer: User, ids?: readonly number[]): User[] {
  const users = realmUsers(state, viewer.realmId);
  if (ids === undefined) return users;
  const wanted = new Set(ids);
  for (const id of wanted) {
    const user = state.userDirectory.get(id);
    if (!user || user.realmId !== viewer.realmId) throw new BadRequestError(`Invalid user ID: ${id}`);
  }
  return users.filter((u) => wanted.has(u.id));
}

/** IDs of the realm's default channels, ascending; none for guests (as Zulip). */
export function defaultChannelIds(state: ListingReader, user: User): number[] {
  if (user.role === ROLE.GUEST) return [];
  const ids: number[] = [];
  for (const c of state.channelDirectory.all())
    if (c.realmId === user.realmId && c.isDefault && !c.isArchived) ids.push(c.id);
  return ids.sort((a, b) => a - b);
}

export interface GroupListing {
  readonly group: UserGroup;
  /** Direct members; for system groups, the users their roles put in them. */
  readonly members: readonly number[];
}

/** The realm's user groups by ID; deactivated ones only when asked. */
export function userGroups(state: ListingReader, user: User, includeDeactivated: boolean): GroupListing[] {
  const out: GroupListing[] = [];
  for (const g of state.groupDirectory.all()) {
    if (g.realmId !== user.realmId || (g.deactivated && !includeDeactivated)) continue;
    out.push({
      group: g,
      members:
        g.systemRole !== null
          ? state.systemGroupMembers(g.id, () => membersOf(state, g.realmId, g.id))
          : [...g.members],
    });
  }
  return out.sort((a, b) => a.group.id - b.group.id);
}

/** The user's topic visibility policies. */
export function userTopics(state: ListingReader, user: User): UserTopic[] {
  return [...state.userTopics.of(user.id).values()];
}

/** Zulip's all_public_streams: not for guests. */
export function checkAllPublicStreams(user: User): void {
  if (user.role === ROLE.GUEST) throw new BadRequestError("User not authorized for this query");
}
