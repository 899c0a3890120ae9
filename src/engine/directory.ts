/**
 * @module directory
 * Narrow read interfaces over the store's entities: what permission rules (access.ts)
 * and other readers look up, so that a rule depends on what it reads rather than on the
 * whole StoreState. StoreState provides each one over its entity indexes.
 */
import type { ReadonlyBitmap } from "./index/bitmap-store.js";
import type { Channel, Conversation, Message, Realm, Subscription, User, UserGroup, UserTopic } from "./types.js";

export interface UserDirectory {
  get(id: number): User | undefined;
  /** By API email or delivery email, case-insensitive. */
  byEmail(realmId: number, email: string): User | undefined;
  /** Every user ID of the realm (active or not); live, do not mutate. */
  ofRealm(realmId: number): ReadonlySet<number>;
}

export interface ChannelDirectory {
  get(id: number): Channel | undefined;
  /** By name, folded as Zulip does. */
  byName(realmId: number, name: string): Channel | undefined;
  /** The user's subscription to the channel, active or not. */
  subscription(userId: number, channelId: number): Subscription | undefined;
  /** Has the user an active subscription to the channel? */
  isSubscribed(userId: number, channelId: number): boolean;
  /** Every channel of every realm. */
  all(): Iterable<Channel>;
}

export interface GroupDirectory {
  get(id: number): UserGroup | undefined;
}

export interface RealmDirectory {
  get(id: number): Realm | undefined;
}

/** What the permission rules (access.ts) read. */
export interface AccessReader {
  readonly userDirectory: UserDirectory;
  readonly channelDirectory: ChannelDirectory;
  readonly groupDirectory: GroupDirectory;
  readonly realmDirectory: RealmDirectory;
  /** Direct-message conversations (their members). */
  readonly conversations: { get(id: number): Conversation | undefined };
  /** Flag bitmaps (the historical rows a user has). */
  readonly bitmaps: { get(key: string): ReadonlyBitmap };
  /** A stored message, if it still exists. */
  messageRecord(id: number): Message | undefined;
}

/**
 * What the narrow engine reads (normalize, plan, windows, first_unread, flags of a
 * window, GET /messages): the access rules' reads, a user's topic and channel policies,
 * and where messages stand in time.
 */
export interface NarrowReader extends AccessReader {
  readonly conversations: AccessReader["conversations"] & {
    /** The conversation of exactly these members (sorted), if it exists. */
    idOf(realmId: number, sortedUserIds: readonly number[]): number | undefined;
  };
  readonly userTopics: { withPolicy(userId: number, policy: number): readonly UserTopic[] };
  /** The channels the user is subscribed to and has muted, ascending. */
  mutedChannelsOf(userId: number): readonly number[];
  /** Bitmaps, with their change versions (memoized answers are stamped with them). */
  readonly bitmaps: AccessReader["bitmaps"] & { version(key: string): number };
  /** The newest message ID, 0 before the first. */
  readonly lastMessageId: number;
  /** The first message sent at or after `seconds` (UNIX time), if any (anchor_date). */
  firstMessageSentFrom(seconds: number): number | undefined;
}
