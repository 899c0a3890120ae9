/**
 * @module events/audience
 * Who must receive an event, decided under the engine's access rules. Audiences are
 * lazy views of committed state (a predicate plus candidates), valid during delivery:
 * the realtime layer either walks its own queues and asks has(), or walks the
 * candidates and looks up queues, whichever is smaller — so delivering an event costs
 * what the connected queues cost, not what the realm or the channel holds.
 */
import type roaring from "roaring";
import { canAccessMessage, canSeeChannel, canSeeSubscribers, hasRow } from "../access.js";
import type { StoreState } from "../state.js";
import { canAccessUser } from "../user-access.js";
import type { Channel, Message, User } from "../types.js";
import { ROLE } from "../types.js";
import type { Audience } from "./types.js";

class PredicateAudience implements Audience {
  constructor(
    readonly has: (userId: number) => boolean,
    readonly size: number,
    readonly candidates: () => Iterable<number>,
  ) {}
  *[Symbol.iterator](): Iterator<number> {
    for (const id of this.candidates()) if (this.has(id)) yield id;
  }
}

/** Exactly these users. */
export function usersAudience(ids: Iterable<number>): Audience {
  const set = new Set(ids);
  return new PredicateAudience(
    (id) => set.has(id),
    set.size,
    () => set,
  );
}

/** Exactly the users of `bitmap`, which the caller hands over (a deletion's audience is 10,000 users). */
export function bitmapAudience(bitmap: roaring.ReadonlyRoaringBitmap32): Audience {
  return new PredicateAudience(
    (id) => bitmap.has(id),
    bitmap.size,
    () => bitmap,
  );
}

/** One user. */
export function userAudience(userId: number): Audience {
  return usersAudience([userId]);
}

function realmUserIds(state: StoreState, realmId: number): Iterable<number> {
  return state.usersOfRealm(realmId);
}

/** Active users of the realm for whom `allowed` holds. */
export function realmAudience(
  state: StoreState,
  realmId: number,
  allowed: (user: User) => boolean = () => true,
): Audience {
  const has = (id: number) => {
    const user = state.users.get(id);
    return user !== undefined && user.realmId === realmId && user.isActive && allowed(user);
  };
  return new PredicateAudience(has, state.usersOfRealm(realmId).size, () => realmUserIds(state, realmId));
}

/**
 * Who administers a bot and hears of it (realm_bot events): its owner and the realm's
 * active administrators, the users whose register lists it in realm_bots. Deviation:
 * Zulip's bot_owner_user_ids leaves out administrators that are bots, and everyone but
 * the owner when the bot's default channel is private, although its register lists
 * the bot to all of them; their bot lists would go stale.
 */
export function botManagersAudience(state: StoreState, bot: User): Audience {
  return realmAudience(state, bot.realmId, (u) => u.id === bot.botOwnerId || u.role <= ROLE.ADMINISTRATOR);
}

/**
 * Users who may see `target` (realm_user updates: Zulip's get_user_ids_who_can_access_user):
 * everyone active in the realm but the limited guests it is hidden from.
 */
export function userViewersAudience(state: StoreState, target: User): Audience {
  return realmAudience(state, target.realmId, (viewer) => canAccessUser(state, viewer, target));
}

/** Users who may see that the channel exists (stream events). */
export function channelViewersAudience(state: StoreState, channel: Channel): Audience {
  return realmAudience(state, channel.realmId, (user) => canSeeChannel(state, user, channel));
}

/** Users who may see the channel's subscriber list (peer_add / peer_remove). */
export function subscriberViewersAudience(state: StoreState, channel: Channel): Audience {
  return realmAudience(state, channel.realmId, (user) => canSeeSubscribers(state, user, channel));
}

/** The channel's active subscribers (live set: valid during delivery). */
export function channelSubscribersAudience(state: StoreState, channelId: number): Audience {
  const subscribers = state.subscribers.get(channelId) ?? new Set<number>();
  return new PredicateAudience(
    (id) => subscribers.has(id) && isActive(state, id),
    subscribers.size,
    () => subscribers,
  );
}

/**
 * Users who got a row for the message at send (Zulip's UserMessage recipients):
 * a channel's subscribers at send time, or a DM's participants; the sender always.
 * Channel subscribers come from the live subscriber set (valid right after commit).
 */
export function messageAudience(state: StoreState, message: Message): Audience {
  if (message.recipient.type === "direct") {
    return usersAudience(state.conversations.get(message.recipient.conversationId)?.userIds ?? [message.senderId]);
  }
  const subscribers = state.subscribers.get(message.recipient.channelId) ?? new Set<number>();
  const has = (id: number) => id === message.senderId || (subscribers.has(id) && isActive(state, id));
  return new PredicateAudience(has, subscribers.size + 1, function* () {
    yield message.senderId;
    for (const id of subscribers) if (id !== message.senderId) yield id;
  });
}

/**
 * Users who see the message's reactions change: those with a row for it, plus the
 * channel's current subscribers who may read it (Zulip adds them for channels with
 * shared history).
 */
export function messageReadersAudience(state: StoreState, message: Message): Audience {
  const base = messageAudience(state, message);
  const current =
    message.recipient.type === "channel"
      ? (state.subscribers.get(message.recipient.channelId) ?? new Set<number>())
      : new Set<number>();
  const has = (id: number) => {
    const user = state.users.get(id);
    if (user === undefined || !user.isActive || user.realmId !== message.realmId) return false;
    return hasRow(state, id, message) || (current.has(id) && canAccessMessage(state, user, message));
  };
  return new PredicateAudience(has, base.size + current.size, function* () {
    yield* base;
    for (const id of current) if (!base.has(id)) yield id;
  });
}

/** An audience without some users (the subject of an event who hears of it otherwise). */
export function excluding(audience: Audience, ids: readonly number[]): Audience {
  const skip = new Set(ids);
  return new PredicateAudience(
    (id) => !skip.has(id) && audience.has(id),
    audience.size,
    () => audience,
  );
}

/** An audience without the users for whom `skip` holds (checked per delivery, not per member). */
export function excludingWhere(audience: Audience, skip: (userId: number) => boolean): Audience {
  return new PredicateAudience(
    (id) => audience.has(id) && !skip(id),
    audience.size,
    () => audience,
  );
}

/** Users of `ids` for whom `allowed` holds on the committed state. */
export function usersWhere(ids: readonly number[], allowed: (userId: number) => boolean): Audience {
  return usersAudience(ids.filter(allowed));
}

function isActive(state: StoreState, userId: number): boolean {
  return state.users.get(userId)?.isActive ?? false;
}
