/**
 * @module http/views/window-cache
 * Whole GET /messages answers, kept as the bytes sent, per (user, request parameters),
 * so a repeated window (a client reopening a view, several tabs, a poll) is answered
 * without computing the window, its flags or joining its message JSON.
 *
 * A window depends on the realm's messages, the reader's flags, subscriptions and
 * mutes, and on everything a message object shows (names, channels, reactions). Every
 * change kind is classified in `dependencies` (exhaustive: a new kind must be
 * classified before this compiles): it drops nothing, the answers of the users it
 * names, the answers of its realm, or every answer. Classification errs on the side of
 * dropping.
 *
 * An answer is stored only if nothing was dropped between the start of its computation
 * and its end (`epoch`): a window computed before a change and finished after it (large
 * windows yield to the event loop while rendering) is sent, never kept. A key is stored
 * on its second miss since the last drop that touched it, so one-off windows cost no
 * owned copy of their bytes.
 */
import { DerivedCache, onlyFieldsChanged, type Dependencies, type FieldOf, type Store } from "../../engine/index.js";
import { ReadyReply } from "../respond.js";
import type { SuccessData } from "../reply.js";

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** Map and set bookkeeping per entry, on top of its key and body. */
const ENTRY_OVERHEAD = 160;

interface Entry {
  readonly userId: number;
  readonly realmId: number;
  /** The whole success answer; null: seen once, not stored yet. */
  readonly reply: ReadyReply | null;
  readonly bytes: number;
}

/** Fields no window shows or selects by: a change to only these keeps every answer. */
const UNSHOWN_USER_FIELDS: ReadonlySet<FieldOf<"user">> = new Set([
  "apiKey",
  "canChangeUserEmails",
  "canCreateUsers",
  "botConfig",
] as const);
const UNSHOWN_REALM_FIELDS: ReadonlySet<FieldOf<"realm">> = new Set([
  "name",
  "newChannelAnnouncementsChannelId",
  "canAddCustomEmojiGroup",
  "uuid",
] as const);

export class WindowReplyCache extends DerivedCache {
  readonly #entries = new Map<string, Entry>();
  readonly #byUser = new Map<number, Set<string>>();
  readonly #byRealm = new Map<number, Set<string>>();
  readonly #maxBytes: number;
  #bytes = 0;
  #hits = 0;

  /**
   * "users": only the named users' own windows change (their flags, mutes,
   * subscriptions, settings); "realm": every window of the realm (a message can be in a
   * window of anyone who may read it, public channels included); "clear": names,
   * emails, avatars, roles, channels and access, groups (permissions), the realm itself.
   */
  protected readonly dependencies: Dependencies = {
    message: (messages) => {
      const realms = new Set<number>();
      for (const change of messages.values()) realms.add(change.realmId);
      for (const realmId of realms) this.#dropKeys(this.#byRealm.get(realmId));
    },
    flags: (flags) => this.#dropUsers(flags.keys()),
    subscription: (subscriptions) => this.#dropUsers(subscriptions.keys()),
    userTopic: (userTopics) => this.#dropUsers(userTopics.keys()),
    userSettings: (settings) => this.#dropUsers(settings.keys()),
    user: (users) => {
      if (!onlyFieldsChanged(users, UNSHOWN_USER_FIELDS)) this.clear();
    },
    channel: "clear",
    realm: (realms) => {
      if (!onlyFieldsChanged(realms, UNSHOWN_REALM_FIELDS)) this.clear();
    },
    group: "clear",
    // A new conversation comes with its first message (realm scope above).
    conversation: "ignore",
    // Nothing a message window shows or selects by.
    realmDefaults: "ignore",
    defaultChannels: "ignore",
    invites: "ignore",
    playgrounds: "ignore",
    linkifiers: "ignore",
    channelFolder: "ignore",
    realmDomains: "ignore",
    profileFields: "ignore",
    password: "ignore",
    presence: "ignore",
    emailChange: "ignore",
    scheduledMessage: "ignore",
    realmEmoji: "ignore",
    draft: "ignore",
    savedSnippet: "ignore",
    userStatus: "ignore",
    mutedUsers: "ignore",
    alertWords: "ignore",
    botStorage: "ignore",
    legacyPushTokens: "ignore",
    webSession: "ignore",
    // A rename of topic rows also names each of their messages (topic, history): handled with those.
    topic: "ignore",
    navigationViews: "ignore",
    device: "ignore",
    attachment: "ignore",
    mail: "ignore",
    missedEmail: "ignore",
    pushItem: "ignore",
    webhookItem: "ignore",
  };

