/**
 * @module actions/subscriptions
 * Subscribing (creating unknown channels) and unsubscribing, with Zulip's rules on
 * who may subscribe or remove whom. A subscription keeps every receive interval, so
 * "what did this user receive" stays exact across leaves and rejoins.
 */
import { emitGuestAccessChanges } from "./guest-access-events.js";
import { canAccessChannelContent, canSeeChannel, isAdmin, isAllowedBy } from "../access.js";
import { BadRequestError, ChannelExistsError, ChannelNotFoundError, clip, PermissionDeniedError } from "../errors.js";
import type { SubscriptionProperty } from "../events/types.js";
import type { StoreState, WriteContext } from "../state.js";
import {
  channelViewersAudience,
  excluding,
  realmAudience,
  subscriberViewersAudience,
  userAudience,
  usersWhere,
} from "../events/audience.js";
import type { Channel, Subscription, User } from "../types.js";
import { ROLE, SUBSCRIPTION_NOTIFICATIONS } from "../types.js";
import {
  channelPermission,
  checkChannelName,
  findChannelByName,
  newChannelRecord,
  requireChannelFolder,
  type NewChannelOptions,
} from "./channels.js";
import {
  ensureNotificationBotInTxn,
  findNotificationBot,
  sendChannelCreationMessages,
  silentMention,
} from "./notification-bot.js";
import { internalDirectMessage, writeMessages, type MessageToWrite } from "./send-message.js";
import { requireActiveUser } from "./users.js";
import { canCreateChannel, canSubscribeOthersEverywhere } from "./channel-permissions.js";

const COLORS = [
  "#76ce90",
  "#fae589",
  "#a6c7e5",
  "#e79ab5",
  "#bfd56f",
  "#f4ae55",
  "#b0a5fd",
  "#addfe5",
  "#f5ce6e",
  "#c2726a",
];

export type Principal = number | string;

/** Zulip's MAX_BULK_NEW_SUBSCRIPTION_MESSAGES (register's max_bulk_new_subscription_messages). */
export const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100;

export interface SubscribeInput {
  /** `color`: the new subscriptions' color (Zulip's check_color), for every subscriber; default: picked. */
  readonly channels: readonly { readonly name: string; readonly description?: string; readonly color?: string }[];
  /** User IDs or API emails; default: the actor. */
  readonly principals?: readonly Principal[];
  readonly authorizationErrorsFatal?: boolean;
  /** Settings for channels this call creates (ignored for existing channels). */
  readonly newChannel?: Omit<NewChannelOptions, "description">;
  /**
   * Zulip's notification-bot messages for created channels: each one's first message
   * and, with `announce`, the realm's new-channel announcement. The API sends them;
   * embedders and bulk loaders opt in. Sent after the channels' own transaction.
   */
  readonly creationMessages?: { readonly announce: boolean };
  /**
   * Refuse the call (BadRequestError, nothing written) when it would create more
   * channels than this. The API sets it: each new channel costs a record, events and
   * a notice message inside the one transaction, so a request creating 1000 held the
   * event loop for half a second. Bulk loaders leave it unset.
   */
  readonly maxNewChannels?: number;
  /**
   * Zulip's send_new_subscription_messages: the Notification Bot tells each person the
   * actor subscribed (not the actor, not bots) which existing channels they were added
   * to, unless more than `maxUsers` users were newly subscribed. Absent: no messages.
   */
  readonly subscriptionMessages?: { readonly maxUsers: number };
}

export interface SubscribeResult {
  /** userId -> names of channels newly subscribed. */
  readonly subscribed: ReadonlyMap<number, readonly string[]>;
  readonly alreadySubscribed: ReadonlyMap<number, readonly string[]>;
  readonly unauthorized: readonly string[];
  readonly createdChannelIds: readonly number[];
  /** With subscriptionMessages: whether they were sent (false: over the limit). */
  readonly newSubscriptionMessagesSent?: boolean;
}

/** Resolves principals to active users of the actor's realm ("No such user" otherwise). */
export function resolvePrincipals(
  state: StoreState,
  actor: User,
  principals: readonly Principal[] | undefined,
): User[] {
  if (principals === undefined) return [actor];
  const out = new Map<number, User>();
  for (const principal of principals) {
    const id =
      typeof principal === "number"
        ? principal
        : state.userByEmail.get(`${actor.realmId}:${principal.trim().toLowerCase()}`);
    const user = id === undefined ? undefined : state.users.get(id);
    if (!user || user.realmId !== actor.realmId || !user.isActive) throw new BadRequestError("No such user");
    out.set(user.id, user);
  }
  return [...out.values()];
}

