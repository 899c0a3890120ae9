/**
 * @module state
 * The store's in-memory state and its one write path. Entities whose number does not
 * grow with the history (realms, users, channels, subscriptions, groups, ...) are held
 * in memory, loaded at open. What grows with it stays in LMDB and is read on demand
 * into bounded caches: messages, bitmaps, direct-message conversations and per-user
 * topic policies (index/conversations.ts, index/user-topics.ts), so that opening a
 * store and its heap do not grow with the number of messages.
 *
 * Invariant: every change goes through `write()`, which runs one synchronous LMDB
 * transaction. In-memory entity maps are changed only by `afterCommit` callbacks, and
 * bitmap changes are rolled back if the transaction throws, so a failed call changes
 * nothing anywhere.
 */
import { BitmapStore } from "./index/bitmap-store.js";
import { MessageConversations } from "./index/message-conversations.js";
import { buildMembersIndex, Conversations } from "./index/conversations.js";
import { UserTopicPolicies } from "./index/user-topics.js";
import type { PresenceLog } from "./index/presence-log.js";
import type { Clearable, EntityIndex } from "./index/entities/entity-index.js";
import { createEntityIndexes, type EntityRegistry } from "./index/entities/registry.js";
import type { MessageRenderer, RenderFailure } from "./render.js";
import {
  FIRST_ID,
  forgetUncommittedStructures,
  OLDEST_SCHEMA_VERSION,
  openTables,
  SCHEMA_VERSION,
  TABLE_NAMES,
  TABLE_SPECS,
  type EntityTableName,
  type TableName,
  type Tables,
} from "./storage/tables.js";
import {
  messageMetaOf,
  type RecentConversation,
  type Attachment,
  type Channel,
  type Device,
  type Draft,
  type EmailChange,
  type Invite,
  type MessageMeta,
  type OutboxMail,
  type Playground,
  type PresenceRecord,
  type Realm,
  type RealmEmoji,
  type SavedSnippet,
  type ScheduledMessage,
  type Subscription,
  type User,
  type UserGroup,
} from "./types.js";
import { StorageError } from "./errors.js";
import {
  mergedSettings,
  type RealmSettingDefaultsRecord,
  type Settings,
  type UserSettingsRecord,
} from "./settings/defaults.js";
import type { Audience, Delivery, EngineEvent, EventBatch } from "./events/types.js";
import { encodeChangeSet, logEntryOf, trimChangeLog, type ChangeLogEntry } from "./events/change-log.js";
import { ChangeSetBuilder, changesOfEvent, everythingChanged } from "./events/change-set.js";
import type { Change, ChangeSet } from "./events/change-set.js";
import { getMessageRecord } from "./storage/message-records.js";

export interface Counters {
  nextMessageId: number;
  nextRealmId: number;
  nextUserId: number;
  nextChannelId: number;
  nextGroupId: number;
  nextConversationId: number;
  /** The next change-log sequence number (one per committed write that changed anything). */
  nextChangeSeq: number;
  nextScheduledMessageId: number;
  nextPlaygroundId: number;
  nextRealmEmojiId: number;
  nextDraftId: number;
  nextSavedSnippetId: number;
  nextDeviceId: number;
  nextPushOutboxId: number;
  nextInviteId: number;
  nextMailId: number;
  nextAttachmentId: number;
}

export interface StoreOptions {
  /**
   * Renderer for message content (the engine imports none: src/index.ts's openStore
   * passes Zulip-flavoured Markdown from src/markdown).
   */
  readonly renderer: MessageRenderer;
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
  /**
   * Fail every write that wrote a table whose change kind (storage/tables.ts) its change
   * set does not name. Costs a wrapper per table write; default: PARLEY_CHECK_CHANGES=1
   * in the environment (the test suite sets it).
   */
  readonly checkChanges?: boolean;
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
  /**
   * Declares a change that no emitted event names (events/change-set.ts): what the
   * write's event says changed is recorded by emit already.
   */
  changed(change: Change): void;
}

/** How many background reads prefetch the subscriptions table at open (LMDB runs them on libuv's threads). */
const PREFETCH_STRIPES = 16;
/** ...when the table spans at least this many leaf pages (2 MB; the 10M bench store's: 3,181). */
const PREFETCH_MIN_LEAF_PAGES = 512;
/** Bounds the muted-channel lists kept by mutedChannelsOf (cleared when full; rebuilding is cheap). */
const MAX_MUTED_CHANNEL_USERS = 100_000;

