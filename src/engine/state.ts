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
import { PresenceLog } from "./index/presence-log.js";
import { foldName, foldTopic } from "./index/keys.js";
import type { MessageRenderer } from "./render.js";
import { FIRST_ID, forgetUncommittedStructures, openTables, SCHEMA_VERSION, TABLE_NAMES, TABLE_SPECS, type TableName, type Tables } from "./storage/tables.js";
import type { Attachment, Channel, Conversation, Draft, Playground, PresenceRecord, Realm, SavedSnippet, ScheduledMessage, Subscription, User, UserGroup, UserTopic } from "./types.js";
import { StorageError } from "./errors.js";
import { mergedSettings, type RealmSettingDefaultsRecord, type Settings, type UserSettingsRecord } from "./settings/defaults.js";
import type { Audience, Delivery, EngineEvent, EventBatch } from "./events/types.js";
import { logEntryOf, trimChangeLog } from "./events/change-log.js";

export interface Counters {
  nextMessageId: number;
  nextRealmId: number;
  nextUserId: number;
  nextChannelId: number;
  nextGroupId: number;
  nextConversationId: number;
  /** The next change-log sequence number (one per committed write that emitted events). */
  nextChangeSeq: number;
  nextScheduledMessageId: number;
  nextPlaygroundId: number;
  nextDraftId: number;
  nextSavedSnippetId: number;
  nextAttachmentId: number;
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
  /**
   * Fault injection for tests: called as the last step inside every write
   * transaction, after index chunks are written; throwing makes the commit fail.
   */
  readonly commitHook?: () => void;
  /** Where an event listener's exception is reported (it never undoes the committed write). */
  readonly onListenerError?: (error: unknown) => void;
  /** Who opens the directory, named to anyone refused while it is open (e.g. "parley serve"). */
  readonly holder?: string;
}

/** During a write: defer work to after the commit, and queue events. */
export interface WriteContext {
  /** Runs after a successful commit, in order (in-memory maps change only here). */
  afterCommit(fn: () => void): void;
  /**
   * Queues an event, released to listeners after the commit and after every
   * afterCommit callback; its audience is computed then, on the committed state.
   */
  emit(event: EngineEvent, audience: () => Audience): void;
}

const EMPTY_IDS: ReadonlySet<number> = new Set();

type PendingEvent = readonly [EngineEvent, () => Audience];

export class StoreState {
  readonly tables: Tables;
  readonly bitmaps: BitmapStore;
  readonly renderer: MessageRenderer;
  readonly now: () => number;

  readonly realms = new Map<number, Realm>();
  readonly realmBySubdomain = new Map<string, number>();
  readonly users = new Map<number, User>();
  /** realmId -> every user ID of the realm (active or not). */
  readonly #usersByRealm = new Map<number, Set<number>>();
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
  /** userId -> the user's stored settings (only users who differ from Zulip's defaults). */
  readonly userSettings = new Map<number, UserSettingsRecord>();
  /** realmId -> the organization's defaults for new users (only realms that set any). */
  readonly realmSettingDefaults = new Map<number, RealmSettingDefaultsRecord>();
  /** Every scheduled message (pending, failed or delivered), by ID. */
  readonly scheduledMessages = new Map<number, ScheduledMessage>();
  /**
   * userId -> presence. The one map that is ahead of disk: pings change it at once and
   * flushPresence (actions/presence.ts) writes the changed records every few seconds.
   */
  readonly presence = new Map<number, PresenceRecord>();
  /** Users whose presence changed since the last flush. */
  readonly presenceDirty = new Set<number>();
  /** realmId -> its presence changes in sequence order (queries/presence.ts). */
  readonly presenceLogs = new Map<number, PresenceLog>();
  /** The last presence sequence number handed out (one sequence for every realm: monotonic in each). */
  presenceSeq = 0;
  /** Durable bound on presenceSeq: no number above it was handed out before a crash. */
  presenceSeqCeiling = 0;
  /** Every realm's code playgrounds, by ID. */
  readonly playgrounds = new Map<number, Playground>();
  /** userId -> draftId -> the user's stored drafts. */
  readonly draftsByUser = new Map<number, Map<number, Draft>>();
  /** userId -> savedSnippetId -> the user's saved snippets. */
  readonly snippetsByUser = new Map<number, Map<number, SavedSnippet>>();
  /** Every uploaded file's record, by ID. */
  readonly attachments = new Map<number, Attachment>();
  /** pathId -> attachment ID. */
  readonly attachmentByPath = new Map<string, number>();
  /** realmId -> bytes of every stored upload of the realm (Zulip's currently_used_upload_space_bytes). */
  readonly uploadSpaceByRealm = new Map<number, number>();
  /** Bumped per user on any subscription change: invalidates derived caches. */
  readonly subscriptionVersion = new Map<number, number>();

