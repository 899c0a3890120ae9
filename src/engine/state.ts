/**
 * @module state
 * The store's in-memory state and its one write path. Entities (realms, users,
 * channels, subscriptions, groups, conversations, topic policies) are small and held
 * in memory, loaded at open; messages and bitmaps stay in LMDB (bitmaps cached).
 *
 * Invariant: every change goes through `write()`, which runs one synchronous LMDB
 * transaction. In-memory entity maps are changed only by `afterCommit` callbacks, and
 * bitmap changes are rolled back if the transaction throws, so a failed call changes
 * nothing anywhere.
 */
import { BitmapStore } from "./index/bitmap-store.js";
import { foldName, foldTopic } from "./index/keys.js";
import type { MessageRenderer } from "./render.js";
import { FIRST_ID, openTables, SCHEMA_VERSION, type Tables } from "./storage/tables.js";
import type { Channel, Conversation, Realm, Subscription, User, UserGroup, UserTopic } from "./types.js";
import { StorageError } from "./errors.js";

export interface Counters {
  nextMessageId: number;
  nextRealmId: number;
  nextUserId: number;
  nextChannelId: number;
  nextGroupId: number;
  nextConversationId: number;
}

export interface StoreOptions {
  /** Renderer for message content; defaults to Zulip-flavoured Markdown. */
  readonly renderer?: MessageRenderer;
  /** Skip fsync on commit (survives kill -9, not power loss). */
  readonly noSync?: boolean;
  /** Bitmap cache budget in bytes. */
  readonly bitmapCacheBytes?: number;
  /** Clock in UNIX seconds (tests and data generators inject their own). */
  readonly now?: () => number;
  /** Who opens the directory, named to anyone refused while it is open (e.g. "parley serve"). */
  readonly holder?: string;
}

/** What changed, for caches and (later) event queues; emitted after commit. */
export type Change =
  | { readonly kind: "message"; readonly id: number }
  | { readonly kind: "user"; readonly id: number }
  | { readonly kind: "channel"; readonly id: number }
  | { readonly kind: "realm"; readonly id: number };

/** Callbacks run after a successful commit, in order. */
export interface WriteContext {
  afterCommit(fn: () => void): void;
}

export class StoreState {
  readonly tables: Tables;
  readonly bitmaps: BitmapStore;
  readonly renderer: MessageRenderer;
  readonly now: () => number;

  readonly realms = new Map<number, Realm>();
  readonly realmBySubdomain = new Map<string, number>();
  readonly users = new Map<number, User>();
  /** `${realmId}:${lowercased email}` -> userId (API email and delivery email). */
  readonly userByEmail = new Map<string, number>();
  readonly userByApiKey = new Map<string, number>();
  /** `${realmId}:${lowercased full name}` -> userIds (names are not unique). */
  readonly usersByName = new Map<string, number[]>();
  readonly channels = new Map<number, Channel>();
  /** `${realmId}:${folded name}` -> channelId. */
  readonly channelByName = new Map<string, number>();
  /** userId -> channelId -> subscription (active or not). */
  readonly subsByUser = new Map<number, Map<number, Subscription>>();
  /** channelId -> userIds with an active subscription. */
  readonly subscribers = new Map<number, Set<number>>();
  readonly groups = new Map<number, UserGroup>();
  readonly conversations = new Map<number, Conversation>();
  /** `${realmId}:${sorted user ids}` -> conversationId. */
  readonly conversationByMembers = new Map<string, number>();
  /** userId -> `${channelId}:${folded topic}` -> policy record. */
  readonly userTopics = new Map<number, Map<string, UserTopic>>();
  /** Bumped per user on any subscription change: invalidates derived caches. */
  readonly subscriptionVersion = new Map<number, number>();

  readonly #listeners = new Set<(change: Change) => void>();
  counters: Counters;
  #inWrite = false;
  #batching = false;