type PendingEvent = readonly [EngineEvent, () => Audience];

/** What one write (or one batch, or one write of a group commit) produced. */
class WriteUnit {
  readonly events: PendingEvent[] = [];
  readonly changes = new ChangeSetBuilder();
  /** Set by logging: the write's sequence number and change set (0 and null if it changed nothing). */
  seq = 0;
  changeSet: ChangeSet | null = null;

  context(afterCommit: (cb: () => void) => void): WriteContext {
    return {
      afterCommit,
      emit: (event, audience) => {
        this.events.push([event, audience]);
        changesOfEvent(event, this.changes);
      },
      changed: (change) => this.changes.add(change),
    };
  }
}

/**
 * One write waiting for a group commit: `prepare` does every check (it must not
 * write) and returns the write's body, run inside the shared transaction.
 */
interface GroupedWrite {
  readonly prepare: () => (ctx: WriteContext) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export class StoreState {
  readonly tables: Tables;
  readonly bitmaps: BitmapStore;
  /** Message ID -> conversation, filled on demand (the unread summary groups by it). */
  readonly messageConversations = new MessageConversations((id) => this.metaOf(id));
  readonly renderer: MessageRenderer;
  readonly now: () => number;

  /** The in-memory index of every entity table (index/entities/registry.ts). */
  readonly entities: EntityRegistry = createEntityIndexes({
    userChanged: (user, previous) => {
      if (previous === undefined || previous.isActive !== user.isActive) this.#activeSubscriberLists.clear();
      if (previous === undefined || previous.isActive !== user.isActive || previous.role !== user.role)
        this.#systemGroupMembers.clear();
    },
    subscriptionChanged: (sub) => this.#activeSubscriberLists.delete(sub.channelId),
    groupChanged: () => {
      this.#systemGroupMembers.clear();
      this.#systemGroupIds = null;
    },
  });

  // The registry's maps under the names callers use.
  get realms(): Map<number, Realm> {
    return this.entities.realms.byId;
  }
  get realmBySubdomain(): Map<string, number> {
    return this.entities.realms.bySubdomain;
  }
  get users(): Map<number, User> {
    return this.entities.users.byId;
  }
  /** `${realmId}:${lowercased email}` -> userId (API email and delivery email). */
  get userByEmail(): Map<string, number> {
    return this.entities.users.byEmail;
  }
  get userByApiKey(): Map<string, number> {
    return this.entities.users.byApiKey;
  }
  /** `${realmId}:${lowercased full name}` -> userIds (names are not unique). */
  get usersByName(): Map<string, number[]> {
    return this.entities.users.byName;
  }
  get channels(): Map<number, Channel> {
    return this.entities.channels.byId;
  }
  /** `${realmId}:${folded name}` -> channelId. */
  get channelByName(): Map<string, number> {
    return this.entities.channels.byName;
  }
  /** userId -> channelId -> subscription (active or not). */
  get subsByUser(): Map<number, Map<number, Subscription>> {
    return this.entities.subscriptions.byUser;
  }
  /** channelId -> userIds with an active subscription. */
  get subscribers(): Map<number, Set<number>> {
    return this.entities.subscriptions.subscribers;
  }
  /** Bumped per user on any subscription change: invalidates derived caches. */
  get subscriptionVersion(): ReadonlyMap<number, number> {
    return this.entities.subscriptions.versions;
  }
  get groups(): Map<number, UserGroup> {
    return this.entities.groups.byId;
  }
  /** userId -> the user's stored settings (only users who differ from Zulip's defaults). */
  get userSettings(): Map<number, UserSettingsRecord> {
    return this.entities.userSettings.byKey;
  }
  /** realmId -> the organization's defaults for new users (only realms that set any). */
  get realmSettingDefaults(): Map<number, RealmSettingDefaultsRecord> {
    return this.entities.realmSettingDefaults.byKey;
  }
  /** Every scheduled message (pending, failed or delivered), by ID. */
  get scheduledMessages(): Map<number, ScheduledMessage> {
    return this.entities.scheduledMessages.byKey;
  }
  /** userId -> presence; ahead of disk (index/entities/presence.ts). */
  get presence(): Map<number, PresenceRecord> {
    return this.entities.presence.byUser;
  }
  /** realmId -> its presence changes in sequence order (queries/presence.ts). */
  get presenceLogs(): Map<number, PresenceLog> {
    return this.entities.presence.logs;
  }
  get playgrounds(): Map<number, Playground> {
    return this.entities.playgrounds.byKey;
  }
  get realmEmoji(): Map<number, RealmEmoji> {
    return this.entities.realmEmoji.byKey;
  }
  /** userId -> draftId -> the user's stored drafts. */
  get draftsByUser(): Map<number, Map<number, Draft>> {
    return this.entities.drafts.byOwner;
  }
  /** userId -> savedSnippetId -> the user's saved snippets. */
  get snippetsByUser(): Map<number, Map<number, SavedSnippet>> {
    return this.entities.savedSnippets.byOwner;
  }
  get devices(): Map<number, Device> {
    return this.entities.devices.byId;
  }
  /** userId -> IDs of the user's devices. */
  get devicesByUser(): Map<number, Set<number>> {
    return this.entities.devices.byUser;
  }
  get invites(): Map<number, Invite> {
    return this.entities.invites.byId;
  }
  /** Confirmation key -> invitation ID. */
  get inviteByKey(): Map<string, number> {
    return this.entities.invites.byKey;
  }
  /** Confirmation key -> requested email change. */
  get emailChanges(): Map<string, EmailChange> {
    return this.entities.emailChanges.byKey;
  }
  /** Mail not yet delivered (pending or failed), by ID. */
  get outbox(): Map<number, OutboxMail> {
    return this.entities.outbox.byKey;
  }
  get attachments(): Map<number, Attachment> {
    return this.entities.attachments.byId;
  }
  /** pathId -> attachment ID. */
  get attachmentByPath(): Map<string, number> {
    return this.entities.attachments.byPath;
  }
  /** realmId -> bytes of every stored upload of the realm. */
  get uploadSpaceByRealm(): Map<number, number> {
    return this.entities.attachments.spaceByRealm;
  }

  /**
   * Sorted active subscribers per channel, built on first use and dropped when the
   * channel's subscriptions or any user's activity change: register and GET
   * /streams list every channel's subscribers, which at 10,000 users cost tens of
   * milliseconds to rebuild per request.
   */
  readonly #activeSubscriberLists = new Map<number, readonly number[]>();
  /** Members of role-based system groups, by group ID; dropped on any user or group change (rare next to reads). */
  readonly #systemGroupMembers = new Map<number, readonly number[]>();
  /**
   * Register's recent_private_conversations per user, with the version of the user's
   * `dm` bitmap it was computed from: building it reads the metadata of up to 1000
   * messages from LMDB (~10 ms). Any direct message to or from the user, or a deleted
   * one, changes that bitmap's version; conversations never change their members.
   */
  readonly recentConversationsCache = new Map<
    number,
    { readonly version: number; readonly list: readonly RecentConversation[] }
  >();
  /**
   * `${realmId}:${role}` -> system group ID, built on first use and dropped on any
   * group change: channel creation and channel defaults look up about ten per
   * channel, and each lookup used to scan every group.
   */
  #systemGroupIds: Map<string, number> | null = null;
  /** Direct-message conversations, by ID and by members (read on demand, cached). */
  readonly conversations: Conversations;
  /** Per-user topic policies (read per user on demand, cached). */
  readonly userTopics: UserTopicPolicies;
  /** Users whose presence changed since the last flush. */
  readonly presenceDirty = new Set<number>();
  /** The last presence sequence number handed out (one sequence for every realm: monotonic in each). */
  presenceSeq = 0;
  /** Durable bound on presenceSeq: no number above it was handed out before a crash. */
  presenceSeqCeiling = 0;
  /**
   * Every cache derived from the entity indexes, by name: a reload clears each (a
   * cache built from the undone write's effects must not survive it).
   */
  readonly #derivedCaches: Readonly<Record<string, Clearable>> = {
    activeSubscriberLists: this.#activeSubscriberLists,
    mutedChannels: { clear: () => this.#mutedChannels.clear() },
    systemGroupMembers: this.#systemGroupMembers,
    systemGroupIds: { clear: () => (this.#systemGroupIds = null) },
    recentConversations: this.recentConversationsCache,
    conversations: { clear: () => this.conversations.clear() },
    userTopics: { clear: () => this.userTopics.clear() },
  };

  readonly #listeners = new Set<(batch: EventBatch) => void>();
  readonly #changeListeners = new Set<(changes: ChangeSet) => void>();
  readonly #renderFailureListeners = new Set<(failure: RenderFailure) => void>();
  readonly #rollbackListeners = new Set<() => void>();
  readonly #commitHook: (() => void) | undefined;
  readonly #onListenerError: (error: unknown) => void;
  counters: Counters;
  #inWrite = false;
  /** The running batch() (or group-commit write), whose actions' events and changes it collects. */
  #batch: WriteUnit | null = null;
  /** With checkChanges: the tables written by the running write unit. */
  readonly #written: Set<TableName> | null;
  /** Writes waiting for the next group commit (see writeGrouped). */
  #grouped: GroupedWrite[] = [];
  #groupScheduled = false;

  constructor(dir: string, renderer: MessageRenderer, options: StoreOptions) {
    this.tables = openTables(dir, { noSync: options.noSync ?? false });
    this.bitmaps = new BitmapStore(this.tables, options.bitmapCacheBytes);
    this.conversations = new Conversations(this.tables);
    this.userTopics = new UserTopicPolicies(this.tables);
    this.renderer = renderer;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#commitHook = options.commitHook;
    this.#onListenerError =
      options.onListenerError ?? ((error) => console.error("parley engine: event listener failed", error));
    const checkChanges = options.checkChanges ?? process.env["PARLEY_CHECK_CHANGES"] === "1";
    this.#written = checkChanges ? this.#trackTableWrites() : null;
    const version = this.tables.meta.get("schemaVersion");
    if (
      version !== undefined &&
      (typeof version !== "number" || version < OLDEST_SCHEMA_VERSION || version > SCHEMA_VERSION)
    ) {
      throw new StorageError(
        `data directory has schema version ${String(version)}; this build reads versions ${OLDEST_SCHEMA_VERSION} to ${SCHEMA_VERSION} (a newer store needs a newer parley)`,
      );
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
      nextRealmEmojiId: 1,
      nextDraftId: 1,
      nextSavedSnippetId: 1,
      nextDeviceId: 1,
      nextPushOutboxId: 1,
      nextInviteId: 1,
      nextMailId: 1,
      nextAttachmentId: 1,
    };
    // Stores created before the change log have no sequence counter yet.
    this.counters.nextChangeSeq ??= 1;
    this.counters.nextScheduledMessageId ??= 1;
    this.counters.nextPlaygroundId ??= 1;
    this.counters.nextRealmEmojiId ??= 1;
    this.counters.nextDraftId ??= 1;
    this.counters.nextSavedSnippetId ??= 1;
    this.counters.nextDeviceId ??= 1;
    this.counters.nextPushOutboxId ??= 1;
    this.counters.nextInviteId ??= 1;
    this.counters.nextMailId ??= 1;
    this.counters.nextAttachmentId ??= 1;
    buildMembersIndex(this.tables);
    this.#load(true);
    const ceiling = this.tables.meta.get(PRESENCE_CEILING_KEY);
    this.presenceSeq = Math.max(this.presenceSeq, typeof ceiling === "number" ? ceiling : 0);
    this.presenceSeqCeiling = this.presenceSeq;
  }

  /** Runs `fn` as one LMDB write transaction; see the module invariant. */
  write<T>(fn: (ctx: WriteContext) => T): T {
    // Inside a batch, each action's changes become visible at once (later actions of
    // the batch depend on them); batch() restores everything if the whole fails, and
    // releases the batch's events only after it commits.
    const batch = this.#batch;
    if (batch) return fn(batch.context((cb) => cb()));
    if (this.#inWrite) throw new StorageError("nested write transaction");
    const after: (() => void)[] = [];
    const unit = new WriteUnit();
    const result = this.#transaction(
      () => {
        this.#written?.clear();
        const value = fn(unit.context((cb) => after.push(cb)));
        this.#logChanges(unit);
        return value;
      },
      () => undefined,
    );
    for (const cb of after) cb();
    this.#release(unit);
    return result;
  }

  /**
   * Group commit: queues a write to share one LMDB transaction, and so one fsync, with
   * every other grouped write that arrives before the queue is flushed (on the next
   * turn of the event loop; writes that arrive while a commit blocks the thread wait in
   * the sockets and join the one after). The promise settles only after the shared
   * commit returned, so an acknowledgement still means durable.
   *
   * Writes run in arrival order, each seeing the ones before it (as batch() does, their
   * afterCommit callbacks run at once; memory is reloaded if the commit fails). Each
   * keeps its own change-log entry and event batch, released after the commit. A
   * refusal from `prepare` rejects that write alone; a body that throws, or a failed
   * commit, undoes the whole group, after which a body error reruns the others each in
   * its own write, and a commit failure rejects every write of the group.
   */
  writeGrouped<T>(prepare: () => (ctx: WriteContext) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#grouped.push({ prepare, resolve: resolve as (value: unknown) => void, reject });
      if (this.#groupScheduled) return;
      this.#groupScheduled = true;
      setImmediate(() => this.#flushGrouped());
    });
  }

  #flushGrouped(): void {
    this.#groupScheduled = false;
    const group = this.#grouped.splice(0);
    if (group.length === 1) return this.#writeAlone(group[0]!);
    const outcomes: ({ ok: true; value: unknown; unit: WriteUnit } | { ok: false; error: unknown })[] = [];
    let bodyFailed = false;
    try {
      this.#transaction(
        () => {
          for (const entry of group) {
            let body: (ctx: WriteContext) => unknown;
            try {
              body = entry.prepare();
            } catch (error) {
              outcomes.push({ ok: false, error });
              continue;
            }
            const unit = new WriteUnit();
            this.#batch = unit;
            this.#written?.clear();
            try {
              const value = body(unit.context((cb) => cb()));
              this.#logChanges(unit);
              outcomes.push({ ok: true, value, unit });
            } catch (error) {
              bodyFailed = true;
              throw error;
            } finally {
              this.#batch = null;
            }
          }
        },
        () => this.#reload(),
      );
    } catch (error) {
      if (!bodyFailed) {
        for (const entry of group) entry.reject(error);
        return;
      }
      // A body failed half-way: the group was undone; each write now runs on its own,
      // so that only the failing one fails.
      for (const entry of group) this.#writeAlone(entry);
      return;
    }
    group.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) return entry.reject(outcome.error);
      this.#release(outcome.unit);
      entry.resolve(outcome.value);
    });
  }

  #writeAlone(entry: GroupedWrite): void {
    try {
      const body = entry.prepare();
      entry.resolve(this.write(body));
    } catch (error) {
      entry.reject(error);
    }
  }

  /**
   * Runs many actions as one transaction (bulk loads): bitmap chunks are written once
   * per batch instead of once per action. If anything throws, nothing is committed,
   * no event is released, and the in-memory state is reloaded from disk.
   */
  batch<T>(fn: () => T): T {
    if (this.#inWrite || this.#batch) throw new StorageError("nested batch");
    const unit = new WriteUnit();
    const result = this.#transaction(
      () => {
        this.#batch = unit;
        this.#written?.clear();
        try {
          const value = fn();
          this.#logChanges(unit);
          return value;
        } finally {
          this.#batch = null;
        }
      },
      () => this.#reload(),
    );
    this.#release(unit);
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
    let failed = false;
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
      this.messageConversations.clear();
      // Reads inside the failed transaction may have cached what it wrote.
      this.conversations.clear();
      this.userTopics.clear();
      forgetUncommittedStructures(this.tables);
      this.counters = savedCounters;
      onFailure();
      for (const listener of this.#rollbackListeners) listener();
      failed = true;
      throw error;
    } finally {
      this.#inWrite = false;
      // Whatever was derived from the undone write's in-memory effects must go (listeners
      // run outside the write: they may read, or write, the store).
      if (failed) this.#releaseChanges(everythingChanged());
    }
  }

  /**
   * Writes the change-log entry of a write that changed anything (its events and its
   * change set) and sets the unit's sequence number and change set; nothing if it
   * changed nothing.
   */
  #logChanges(unit: WriteUnit): void {
    if (this.#written) this.#checkDeclared(unit);
    if (unit.events.length === 0 && unit.changes.isEmpty) return;
    unit.seq = this.allocate("nextChangeSeq");
    unit.changeSet = unit.changes.build(unit.seq);
    const changes = unit.events.map(([event]) => logEntryOf(event));
    const events = unit.events.map(([event]) => event);
    const entry: ChangeLogEntry = { at: this.now(), changes, set: encodeChangeSet(unit.changeSet, events) };
    this.tables.changeLog.putSync(unit.seq, entry);
    trimChangeLog(this.tables, unit.seq);
  }

  /** Fails the write if it wrote a table whose change kind it did not declare (checkChanges). */
  #checkDeclared(unit: WriteUnit): void {
    for (const name of this.#written ?? []) {
      const kind = TABLE_SPECS[name].change;
      if (kind !== null && !unit.changes.has(kind)) {
        throw new StorageError(
          `a write changed table ${name} but its change set names no "${kind}" change: emit an event or call ctx.changed`,
        );
      }
    }
    this.#written?.clear();
  }

  /** Records which tables the running write unit writes (checkChanges): wraps each table's write methods. */
  #trackTableWrites(): Set<TableName> {
    const written = new Set<TableName>();
    for (const name of TABLE_NAMES) {
      const db = this.tables[name] as unknown as Record<"putSync" | "removeSync", (...args: unknown[]) => unknown>;
      for (const method of ["putSync", "removeSync"] as const) {
        const original = db[method].bind(db);
        db[method] = (...args: unknown[]) => {
          if (this.#inWrite) written.add(name);
          return original(...args);
        };
      }
    }
    return written;
  }

  /**
   * After the commit: the change set to change listeners, then the events (audiences
   * computed on the committed state) to event listeners; caches drop what changed
   * before any client hears of it.
   */
  #release(unit: WriteUnit): void {
    if (unit.changeSet !== null) this.#releaseChanges(unit.changeSet);
    if (unit.events.length === 0 || this.#listeners.size === 0) return;
    const deliveries: Delivery[] = unit.events.map(([event, audience]) => ({ event, audience: audience() }));
    this.dispatch({ seq: unit.seq, deliveries });
  }

  #releaseChanges(changes: ChangeSet): void {
    for (const listener of this.#changeListeners) {
      try {
        listener(changes);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /**
   * Releases changes made to memory only, outside any write (presence pings: the
   * presence table is written later by flushPresence, whose write declares them again).
   */
  changedInMemory(change: Change): void {
    if (this.#changeListeners.size === 0) return;
    const changes = new ChangeSetBuilder();
    changes.add(change);
    this.#releaseChanges(changes.build(0));
  }

  /** Subscribes to every committed write's change set (`everything` after a failed one); returns the unsubscriber. */
  onChanges(listener: (changes: ChangeSet) => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
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

  /** Messages stored with the renderer's fallback, reported once committed. */
  onRenderFailure(listener: (failure: RenderFailure) => void): () => void {
    this.#renderFailureListeners.add(listener);
    return () => this.#renderFailureListeners.delete(listener);
  }

  reportRenderFailure(failure: RenderFailure): void {
    for (const listener of this.#renderFailureListeners) listener(failure);
  }

  /** Called after a failed transaction (derived caches forget what they saw inside it). */
  onRollback(listener: () => void): () => void {
    this.#rollbackListeners.add(listener);
    return () => this.#rollbackListeners.delete(listener);
  }

  /** A message's meta, falling back to its record for data written before message_meta existed. */
  metaOf(id: number): MessageMeta | undefined {
    const meta = this.tables.messageMeta.get(id) as MessageMeta | undefined;
    if (meta) return meta;
    const message = getMessageRecord(this.tables, id);
    return message ? messageMetaOf(message) : undefined;
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

  // ---- in-memory index maintenance (called from afterCommit callbacks); see index/entities ----

  indexRealm(realm: Realm): void {
    this.entities.realms.add(realm);
  }

  /** Indexes a new user or a new version of one (the index finds the version it replaces). */
  indexUser(user: User): void {
    this.entities.users.add(user);
  }

  /** A user's effective settings: Zulip's defaults overlaid with what is stored. */
  settingsOf(userId: number): Settings {
    // Every send asks for the sender's settings; merging ~100 defaults each time showed
    // in its profile. Stored value objects are replaced, never changed, so the merge is
    // remembered per object (frozen: it is shared).
    const values = this.userSettings.get(userId)?.values;
    if (values === undefined) return (this.#defaultSettings ??= Object.freeze(mergedSettings()));
    let merged = this.#mergedSettings.get(values);
    if (merged === undefined) this.#mergedSettings.set(values, (merged = Object.freeze(mergedSettings(values))));
    return merged;
  }
  #defaultSettings: Settings | undefined;
  readonly #mergedSettings = new WeakMap<object, Settings>();

  /** What a new user of the realm starts with. */
  realmDefaultsOf(realmId: number): Settings {
    return mergedSettings(this.realmSettingDefaults.get(realmId)?.values);
  }

  /** Active users with an active subscription to the channel, ascending; shared, do not mutate. */
  activeSubscriberList(channelId: number): readonly number[] {
    let list = this.#activeSubscriberLists.get(channelId);
    if (list === undefined) {
      const out: number[] = [];
      for (const id of this.subscribers.get(channelId) ?? []) if (this.users.get(id)?.isActive) out.push(id);
      list = Object.freeze(out.sort((a, b) => a - b));
      this.#activeSubscriberLists.set(channelId, list);
    }
    return list;
  }

  /**
   * The channels a user is actively subscribed to and has muted, ascending. Kept per
   * subscription version (every subscription change bumps it): first_unread asks on
   * every request and would otherwise walk all of the user's subscriptions.
   */
  mutedChannelsOf(userId: number): readonly number[] {
    const version = this.subscriptionVersion.get(userId) ?? 0;
    const kept = this.#mutedChannels.get(userId);
    if (kept !== undefined && kept.version === version) return kept.channelIds;
    const channelIds: number[] = [];
    for (const sub of this.subsByUser.get(userId)?.values() ?? [])
      if (sub.active && sub.isMuted) channelIds.push(sub.channelId);
    const entry = { version, channelIds: Object.freeze(channelIds.sort((a, b) => a - b)) };
    if (this.#mutedChannels.size >= MAX_MUTED_CHANNEL_USERS) this.#mutedChannels.clear();
    this.#mutedChannels.set(userId, entry);
    return entry.channelIds;
  }
  readonly #mutedChannels = new Map<number, { readonly version: number; readonly channelIds: readonly number[] }>();

  /** The realm's bot IDs (active or not); live, do not mutate. */
  botsOfRealm(realmId: number): ReadonlySet<number> {
    return this.entities.users.botsOf(realmId);
  }

  /** Every user ID of the realm (active or not); live, do not mutate. */
  usersOfRealm(realmId: number): ReadonlySet<number> {
    return this.entities.users.ofRealm(realmId);
  }

  indexChannel(channel: Channel): void {
    this.entities.channels.add(channel);
  }

  indexSubscription(sub: Subscription): void {
    this.entities.subscriptions.add(sub);
  }

  /**
   * After a failed batch: every registered index (but one ahead of disk) and every
   * derived cache forgets, and the entity tables are loaded again.
   */
  #reload(): void {
    for (const index of Object.values(this.entities) as EntityIndex<unknown>[])
      if (index.aheadOfDisk !== true) index.clear();
    for (const cache of Object.values(this.#derivedCaches)) cache.clear();
    this.bitmaps.clearCache();
    this.#load();
  }

  indexInvite(invite: Invite): void {
    this.entities.invites.add(invite);
  }

  indexAttachment(attachment: Attachment): void {
    this.entities.attachments.add(attachment);
  }

  unindexAttachment(attachment: Attachment): void {
    this.entities.attachments.remove(attachment);
  }

  /** Sets a user's presence record and logs the change for "changed since" queries. */
  indexPresence(record: PresenceRecord): void {
    this.entities.presence.add(record);
  }

  indexDraft(draft: Draft): void {
    this.entities.drafts.add(draft);
  }

  unindexDraft(userId: number, draftId: number): void {
    this.entities.drafts.removeKey(userId, draftId);
  }

  indexSavedSnippet(snippet: SavedSnippet): void {
    this.entities.savedSnippets.add(snippet);
  }

  unindexSavedSnippet(userId: number, snippetId: number): void {
    this.entities.savedSnippets.removeKey(userId, snippetId);
  }

  indexDevice(device: Device): void {
    this.entities.devices.add(device);
  }

  unindexDevice(device: Device): void {
    this.entities.devices.remove(device);
  }

  indexScheduledMessage(scheduled: ScheduledMessage): void {
    this.entities.scheduledMessages.add(scheduled);
  }

  indexGroup(group: UserGroup): void {
    this.entities.groups.add(group);
  }
  /** The realm's system group with that role name ("role:members", ...), if any. */
  systemGroupIdOf(realmId: number, role: string): number | undefined {
    if (this.#systemGroupIds === null) {
      const ids = new Map<string, number>();
      for (const group of this.groups.values())
        if (group.systemRole != null && !ids.has(`${group.realmId}:${group.systemRole}`))
          ids.set(`${group.realmId}:${group.systemRole}`, group.id);
      this.#systemGroupIds = ids;
    }
    return this.#systemGroupIds.get(`${realmId}:${role}`);
  }

  /** Cached members of a system group, ascending; `compute` builds them on a miss. Shared, do not mutate. */
  systemGroupMembers(groupId: number, compute: () => number[]): readonly number[] {
    let list = this.#systemGroupMembers.get(groupId);
    if (list === undefined) {
      list = Object.freeze(compute().sort((a, b) => a - b));
      this.#systemGroupMembers.set(groupId, list);
    }
    return list;
  }

  /**
   * Loads every entity table into its index, in table order (realms before users before
   * channels...). `atOpen`: the first load of this process, when the table pages may not
   * be in memory.
   */
  #load(atOpen = false): void {
    for (const name of TABLE_NAMES) {
      const spec = TABLE_SPECS[name];
      if (spec.role !== "entity") continue;
      const index = this.entities[name as EntityTableName] as EntityIndex<unknown>;
      if (atOpen && name === "subscriptions") this.#prefetchSubscriptions();
      const db = this.tables[name] as unknown as {
        getRange(options?: { start?: number }): Iterable<{ value: unknown }>;
      };
      for (const { value } of db.getRange(spec.keys === "id" ? { start: FIRST_ID } : {})) index.add(value);
    }
    this.presenceSeq = Math.max(this.presenceSeq, this.entities.presence.highestSeq);
  }

  /**
   * Starts reading the subscriptions table's pages on LMDB's background threads, from
   * its far end, while this thread scans it from the start. Subscription records are
   * rewritten over the store's life, so their pages end up scattered across the file,
   * and a scan after a cold start waits on one random read after another: 1.3 s of a
   * 10M store's 1.5 s open. The keys are (user, channel); users are loaded by now, and
   * each prefetched key [user, 0] reads the page where that user's records start.
   * Measured on that store with a cold cache: open 0.41-0.44 s without, 0.28 s with.
   */
  #prefetchSubscriptions(): void {
    // Only for a table worth it: a close while prefetches run is deferred by lmdb-js
    // until they end, which a small store (tests that unmount its disk) need not wait for.
    const stats = this.tables.subscriptions.getStats() as { treeLeafPageCount?: number };
    if ((stats.treeLeafPageCount ?? 0) < PREFETCH_MIN_LEAF_PAGES) return;
    const users = [...this.users.keys()].sort((a, b) => a - b);
    const stripes: [number, number][][] = [];
    const stripeSize = Math.max(1, Math.ceil(users.length / PREFETCH_STRIPES));
    for (let i = 0; i < users.length; i += stripeSize)
      stripes.push(users.slice(i, i + stripeSize).map((id): [number, number] => [id, 0]));
    // Far end first: the scan here reaches the near stripes itself.
    for (const keys of stripes.reverse()) void this.tables.subscriptions.prefetch(keys, () => undefined);
  }

  close(): void {
    void this.tables.env.close();
  }
}

/** Meta key of the durable presence sequence bound (see presenceSeqCeiling). */
export const PRESENCE_CEILING_KEY = "presenceSeqCeiling";

export { channelKey, emailKey, nameKey } from "./index/keys.js";
export { userTopicKey } from "./index/user-topics.js";
