/**
 * @module directory
 * Narrow read interfaces over the store's entities: what permission rules (access.ts)
 * and other readers look up, so that a rule depends on what it reads rather than on the
 * whole StoreState. StoreState provides each one over its entity indexes.
 */
import type { ReadonlyBitmap } from "./index/bitmap-store.js";
import type { ConversationOfMessage } from "./index/message-conversations.js";
import type { PresenceLog } from "./index/presence-log.js";
import type { UserSettingsRecord } from "./settings/defaults.js";
import type {
  Channel,
  Conversation,
  Message,
  MessageMeta,
  PresenceRecord,
  Realm,
  RecentConversation,
  Subscription,
  User,
  UserGroup,
  UserTopic,
} from "./types.js";

export interface UserDirectory {
  get(id: number): User | undefined;
  /** By API email or delivery email, case-insensitive. */
  byEmail(realmId: number, email: string): User | undefined;
  /** Every user ID of the realm (active or not); live, do not mutate. */
  ofRealm(realmId: number): ReadonlySet<number>;
  /** The realm's bot IDs (active or not); live, do not mutate. */
  botsOf(realmId: number): ReadonlySet<number>;
}

export interface ChannelDirectory {
  get(id: number): Channel | undefined;
  /** By name, folded as Zulip does. */
  byName(realmId: number, name: string): Channel | undefined;
  /** The user's subscription to the channel, active or not. */
  subscription(userId: number, channelId: number): Subscription | undefined;
  /** Has the user an active subscription to the channel? */
  isSubscribed(userId: number, channelId: number): boolean;
  /** Every subscription of the user, active or not. */
  subscriptionsOf(userId: number): Iterable<Subscription>;
  /** Every channel of every realm. */
  all(): Iterable<Channel>;
}

export interface GroupDirectory {
  get(id: number): UserGroup | undefined;
  /** Every group of every realm. */
  all(): Iterable<UserGroup>;
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

/** What the unread summary reads (queries/unread.ts): the narrow engine's reads, and messages by conversation. */
export interface UnreadReader extends NarrowReader {
  /** Message ID -> conversation ordinal, filled on demand (index/message-conversations.ts). */
  readonly messageConversations: {
    ordinalOf(id: number): number;
    /** One more than the largest ordinal handed out so far. */
    readonly size: number;
    conversation(ordinal: number): ConversationOfMessage;
  };
  /** A message's meta (channel or conversation, topic), if the message exists. */
  metaOf(id: number): MessageMeta | undefined;
}

/** One user's recent_private_conversations as last computed, with the `dm` bitmap version it is valid for. */
export interface RecentConversationsEntry {
  readonly version: number;
  readonly list: readonly RecentConversation[];
}

/** What recent_private_conversations reads (queries/recent-conversations.ts). */
export interface RecentConversationsReader extends NarrowReader {
  /** A message's meta (channel or conversation, topic...), if the message exists. */
  metaOf(id: number): MessageMeta | undefined;
  /** Per user, the last list computed; owned by the store, which empties it after a failed batch. */
  readonly recentConversationsCache: {
    get(userId: number): RecentConversationsEntry | undefined;
    set(userId: number, entry: RecentConversationsEntry): void;
  };
}

/** What the listings read (queries/listings.ts): channels, subscribers, users, groups, topic policies. */
export interface ListingReader extends AccessReader {
  /** Active users with an active subscription to the channel, ascending; shared, do not mutate. */
  activeSubscriberList(channelId: number): readonly number[];
  /** Cached members of a system group, ascending; `compute` builds them on a miss. Shared, do not mutate. */
  systemGroupMembers(groupId: number, compute: () => number[]): readonly number[];
  readonly userTopics: { of(userId: number): ReadonlyMap<string, UserTopic> };
}

/**
 * What the limited-guest rule reads (user-access.ts) beyond the permission rules' reads:
 * subscribers, the conversations of the guest's direct messages, and its own cache.
 */
export interface UserAccessReader extends AccessReader {
  /** Active users with an active subscription to the channel, ascending. */
  activeSubscriberList(channelId: number): readonly number[];
  /** A message's conversation: channel ID, or minus the direct conversation's ID. */
  metaOf(id: number): MessageMeta | undefined;
  readonly bitmaps: AccessReader["bitmaps"] & { version(key: string): number };
  /** Per guest, the users they may see, with the version of their `dm` bitmap. */
  readonly accessibleUsers: {
    get(viewerId: number, dmVersion: number): AccessEntry | undefined;
    set(viewerId: number, entry: AccessEntry): void;
  };
}

/** What a limited guest may see, computed from one version of their `dm` bitmap. */
export interface AccessEntry {
  readonly dmVersion: number;
  /** The human users they may see, themselves included. */
  readonly ids: ReadonlySet<number>;
  /** The participants of their direct-message conversations (deactivated ones too). */
  readonly dmPartners: ReadonlySet<number>;
}

/** What the presence queries read (queries/presence.ts). */
export interface PresenceReader extends UserAccessReader {
  /** The clock, in UNIX seconds. */
  now(): number;
  /** userId -> presence. */
  readonly presence: { get(userId: number): PresenceRecord | undefined };
  /** realmId -> its presence changes in sequence order. */
  readonly presenceLogs: { get(realmId: number): Pick<PresenceLog, "forEachAfter"> | undefined };
  /** userId -> the user's stored settings (presence_enabled among them). */
  readonly userSettings: { get(userId: number): UserSettingsRecord | undefined };
}

/** What the storage figures read (queries/storage-stats.ts): LMDB's own counts and the bitmap cache's size. */
export interface StatsReader {
  readonly tables: {
    /** lmdb-js types it as {}: its fields are LMDB's mdb_env_info and mdb_stat. */
    readonly env: { getStats(): object };
    readonly messages: { getKeysCount(options: { start: number }): number };
  };
  readonly bitmaps: { readonly cachedBytes: number };
}

/**
 * What a channel's topic list reads (queries/channel-topics.ts): the access rules' reads,
 * the topic bitmaps' newest IDs and where a message is.
 */
export interface TopicReader extends AccessReader {
  readonly bitmaps: AccessReader["bitmaps"] & {
    /** Every non-empty bitmap whose key starts with `prefix`, with its largest ID. */
    maximaWithPrefix(prefix: string): [string, number][];
    /** The same for at most `limit` keys from `from` on, and the key the next page starts at. */
    maximaPage(prefix: string, from: string | null, limit: number): { maxima: [string, number][]; next: string | null };
    /** Loaded at least for IDs >= fromId (lower ones may be missing). */
    getFrom(key: string, fromId: number): ReadonlyBitmap;
  };
  /** A message's channel (or minus its conversation) and topic; undefined once deleted. */
  metaOf(id: number): MessageMeta | undefined;
}