/**
 * May `actor` subscribe users other than themselves to `channel`, whose content they
 * have (Zulip's get_streams_to_which_user_cannot_add_subscribers)? The realm's
 * can_add_subscribers_group (role:members by default), administrators, the channel's
 * administrators and its can_add_subscribers_group; never guests.
 */
export function canAddSubscribers(state: StoreState, actor: User, channel: Channel): boolean {
  if (actor.role === ROLE.GUEST) return false;
  if (isAdmin(actor) || canSubscribeOthersEverywhere(state, actor)) return true;
  return (
    isAllowedBy(state, channelPermission(state, channel, "canAdministerChannelGroup"), actor) ||
    isAllowedBy(state, channel.canAddSubscribersGroup, actor)
  );
}

export function subscribe(state: StoreState, actorId: number, input: SubscribeInput): SubscribeResult {
  const actor = requireActiveUser(state, actorId);
  if (input.channels.length === 0) throw new BadRequestError("Nothing to do. Specify at least one channel.");
  const colors = new Map<string, string>();
  for (const item of input.channels) {
    if (item.color === undefined) continue;
    if (!HEX_COLOR.test(item.color)) throw new BadRequestError("add.color is not a valid hex color code");
    colors.set(item.name.trim().toLowerCase(), item.color);
  }
  // Zulip looks the folder up first, whether or not a channel is created.
  if (input.newChannel?.folderId !== undefined) requireChannelFolder(state, actor.realmId, input.newChannel.folderId);
  const users = resolvePrincipals(state, actor, input.principals);
  const othersIncluded = users.some((u) => u.id !== actor.id);

  // Refusals echo the caller's spelling, not the stored name: a channel they cannot
  // see should tell them nothing beyond what they typed. A caller who may not create
  // channels gets the same refusal for a name no channel has as for a channel they
  // cannot see (Zulip answers "Insufficient permission" for the first, which lets a
  // guest probe private channel names); for callers who may create, a free name
  // creates a channel, so the existence of a name is theirs to learn anyway.
  const mayCreate = canCreateChannel(state, actor, input.newChannel?.inviteOnly ?? false);
  const unauthorized: string[] = [];
  const authorized: Channel[] = [];
  const toCreate: { name: string; description?: string }[] = [];
  const seen = new Set<string>();
  for (const item of input.channels) {
    const name = checkChannelName(item.name);
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    const channel = findChannelByName(state, actor.realmId, name);
    if (!channel) {
      if (mayCreate) toCreate.push(item.description === undefined ? { name } : { name, description: item.description });
      else unauthorized.push(name);
    } else if (canAccessChannelContent(state, actor, channel)) {
      // Zulip's filter_stream_authorization_for_adding_subscribers: content access, for oneself or others.
      authorized.push(channel);
    } else {
      unauthorized.push(name);
    }
  }

  if (input.maxNewChannels !== undefined && toCreate.length > input.maxNewChannels) {
    throw new BadRequestError(
      `Too many new channels in one request (maximum ${input.maxNewChannels}); create them in several requests.`,
    );
  }
  if (unauthorized.length > 0 && (input.authorizationErrorsFatal ?? true)) {
    throw new BadRequestError(`Unable to access channel (${unauthorized[0]}).`);
  }
  // Channels this call creates are the creator's to fill (they administer them), as in Zulip.
  if (othersIncluded)
    for (const channel of authorized)
      if (!canAddSubscribers(state, actor, channel)) throw new PermissionDeniedError("Insufficient permission");
  // Validate new channels before writing anything (IDs are assigned inside the write).
  for (const item of toCreate) newChannelRecord(state, actor, item.name, { ...input.newChannel, ...item }, 0);

  const result = state.write((ctx) => {
    const created: Channel[] = [];
    const realm = state.realms.get(actor.realmId);
    if (toCreate.length > 0 && input.creationMessages && realm) ensureNotificationBotInTxn(state, ctx, realm);
    for (const item of toCreate) {
      const channel = newChannelRecord(
        state,
        actor,
        item.name,
        { ...input.newChannel, ...item },
        state.allocate("nextChannelId"),
      );
      state.tables.channels.putSync(channel.id, channel);
      created.push(channel);
    }
    const subscribed = new Map<number, string[]>();
    const already = new Map<number, string[]>();
    const changes: Subscription[] = [];
    const from = state.counters.nextMessageId;
    for (const user of users) {
      for (const channel of [...authorized, ...created]) {
        const current = state.subsByUser.get(user.id)?.get(channel.id);
        if (current?.active) {
          push(already, user.id, channel.name);
          continue;
        }
        // A returning subscriber keeps their color, as in Zulip's bulk_add_subscriptions.
        const color = colors.get(channel.name.toLowerCase());
        const sub: Subscription = current
          ? { ...current, active: true, intervals: [...current.intervals, { from, to: null }] }
          : { ...firstSubscription(user.id, channel.id, from), ...(color !== undefined ? { color } : {}) };
        state.tables.subscriptions.putSync([user.id, channel.id], sub);
        changes.push(sub);
        push(subscribed, user.id, channel.name);
      }
    }
    ctx.afterCommit(() => {
      for (const channel of created) state.indexChannel(channel);
      for (const sub of changes) state.indexSubscription(sub);
    });
    emitSubscribed(state, ctx, created, changes);
    return { subscribed, alreadySubscribed: already, unauthorized, createdChannelIds: created.map((c) => c.id) };
  });
  if (input.creationMessages && result.createdChannelIds.length > 0) {
    const created = result.createdChannelIds
      .map((id) => state.channels.get(id))
      .filter((c): c is Channel => c !== undefined);
    sendChannelCreationMessages(state, actor, created, input.creationMessages.announce);
  }
  if (!input.subscriptionMessages) return result;
  const sent = result.subscribed.size <= input.subscriptionMessages.maxUsers;
  if (sent) sendSubscribedMessages(state, actor, result);
  return { ...result, newSubscriptionMessagesSent: sent };
}