  constructor(dir: string, renderer: MessageRenderer, options: StoreOptions) {
    this.tables = openTables(dir, { noSync: options.noSync ?? false });
    this.bitmaps = new BitmapStore(this.tables, options.bitmapCacheBytes);
    this.renderer = renderer;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    const version = this.tables.meta.get("schemaVersion");
    if (version !== undefined && version !== SCHEMA_VERSION) {
      throw new StorageError(`data directory has schema version ${String(version)}; this build reads ${SCHEMA_VERSION}`);
    }
    this.counters = (this.tables.meta.get("counters") as Counters | undefined) ?? {
      nextMessageId: 1,
      nextRealmId: 1,
      nextUserId: 1,
      nextChannelId: 1,
      nextGroupId: 1,
      nextConversationId: 1,
    };
    this.#load();
  }

  /** Runs `fn` as one LMDB write transaction; see the module invariant. */
  write<T>(fn: (ctx: WriteContext) => T): T {
    // Inside a batch, each action's changes become visible at once (later actions of
    // the batch depend on them); batch() restores everything if the whole fails.
    if (this.#batching) return fn({ afterCommit: (cb) => cb() });
    if (this.#inWrite) throw new StorageError("nested write transaction");
    const after: (() => void)[] = [];
    const result = this.#transaction(() => fn({ afterCommit: (cb) => after.push(cb) }), () => undefined);
    for (const cb of after) cb();
    return result;
  }

  /**
   * Runs many actions as one transaction (bulk loads): bitmap chunks are written once
   * per batch instead of once per action. If anything throws, nothing is committed
   * and the in-memory state is reloaded from disk.
   */
  batch<T>(fn: () => T): T {
    if (this.#inWrite || this.#batching) throw new StorageError("nested batch");
    return this.#transaction(() => {
      this.#batching = true;
      try {
        return fn();
      } finally {
        this.#batching = false;
      }
    }, () => this.#reload());
  }

  /** One LMDB transaction: `body`, then counters and dirty bitmap chunks; undone on failure. */
  #transaction<T>(body: () => T, onFailure: () => void): T {
    const savedCounters = { ...this.counters };
    this.#inWrite = true;
    try {
      return this.tables.env.transactionSync(() => {
        const value = body();
        this.tables.meta.putSync("counters", this.counters);
        this.tables.meta.putSync("schemaVersion", SCHEMA_VERSION);
        this.bitmaps.commit();
        return value;
      });
    } catch (error) {
      this.bitmaps.rollback();
      this.counters = savedCounters;
      onFailure();
      throw error;
    } finally {
      this.#inWrite = false;
    }
  }

  /** Allocates the next ID of a kind (inside write; rolled back with it). */
  allocate(kind: keyof Counters): number {
    const id = this.counters[kind];
    this.counters[kind] = id + 1;
    return id;
  }

  /** The highest message ID allocated so far (0 if none). */
  get lastMessageId(): number {
    return this.counters.nextMessageId - 1;
  }

  /** Subscribes to committed changes; returns the unsubscribe function. */
  onChange(listener: (change: Change) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(change: Change): void {
    for (const listener of this.#listeners) listener(change);
  }

  // ---- in-memory index maintenance (called from afterCommit callbacks and at load) ----

  indexRealm(realm: Realm): void {
    this.realms.set(realm.id, realm);
    this.realmBySubdomain.set(realm.subdomain, realm.id);
    this.emit({ kind: "realm", id: realm.id });
  }

  indexUser(user: User, previous?: User): void {
    if (previous) {
      const named = this.usersByName.get(nameKey(previous.realmId, previous.fullName));
      if (named) {
        const rest = named.filter((id) => id !== previous.id);
        if (rest.length > 0) this.usersByName.set(nameKey(previous.realmId, previous.fullName), rest);
        else this.usersByName.delete(nameKey(previous.realmId, previous.fullName));
      }
      this.userByEmail.delete(emailKey(previous.realmId, previous.email));
      this.userByEmail.delete(emailKey(previous.realmId, previous.deliveryEmail));
      this.userByApiKey.delete(previous.apiKey);
    }
    this.users.set(user.id, user);
    this.userByEmail.set(emailKey(user.realmId, user.deliveryEmail), user.id);
    this.userByEmail.set(emailKey(user.realmId, user.email), user.id);
    this.userByApiKey.set(user.apiKey, user.id);
    const named = this.usersByName.get(nameKey(user.realmId, user.fullName)) ?? [];
    if (!named.includes(user.id)) this.usersByName.set(nameKey(user.realmId, user.fullName), [...named, user.id]);
    this.emit({ kind: "user", id: user.id });
  }

  indexChannel(channel: Channel, previousName?: string): void {
    if (previousName !== undefined) this.channelByName.delete(channelKey(channel.realmId, previousName));
    this.channels.set(channel.id, channel);
    this.channelByName.set(channelKey(channel.realmId, channel.name), channel.id);
    if (!this.subscribers.has(channel.id)) this.subscribers.set(channel.id, new Set());
    this.emit({ kind: "channel", id: channel.id });
  }

  indexSubscription(sub: Subscription): void {
    let byChannel = this.subsByUser.get(sub.userId);
    if (!byChannel) this.subsByUser.set(sub.userId, (byChannel = new Map()));
    byChannel.set(sub.channelId, sub);
    let set = this.subscribers.get(sub.channelId);
    if (!set) this.subscribers.set(sub.channelId, (set = new Set()));
    if (sub.active) set.add(sub.userId);
    else set.delete(sub.userId);
    this.subscriptionVersion.set(sub.userId, (this.subscriptionVersion.get(sub.userId) ?? 0) + 1);
  }

  indexConversation(conversation: Conversation): void {
    this.conversations.set(conversation.id, conversation);
    this.conversationByMembers.set(conversationKey(conversation.realmId, conversation.userIds), conversation.id);
  }

  indexUserTopic(userTopic: UserTopic): void {
    let map = this.userTopics.get(userTopic.userId);
    if (!map) this.userTopics.set(userTopic.userId, (map = new Map()));
    const k = userTopicKey(userTopic.channelId, userTopic.topic);
    if (userTopic.policy === 0) map.delete(k);
    else map.set(k, userTopic);
  }

  #reload(): void {
    for (const map of [this.realms, this.realmBySubdomain, this.users, this.userByEmail, this.userByApiKey, this.usersByName, this.channels, this.channelByName,
      this.subsByUser, this.subscribers, this.groups, this.conversations, this.conversationByMembers, this.userTopics] as Map<unknown, unknown>[]) {
      map.clear();
    }
    for (const [userId, version] of this.subscriptionVersion) this.subscriptionVersion.set(userId, version + 1);
    this.bitmaps.clearCache();
    this.#load();
  }

  #load(): void {
    const t = this.tables;
    for (const { value } of t.realms.getRange({ start: FIRST_ID })) this.indexRealm(value as Realm);
    for (const { value } of t.users.getRange({ start: FIRST_ID })) this.indexUser(value as User);
    for (const { value } of t.channels.getRange({ start: FIRST_ID })) this.indexChannel(value as Channel);
    for (const { value } of t.subscriptions.getRange()) this.indexSubscription(value as Subscription);
    for (const { value } of t.groups.getRange({ start: FIRST_ID })) {
      const group = value as UserGroup;
      this.groups.set(group.id, group);
    }
    for (const { value } of t.conversations.getRange({ start: FIRST_ID })) this.indexConversation(value as Conversation);
    for (const { value } of t.userTopics.getRange()) this.indexUserTopic(value as UserTopic);
  }

  close(): void {
    void this.tables.env.close();
  }
}

export function emailKey(realmId: number, email: string): string {
  return `${realmId}:${email.trim().toLowerCase()}`;
}

export function nameKey(realmId: number, fullName: string): string {
  return `${realmId}:${fullName.trim().toLowerCase()}`;
}

export function channelKey(realmId: number, name: string): string {
  return `${realmId}:${foldName(name.trim())}`;
}

export function conversationKey(realmId: number, sortedUserIds: readonly number[]): string {
  return `${realmId}:${sortedUserIds.join(",")}`;
}

export function userTopicKey(channelId: number, topic: string): string {
  return `${channelId}:${foldTopic(topic)}`;
}