  readonly #listeners = new Set<(batch: EventBatch) => void>();
  readonly #rollbackListeners = new Set<() => void>();
  readonly #commitHook: (() => void) | undefined;
  readonly #onListenerError: (error: unknown) => void;
  counters: Counters;
  #inWrite = false;
  /** Events queued by the actions of a running batch(). */
  #batchEvents: PendingEvent[] | null = null;

  constructor(dir: string, renderer: MessageRenderer, options: StoreOptions) {
    this.tables = openTables(dir, { noSync: options.noSync ?? false });
    this.bitmaps = new BitmapStore(this.tables, options.bitmapCacheBytes);
    this.renderer = renderer;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#commitHook = options.commitHook;
    this.#onListenerError = options.onListenerError ?? ((error) => console.error("parley engine: event listener failed", error));
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
      nextChangeSeq: 1,
      nextScheduledMessageId: 1,
      nextPlaygroundId: 1,
      nextDraftId: 1,
      nextSavedSnippetId: 1,
      nextAttachmentId: 1,
    };
    // Stores created before the change log have no sequence counter yet.
    this.counters.nextChangeSeq ??= 1;
    this.counters.nextScheduledMessageId ??= 1;
    this.counters.nextPlaygroundId ??= 1;
    this.counters.nextDraftId ??= 1;
    this.counters.nextSavedSnippetId ??= 1;
    this.counters.nextAttachmentId ??= 1;
    this.#load();
    const ceiling = this.tables.meta.get(PRESENCE_CEILING_KEY);
    this.presenceSeq = Math.max(this.presenceSeq, typeof ceiling === "number" ? ceiling : 0);
    this.presenceSeqCeiling = this.presenceSeq;
  }

  /** Runs `fn` as one LMDB write transaction; see the module invariant. */
  write<T>(fn: (ctx: WriteContext) => T): T {
    // Inside a batch, each action's changes become visible at once (later actions of
    // the batch depend on them); batch() restores everything if the whole fails, and
    // releases the batch's events only after it commits.
    const batchEvents = this.#batchEvents;
    if (batchEvents) return fn({ afterCommit: (cb) => cb(), emit: (event, audience) => batchEvents.push([event, audience]) });
    if (this.#inWrite) throw new StorageError("nested write transaction");
    const after: (() => void)[] = [];
    const events: PendingEvent[] = [];
    let seq = 0;
    const result = this.#transaction(
      () => {
        const value = fn({ afterCommit: (cb) => after.push(cb), emit: (event, audience) => events.push([event, audience]) });
        seq = this.#logChanges(events);
        return value;
      },
      () => undefined,
    );
    for (const cb of after) cb();
    this.#release(seq, events);
    return result;
  }

  /**
   * Runs many actions as one transaction (bulk loads): bitmap chunks are written once
   * per batch instead of once per action. If anything throws, nothing is committed,
   * no event is released, and the in-memory state is reloaded from disk.
   */
  batch<T>(fn: () => T): T {
    if (this.#inWrite || this.#batchEvents) throw new StorageError("nested batch");
    const events: PendingEvent[] = [];
    let seq = 0;
    const result = this.#transaction(() => {
      this.#batchEvents = events;
      try {
        const value = fn();
        seq = this.#logChanges(events);
        return value;
      } finally {
        this.#batchEvents = null;
      }
    }, () => this.#reload());
    this.#release(seq, events);
    return result;
  }

  /**
   * One LMDB transaction: `body`, then counters and dirty bitmap chunks. Memory is
   * never ahead of disk: bitmap mutations, counters and the record encoders' shared
   * structures are undone exactly if anything fails, including the commit itself, and
   * derived caches are told to forget.
   */
  #transaction<T>(body: () => T, onFailure: () => void): T {
    const savedCounters = { ...this.counters };
    this.#inWrite = true;
    try {
      const value = this.tables.env.transactionSync(() => {
        const inner = body();
        this.tables.meta.putSync("counters", this.counters);
        this.tables.meta.putSync("schemaVersion", SCHEMA_VERSION);
        this.bitmaps.writeDirty();
        this.#commitHook?.();
        return inner;
      });
      this.bitmaps.committed();
      return value;
    } catch (error) {
      this.bitmaps.rollback();
      forgetUncommittedStructures(this.tables);
      this.counters = savedCounters;
      onFailure();
      for (const listener of this.#rollbackListeners) listener();
      throw error;
    } finally {
      this.#inWrite = false;
    }
  }

  /** Writes the change-log entry of a write that emitted events; returns its sequence number (0 if none). */
  #logChanges(events: readonly PendingEvent[]): number {
    if (events.length === 0) return 0;
    const seq = this.allocate("nextChangeSeq");
    this.tables.changeLog.putSync(seq, { at: this.now(), changes: events.map(([event]) => logEntryOf(event)) });
    trimChangeLog(this.tables, seq);
    return seq;
  }

  /** Computes audiences on the committed state and hands the batch to every listener. */
  #release(seq: number, events: readonly PendingEvent[]): void {
    if (events.length === 0 || this.#listeners.size === 0) return;
    const deliveries: Delivery[] = events.map(([event, audience]) => ({ event, audience: audience() }));
    this.dispatch({ seq, deliveries });
  }

  /** Hands a batch to every listener; a failing listener is reported, not propagated (the write is committed). */
  dispatch(batch: EventBatch): void {
    for (const listener of this.#listeners) {
      try {
        listener(batch);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** Subscribes to committed events; returns the unsubscribe function. */
  onEvents(listener: (batch: EventBatch) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Called after a failed transaction (derived caches forget what they saw inside it). */
  onRollback(listener: () => void): () => void {
    this.#rollbackListeners.add(listener);
    return () => this.#rollbackListeners.delete(listener);
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

  // ---- in-memory index maintenance (called from afterCommit callbacks and at load) ----

  indexRealm(realm: Realm): void {
    this.realms.set(realm.id, realm);
    this.realmBySubdomain.set(realm.subdomain, realm.id);
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
    let ofRealm = this.#usersByRealm.get(user.realmId);
    if (!ofRealm) this.#usersByRealm.set(user.realmId, (ofRealm = new Set()));
    ofRealm.add(user.id);
    this.userByEmail.set(emailKey(user.realmId, user.deliveryEmail), user.id);
    this.userByEmail.set(emailKey(user.realmId, user.email), user.id);
    this.userByApiKey.set(user.apiKey, user.id);
    const named = this.usersByName.get(nameKey(user.realmId, user.fullName)) ?? [];
    if (!named.includes(user.id)) this.usersByName.set(nameKey(user.realmId, user.fullName), [...named, user.id]);
  }

  /** A user's effective settings: Zulip's defaults overlaid with what is stored. */
  settingsOf(userId: number): Settings {
    return mergedSettings(this.userSettings.get(userId)?.values);
  }

  /** What a new user of the realm starts with. */
  realmDefaultsOf(realmId: number): Settings {
    return mergedSettings(this.realmSettingDefaults.get(realmId)?.values);
  }

  /** Every user ID of the realm (active or not); live, do not mutate. */
  usersOfRealm(realmId: number): ReadonlySet<number> {
    return this.#usersByRealm.get(realmId) ?? EMPTY_IDS;
  }

  indexChannel(channel: Channel, previousName?: string): void {
    if (previousName !== undefined) this.channelByName.delete(channelKey(channel.realmId, previousName));
    this.channels.set(channel.id, channel);
    this.channelByName.set(channelKey(channel.realmId, channel.name), channel.id);
    if (!this.subscribers.has(channel.id)) this.subscribers.set(channel.id, new Set());
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
    for (const map of [this.realms, this.realmBySubdomain, this.users, this.#usersByRealm, this.userByEmail, this.userByApiKey, this.usersByName, this.channels, this.channelByName,
      this.subsByUser, this.subscribers, this.groups, this.conversations, this.conversationByMembers, this.userTopics, this.userSettings, this.realmSettingDefaults, this.scheduledMessages, this.draftsByUser, this.snippetsByUser,
      this.playgrounds, this.attachments, this.attachmentByPath, this.uploadSpaceByRealm] as Map<unknown, unknown>[]) {
      map.clear();
    }
    for (const [userId, version] of this.subscriptionVersion) this.subscriptionVersion.set(userId, version + 1);
    this.bitmaps.clearCache();
    this.#load();
  }

  /** Loaders of the registry's entity tables (storage/tables.ts), keyed by table. */
  readonly #loaders: Partial<Record<TableName, (value: unknown) => void>> = {
    realms: (v) => this.indexRealm(v as Realm),
    users: (v) => this.indexUser(v as User),
    channels: (v) => this.indexChannel(v as Channel),
    subscriptions: (v) => this.indexSubscription(v as Subscription),
    groups: (v) => this.indexGroup(v as UserGroup),
    conversations: (v) => this.indexConversation(v as Conversation),
    userTopics: (v) => this.indexUserTopic(v as UserTopic),
    userSettings: (v) => this.userSettings.set((v as UserSettingsRecord).userId, v as UserSettingsRecord),
    realmSettingDefaults: (v) => this.realmSettingDefaults.set((v as RealmSettingDefaultsRecord).realmId, v as RealmSettingDefaultsRecord),
    scheduledMessages: (v) => this.indexScheduledMessage(v as ScheduledMessage),
    // Presence is not cleared by a reload: memory may be newer than disk (see the field).
    presence: (v) => {
      const record = v as PresenceRecord;
      const current = this.presence.get(record.userId);
      if (!current || current.lastUpdateId < record.lastUpdateId) this.indexPresence(record);
      this.presenceSeq = Math.max(this.presenceSeq, record.lastUpdateId);
    },
    playgrounds: (v) => this.playgrounds.set((v as Playground).id, v as Playground),
    drafts: (v) => this.indexDraft(v as Draft),
    savedSnippets: (v) => this.indexSavedSnippet(v as SavedSnippet),
    attachments: (v) => this.indexAttachment(v as Attachment),
  };

  indexAttachment(attachment: Attachment): void {
    const previous = this.attachments.get(attachment.id);
    const delta = attachment.size - (previous?.size ?? 0);
    this.attachments.set(attachment.id, attachment);
    this.attachmentByPath.set(attachment.pathId, attachment.id);
    this.uploadSpaceByRealm.set(attachment.realmId, (this.uploadSpaceByRealm.get(attachment.realmId) ?? 0) + delta);
  }

  unindexAttachment(attachment: Attachment): void {
    if (!this.attachments.delete(attachment.id)) return;
    this.attachmentByPath.delete(attachment.pathId);
    this.uploadSpaceByRealm.set(attachment.realmId, (this.uploadSpaceByRealm.get(attachment.realmId) ?? 0) - attachment.size);
  }

  /** Sets a user's presence record and logs the change for "changed since" queries. */
  indexPresence(record: PresenceRecord): void {
    this.presence.set(record.userId, record);
    let log = this.presenceLogs.get(record.realmId);
    if (!log) this.presenceLogs.set(record.realmId, (log = new PresenceLog()));
    log.append(record.lastUpdateId, record.userId);
  }

  indexDraft(draft: Draft): void {
    let mine = this.draftsByUser.get(draft.userId);
    if (!mine) this.draftsByUser.set(draft.userId, (mine = new Map()));
    mine.set(draft.id, draft);
  }

  unindexDraft(userId: number, draftId: number): void {
    const mine = this.draftsByUser.get(userId);
    mine?.delete(draftId);
    if (mine?.size === 0) this.draftsByUser.delete(userId);
  }

  indexSavedSnippet(snippet: SavedSnippet): void {
    let mine = this.snippetsByUser.get(snippet.userId);
    if (!mine) this.snippetsByUser.set(snippet.userId, (mine = new Map()));
    mine.set(snippet.id, snippet);
  }

  unindexSavedSnippet(userId: number, snippetId: number): void {
    const mine = this.snippetsByUser.get(userId);
    mine?.delete(snippetId);
    if (mine?.size === 0) this.snippetsByUser.delete(userId);
  }

  indexScheduledMessage(scheduled: ScheduledMessage): void {
    this.scheduledMessages.set(scheduled.id, scheduled);
  }

  indexGroup(group: UserGroup): void {
    this.groups.set(group.id, group);
  }

  /** Loads every entity table of the registry, in registry order (realms before users before channels...). */
  #load(): void {
    for (const name of TABLE_NAMES) {
      const spec = TABLE_SPECS[name];
      if (spec.role !== "entity") continue;
      const load = this.#loaders[name];
      if (!load) throw new StorageError(`no loader for entity table ${name}`);
      const db = this.tables[name] as unknown as { getRange(options?: { start?: number }): Iterable<{ value: unknown }> };
      for (const { value } of db.getRange(spec.keys === "id" ? { start: FIRST_ID } : {})) load(value);
    }
  }

  close(): void {
    void this.tables.env.close();
  }
}

/** Meta key of the durable presence sequence bound (see presenceSeqCeiling). */
export const PRESENCE_CEILING_KEY = "presenceSeqCeiling";

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