/**
 * Zulip's send_messages_for_new_subscribers: each person the actor subscribed to existing
 * channels hears it from the Notification Bot, in one transaction.
 */
function sendSubscribedMessages(state: StoreState, actor: User, result: SubscribeResult): void {
  const created = new Set(result.createdChannelIds.map((id) => state.channels.get(id)?.name));
  const realm = state.realms.get(actor.realmId);
  const notices: MessageToWrite[] = [];
  let bot: User | undefined;
  for (const [userId, names] of result.subscribed) {
    const user = state.users.get(userId);
    if (userId === actor.id || !user || user.isBot) continue;
    const channels = [...new Set(names.filter((name) => !created.has(name)))].sort();
    if (channels.length === 0 || !realm) continue;
    bot ??= findNotificationBot(state, realm.id) ?? state.write((ctx) => ensureNotificationBotInTxn(state, ctx, realm));
    notices.push(internalDirectMessage(state, bot.id, userId, subscribedText(actor, channels)));
  }
  writeMessages(state, notices);
}

/** Zulip's you_were_just_subscribed_message. */
function subscribedText(actor: User, channels: readonly string[]): string {
  if (channels.length === 1) return `${silentMention(actor)} subscribed you to #**${channels[0]}**.`;
  return `${silentMention(actor)} subscribed you to the following channels:\n\n${channels
    .map((name) => `* #**${name}**\n`)
    .join("")}`;
}

export interface UnsubscribeResult {
  readonly removed: readonly string[];
  readonly notRemoved: readonly string[];
}

export function unsubscribe(
  state: StoreState,
  actorId: number,
  channelNames: readonly string[],
  principals?: readonly Principal[],
): UnsubscribeResult {
  const actor = requireActiveUser(state, actorId);
  if (channelNames.length === 0) throw new BadRequestError("Nothing to do. Specify at least one channel.");
  const users = resolvePrincipals(state, actor, principals);
  const channels = channelsToLeave(state, actor, channelNames);
  for (const user of users) {
    if (user.id === actor.id) continue;
    for (const channel of channels) {
      const ownsBot = user.isBot && user.botOwnerId === actor.id;
      // Zulip's bulk_can_remove_subscribers_from_streams: never guests (both settings exclude
      // role:everyone); channel administrators even without access; the removers' group with it.
      const allowed =
        isAdmin(actor) ||
        ownsBot ||
        (actor.role !== ROLE.GUEST &&
          (isAllowedBy(state, channel.canAdministerChannelGroup, actor) ||
            isAllowedBy(state, channel.canRemoveSubscribersGroup, actor)));
      if (!allowed) throw new PermissionDeniedError("Insufficient permission");
    }
  }
  return state.write((ctx) => unsubscribeInTxn(state, ctx, users, channels));
}

/** The channels an unsubscribe names, each one the actor can see (STREAM_DOES_NOT_EXIST otherwise). */
function channelsToLeave(state: StoreState, actor: User, channelNames: readonly string[]): Channel[] {
  if (channelNames.length === 0) throw new BadRequestError("Nothing to do. Specify at least one channel.");
  const channels: Channel[] = [];
  for (const raw of channelNames) {
    const channel = findChannelByName(state, actor.realmId, raw.trim());
    if (!channel || !canSeeChannel(state, actor, channel)) throw new ChannelNotFoundError({ name: raw });
    if (!channels.includes(channel)) channels.push(channel);
  }
  return channels;
}

/** What unsubscribing oneself from `channelNames` would refuse, without writing (PATCH checks it before adding). */
export function checkUnsubscribe(state: StoreState, actorId: number, channelNames: readonly string[]): void {
  channelsToLeave(state, requireActiveUser(state, actorId), channelNames);
}

/** Inside an open write: ends each user's active subscription to each channel, with Zulip's events. */
export function unsubscribeInTxn(
  state: StoreState,
  ctx: WriteContext,
  users: readonly User[],
  channels: readonly Channel[],
): UnsubscribeResult {
  const removed: string[] = [];
  const notRemoved: string[] = [];
  const changes: Subscription[] = [];
  const to = state.counters.nextMessageId;
  for (const user of users) {
    for (const channel of channels) {
      const current = state.subsByUser.get(user.id)?.get(channel.id);
      if (!current?.active) {
        notRemoved.push(channel.name);
        continue;
      }
      const intervals = current.intervals.slice();
      const last = intervals[intervals.length - 1];
      if (last && last.to === null) intervals[intervals.length - 1] = { from: last.from, to };
      const sub: Subscription = { ...current, active: false, intervals };
      state.tables.subscriptions.putSync([user.id, channel.id], sub);
      changes.push(sub);
      removed.push(channel.name);
    }
  }
  ctx.afterCommit(() => {
    for (const sub of changes) state.indexSubscription(sub);
  });
  emitUnsubscribed(state, ctx, changes);
  return { removed, notRemoved };
}

/** Mutes or unmutes a channel for the user (affects first_unread and in:home). */
export function setChannelMuted(state: StoreState, userId: number, channelId: number, muted: boolean): void {
  updateSubscriptionProperties(state, userId, [{ channelId, property: "is_muted", value: muted }]);
}

/** One change of POST /users/me/subscriptions/properties, as the client sent it. */
export interface SubscriptionPropertyChange {
  readonly channelId: number;
  readonly property: string;
  readonly value: boolean | string;
}

const BOOLEAN_PROPERTIES = new Set<string>(["in_home_view", "is_muted", "pin_to_top", ...SUBSCRIPTION_NOTIFICATIONS]);
/** Zulip's check_color. */
const HEX_COLOR = /^#([a-fA-F0-9]{3,6})$/;

/**
 * Zulip's update_subscription_properties_backend: each change names a channel the
 * user subscribes to and a known property with a value of its type. Every change is
 * checked before any is applied, and all are applied in one write (Zulip applies them
 * one by one, so an error part-way keeps the earlier ones). Each change tells the
 * user with a `subscription update` event; muting also sends the deprecated inverse
 * in_home_view (and in_home_view the is_muted it means).
 */
export function updateSubscriptionProperties(
  state: StoreState,
  userId: number,
  changes: readonly SubscriptionPropertyChange[],
): void {
  const user = requireActiveUser(state, userId);
  for (const change of changes) {
    if (change.property === "color") {
      if (typeof change.value !== "string") throw new BadRequestError("color is not a string");
      if (!HEX_COLOR.test(change.value)) throw new BadRequestError("color is not a valid hex color code");
    } else if (BOOLEAN_PROPERTIES.has(change.property)) {
      if (typeof change.value !== "boolean") throw new BadRequestError(`${clip(change.property)} is not a boolean`);
    } else {
      throw new BadRequestError(`Unknown subscription property: ${clip(change.property)}`);
    }
  }
  const current = new Map<number, Subscription>();
  for (const change of changes) {
    const channel = state.channels.get(change.channelId);
    if (!channel || !canAccessChannelContent(state, user, channel)) throw new BadRequestError("Invalid channel ID");
    const sub = state.subsByUser.get(user.id)?.get(channel.id);
    if (!sub?.active) throw new BadRequestError(`Not subscribed to channel ID ${change.channelId}`);
    current.set(channel.id, sub);
  }
  state.write((ctx) => {
    for (const { channelId, property, value } of changes) {
      const before = current.get(channelId)!;
      let next: Subscription;
      if (property === "is_muted" || property === "in_home_view")
        next = { ...before, isMuted: property === "is_muted" ? value === true : value === false };
      else if (property === "pin_to_top") next = { ...before, pinToTop: value === true };
      else if (property === "color") next = { ...before, color: value as string };
      else next = { ...before, notifications: { ...before.notifications, [property]: value } };
      current.set(channelId, next);
      state.tables.subscriptions.putSync([user.id, channelId], next);
      ctx.afterCommit(() => state.indexSubscription(next));
      const emit = (p: SubscriptionProperty, v: boolean | string) =>
        ctx.emit({ type: "subscription", op: "update", userId: user.id, channelId, property: p, value: v }, () =>
          userAudience(user.id),
        );
      if (property === "is_muted" || property === "in_home_view") {
        emit("is_muted", next.isMuted);
        emit("in_home_view", !next.isMuted);
      } else emit(property as SubscriptionProperty, value);
    }
  });
}

/** Grouped by channel: who joined or left it in this write. */
function byChannel(changes: readonly Subscription[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const sub of changes) push(out, sub.channelId, sub.userId);
  return out;
}

function byUser(changes: readonly Subscription[]): Map<number, Subscription[]> {
  const out = new Map<number, Subscription[]>();
  for (const sub of changes) {
    const list = out.get(sub.userId);
    if (list) list.push(sub);
    else out.set(sub.userId, [sub]);
  }
  return out;
}

/**
 * Zulip's order: new channels to everyone who may see them; existing private
 * channels to new subscribers who could not see them before; each subscriber's own
 * subscription add; peer_add to the others who may see the subscriber lists.
 * Runs inside the write, so canSeeChannel still answers for the state before it.
 */
/** A user's first subscription to a channel, receiving from message ID `from` on. */
function firstSubscription(userId: number, channelId: number, from: number): Subscription {
  return {
    userId,
    channelId,
    active: true,
    isMuted: false,
    color: COLORS[(channelId + userId) % COLORS.length]!,
    pinToTop: false,
    intervals: [{ from, to: null }],
  };
}

/**
 * Subscribes a user created in the same open write (an accepted invitation) to
 * existing channels. The user is not in memory before the commit, so this writes and
 * announces directly rather than through subscribe()'s checks.
 */
export function subscribeNewUserInTxn(
  state: StoreState,
  ctx: WriteContext,
  user: User,
  channels: readonly Channel[],
): void {
  const from = state.counters.nextMessageId;
  const subs = channels.map((channel) => firstSubscription(user.id, channel.id, from));
  if (subs.length === 0) return;
  for (const sub of subs) state.tables.subscriptions.putSync([sub.userId, sub.channelId], sub);
  ctx.afterCommit(() => {
    for (const sub of subs) state.indexSubscription(sub);
  });
  ctx.emit(
    {
      type: "subscription",
      op: "add",
      userId: user.id,
      subscriptions: subs.map((subscription) => ({
        subscription,
        channel: state.channels.get(subscription.channelId)!,
      })),
    },
    () => userAudience(user.id),
  );
  for (const channel of channels) {
    ctx.emit({ type: "subscription", op: "peer_add", channelIds: [channel.id], userIds: [user.id] }, () =>
      excluding(subscriberViewersAudience(state, channel), [user.id]),
    );
  }
}

function emitSubscribed(
  state: StoreState,
  ctx: WriteContext,
  created: readonly Channel[],
  changes: readonly Subscription[],
): void {
  const createdById = new Map(created.map((c) => [c.id, c]));
  const channelOf = (id: number) => createdById.get(id) ?? state.channels.get(id)!;
  for (const channel of created)
    ctx.emit({ type: "stream", op: "create", channels: [channel] }, () => channelViewersAudience(state, channel));
  if (created.some((c) => c.isDefault)) {
    const realmId = created[0]!.realmId;
    // The whole list, as Zulip's default_streams event carries it; guests have none.
    ctx.emit({ type: "default_streams", realmId, channelIds: defaultChannelIdsAfter(state, created) }, () =>
      realmAudience(state, realmId, (u) => u.role !== ROLE.GUEST),
    );
  }
  for (const [userId, subs] of byUser(changes)) {
    const user = state.users.get(userId)!;
    const revealed = subs
      .map((s) => channelOf(s.channelId))
      .filter((c) => !createdById.has(c.id) && !canSeeChannel(state, user, c));
    if (revealed.length > 0) ctx.emit({ type: "stream", op: "create", channels: revealed }, () => userAudience(userId));
    ctx.emit(
      {
        type: "subscription",
        op: "add",
        userId,
        subscriptions: subs.map((subscription) => ({ subscription, channel: channelOf(subscription.channelId) })),
      },
      () => userAudience(userId),
    );
  }
  // Zulip's order: the guests' realm_user adds come between the subscription adds and peer_add.
  emitGuestAccessChanges(state, ctx, changes);
  for (const [channelId, userIds] of byChannel(changes)) {
    const channel = channelOf(channelId);
    ctx.emit({ type: "subscription", op: "peer_add", channelIds: [channelId], userIds }, () =>
      excluding(subscriberViewersAudience(state, channel), userIds),
    );
  }
}

/** The realm's default channels once `created` are committed (they are not in state yet). */
function defaultChannelIdsAfter(state: StoreState, created: readonly Channel[]): number[] {
  const realmId = created[0]!.realmId;
  const ids = new Set<number>();
  for (const c of state.channels.values()) if (c.realmId === realmId && c.isDefault && !c.isArchived) ids.add(c.id);
  for (const c of created) if (c.isDefault) ids.add(c.id);
  return [...ids].sort((a, b) => a - b);
}

/**
 * Each leaver's subscription remove; peer_remove to who may see the lists; stream delete to leavers who can no longer
 * see a channel.
 */
function emitUnsubscribed(state: StoreState, ctx: WriteContext, changes: readonly Subscription[]): void {
  for (const [userId, subs] of byUser(changes)) {
    ctx.emit(
      { type: "subscription", op: "remove", userId, channels: subs.map((s) => state.channels.get(s.channelId)!) },
      () => userAudience(userId),
    );
  }
  for (const [channelId, userIds] of byChannel(changes)) {
    const channel = state.channels.get(channelId)!;
    ctx.emit({ type: "subscription", op: "peer_remove", channelIds: [channelId], userIds }, () =>
      subscriberViewersAudience(state, channel),
    );
    ctx.emit({ type: "stream", op: "delete", channels: [channel] }, () =>
      usersWhere(userIds, (id) => {
        const user = state.users.get(id);
        return user !== undefined && user.isActive && !canSeeChannel(state, user, channel);
      }),
    );
  }
  emitGuestAccessChanges(state, ctx, changes);
}

function push<T>(map: Map<number, T[]>, id: number, name: T): void {
  const list = map.get(id);
  if (list) list.push(name);
  else map.set(id, [name]);
}

export interface CreateChannelInput {
  readonly name: string;
  readonly description?: string;
  /** Users to subscribe (the creator only if listed). */
  readonly subscribers: readonly number[];
  readonly options: Omit<NewChannelOptions, "description">;
  readonly announce: boolean;
}

/**
 * POST /channels/create (Zulip's create_channel): a new channel, never an existing
 * one (CHANNEL_ALREADY_EXISTS), with the creation options and the Notification Bot's
 * messages of subscribe; the listed users subscribed in the same write.
 */
export function createChannel(state: StoreState, actorId: number, input: CreateChannelInput): number {
  const actor = requireActiveUser(state, actorId);
  const name = checkChannelName(input.name);
  if (findChannelByName(state, actor.realmId, name) !== undefined) throw new ChannelExistsError(name);
  if (!canCreateChannel(state, actor, input.options.inviteOnly ?? false))
    throw new PermissionDeniedError("Insufficient permission");
  const result = subscribe(state, actorId, {
    channels: [input.description === undefined ? { name } : { name, description: input.description }],
    principals: input.subscribers,
    newChannel: input.options,
    creationMessages: { announce: input.announce },
    maxNewChannels: 1,
  });
  return result.createdChannelIds[0]!;
}