  constructor(store: Store, maxBytes = DEFAULT_MAX_BYTES) {
    super(store);
    this.#maxBytes = maxBytes;
  }

  /** Bumped by every drop; compare before and after computing an answer. */
  get epoch(): number {
    return this.generation;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Answers served from the cache so far. */
  get hits(): number {
    return this.#hits;
  }

  get size(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.reply) n++;
    return n;
  }

  /** The stored answer for this user and key. */
  get(userId: number, key: string): ReadyReply | null {
    if (this.#maxBytes <= 0 || this.disposed) return null;
    const full = `${userId}\u0000${key}`;
    const entry = this.#entries.get(full);
    if (!entry?.reply) return null;
    // Least recently used goes first on eviction.
    this.#entries.delete(full);
    this.#entries.set(full, entry);
    this.#hits++;
    return entry.reply;
  }

  /**
   * The answer to send for freshly computed data. Stored (and returned as one buffer)
   * on the key's second miss when nothing was dropped since `epochAtStart`; otherwise
   * the data goes out as it is.
   */
  put(userId: number, realmId: number, key: string, epochAtStart: number, data: SuccessData): SuccessData | ReadyReply {
    if (this.#maxBytes <= 0 || this.disposed || epochAtStart !== this.generation) return data;
    const full = `${userId}\u0000${key}`;
    const seen = this.#entries.get(full);
    if (!seen) {
      this.#add(full, { userId, realmId, reply: null, bytes: ENTRY_OVERHEAD + full.length * 2 });
      return data;
    }
    this.#remove(full, seen);
    const reply = ReadyReply.of(data);
    const entry: Entry = { userId, realmId, reply, bytes: ENTRY_OVERHEAD + full.length * 2 + reply.body.length };
    if (entry.bytes <= this.#maxBytes / 4) this.#add(full, entry);
    return reply;
  }

  #add(full: string, entry: Entry): void {
    this.#entries.set(full, entry);
    this.#bytes += entry.bytes;
    let forUser = this.#byUser.get(entry.userId);
    if (!forUser) this.#byUser.set(entry.userId, (forUser = new Set()));
    forUser.add(full);
    let forRealm = this.#byRealm.get(entry.realmId);
    if (!forRealm) this.#byRealm.set(entry.realmId, (forRealm = new Set()));
    forRealm.add(full);
    if (this.#bytes > this.#maxBytes) this.#evict();
  }

  #remove(full: string, entry: Entry): void {
    this.#entries.delete(full);
    this.#bytes -= entry.bytes;
    this.#byUser.get(entry.userId)?.delete(full);
    this.#byRealm.get(entry.realmId)?.delete(full);
  }

  /** Drops the least recently used entries down to 80% of the budget. */
  #evict(): void {
    for (const [full, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes * 0.8) break;
      this.#remove(full, entry);
    }
  }

  #dropKeys(keys: Set<string> | undefined): void {
    if (!keys) return;
    for (const full of [...keys]) {
      const entry = this.#entries.get(full);
      if (entry) this.#remove(full, entry);
    }
  }

  #dropUsers(userIds: Iterable<number>): void {
    for (const userId of userIds) this.#dropKeys(this.#byUser.get(userId));
  }

  protected clear(): void {
    this.#entries.clear();
    this.#byUser.clear();
    this.#byRealm.clear();
    this.#bytes = 0;
  }
}
