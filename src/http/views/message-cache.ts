/**
 * @module http/views/message-cache
 * Ready-to-send message JSON. Each message's reader-independent JSON is kept (per
 * view variant) as bytes ending in `,"flags":`; a response splices in the caller's
 * flags (interned, so their JSON is cached too) and closes the object. The whole
 * object for the last flag list served is kept too, so a repeated read is one copy.
 *
 * Invalidation, from the store's change sets (`dependencies` below): a message whose
 * content, topic, channel, reactions, submessages or existence changed drops its entries; a change
 * to a field a message object shows of its sender or DM participants (names, emails,
 * avatars), of its channel (the name) or of its realm (subdomain, empty topic name, edit history visibility)
 * drops everything. New messages and flag changes touch nothing cached.
 */
import type {
  ApiFlag,
  Dependencies,
  EntityChange,
  FieldOf,
  Message,
  MessageField,
  MessageWindow,
} from "../../engine/index.js";
import type { Store } from "../../engine/index.js";
import { DerivedCache, highlightsFromForms, messageTokenForms, type MessageTokenForms } from "../../engine/index.js";
import type { Realm } from "../../engine/index.js";
import { messageBody, type MessageViewOptions } from "../../wire/message.js";

const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const CLOSE = Buffer.from("}");
/** Longest stretch of rendering before other requests get a turn. */
const YIELD_AFTER_MS = 10;

function variantOf(options: MessageViewOptions): number {
  return (options.applyMarkdown ? 1 : 0) | (options.clientGravatar ? 2 : 0) | (options.allowEmptyTopicName ? 4 : 0);
}

interface Entry {
  /**
   * A comma, then the object's JSON up to and including `,"flags":`. Every item but a
   * window's first goes out with its comma in the same piece: half as many pieces to
   * join (a 1000-message window: 1,000 instead of 2,000).
   */
  readonly prefix: Buffer;
  /** The whole object, after its comma, for the last flag list served (flag lists are interned). */
  lastFlags: readonly ApiFlag[] | null;
  lastFull: Buffer | null;
  /** Content and topic token forms, made on the first search that returns the message. */
  forms: MessageTokenForms | null;
  /** The match fields (`,"match_content":…,"match_subject":…`) for the last search terms served. */
  lastTerms: string | null;
  lastMatch: Buffer | null;
  /** Counted in the budget: false once dropped (a yielding window may still be filling it in). */
  stored: boolean;
}

/** Which message changes alter its cached JSON (exhaustive: a new field must be classified). */
const SHOWN_MESSAGE_FIELDS: Readonly<Record<MessageField, boolean>> = {
  // A new ID: nothing cached under it yet.
  added: false,
  content: true,
  topic: true,
  channel: true,
  reactions: true,
  submessages: true,
  // edit_history and last_edit_timestamp (a history deletion changes nothing else).
  history: true,
  deleted: true,
};
/** Fields of other records that every message object showing them repeats (messageBody). */
const SHOWN_USER_FIELDS: ReadonlySet<string> = new Set<FieldOf<"user">>([
  "email",
  "deliveryEmail",
  "fullName",
  "avatarVersion",
]);
const SHOWN_CHANNEL_FIELDS: ReadonlySet<string> = new Set<FieldOf<"channel">>(["name"]);
const SHOWN_REALM_FIELDS: ReadonlySet<string> = new Set<FieldOf<"realm">>([
  "subdomain",
  "emptyTopicDisplayName",
  // The edit history visibility policy decides whether edit_history is shown.
  "messagePolicy",
]);

/** Whether any of the changes altered a shown field of an existing record. */
function altersShown(changes: ReadonlyMap<number, EntityChange<string>>, shown: ReadonlySet<string>): boolean {
  for (const change of changes.values()) {
    if (change.op !== "changed") continue;
    if (change.fields === null) return true;
    for (const field of change.fields) if (shown.has(field)) return true;
  }
  return false;
}

export class MessageJsonCache extends DerivedCache {
  readonly #store: Store;
  readonly #entries = new Map<number, Entry>();
  readonly #flagJson = new WeakMap<readonly ApiFlag[], Buffer>();
  /** A window's search terms as one string, the key of Entry.lastMatch. */
  readonly #termsKeys = new WeakMap<ReadonlySet<string>, string>();
  readonly #maxBytes: number;
  #bytes = 0;

  protected readonly dependencies: Dependencies = {
    message: (messages) => {
      for (const [id, change] of messages) if ([...change.fields].some((f) => SHOWN_MESSAGE_FIELDS[f])) this.#drop(id);
    },
    user: (users) => {
      if (altersShown(users, SHOWN_USER_FIELDS)) this.clear();
    },
    channel: (channels) => {
      if (altersShown(channels, SHOWN_CHANNEL_FIELDS)) this.clear();
    },
    realm: (realms) => {
      if (altersShown(realms, SHOWN_REALM_FIELDS)) this.clear();
    },
    // Per-reader state is spliced in per request; DM participants never change.
    flags: "ignore",
    conversation: "ignore",
    subscription: "ignore",
    userTopic: "ignore",
    group: "ignore",
    realmDefaults: "ignore",
    defaultChannels: "ignore",
    invites: "ignore",
    playgrounds: "ignore",
    // Every message object of the realm shows topic_links, which the realm's linkifiers make.
    linkifiers: () => this.clear(),
    channelFolder: "ignore",
    realmDomains: "ignore",
    profileFields: "ignore",
    userSettings: "ignore",
    password: "ignore",
    presence: "ignore",
    emailChange: "ignore",
    scheduledMessage: "ignore",
    // Rendered content keeps the emoji it was sent with.
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
    this.#store = store;
    this.#maxBytes = maxBytes;
  }

  /** The JSON array of a window's messages, as buffers to concatenate ("[", items, "]"). */
  windowJson(realm: Realm, window: MessageWindow, options: MessageViewOptions): Buffer[] {
    const parts: Buffer[] = [Buffer.from("[")];
    for (let i = 0; i < window.ids.length; i++) this.#append(parts, realm, window, i, options);
    parts.push(Buffer.from("]"));
    return parts;
  }

  /**
   * windowJson for the server: messages not yet cached are rendered here, which for a
   * cold 5000-message window is hundreds of milliseconds, so the work yields to the
   * event loop every YIELD_AFTER_MS and other requests are answered meanwhile. (IDs and
   * flags were fixed by the engine before; a message changed meanwhile is rendered as
   * it is now.)
   */
  async windowJsonYielding(
    realm: Realm,
    window: MessageWindow,
    options: MessageViewOptions,
    yieldAfterMs = YIELD_AFTER_MS,
  ): Promise<Buffer[]> {
    const parts: Buffer[] = [Buffer.from("[")];
    let sliceStart = performance.now();
    for (let i = 0; i < window.ids.length; i++) {
      if ((i & 31) === 31 && performance.now() - sliceStart >= yieldAfterMs) {
        // A follower catches up there (Store.nextTurn): the next slice reads one state.
        await this.#store.nextTurn();
        sliceStart = performance.now();
      }
      this.#append(parts, realm, window, i, options);
    }
    parts.push(Buffer.from("]"));
    return parts;
  }

  /** Appends the window's i-th message (with a comma after the first). */
  #append(parts: Buffer[], realm: Realm, window: MessageWindow, i: number, options: MessageViewOptions): void {
    const id = window.ids[i]!;
    const hidden = options.hiddenSenders;
    // A sender hidden from a limited guest: a placeholder entry for this request only.
    const senderId = hidden === undefined ? undefined : this.#store.findMessageRecord(id)?.senderId;
    const entry =
      senderId !== undefined && hidden?.has(senderId) === true
        ? this.#entry(realm, id, -1, options)
        : this.#entry(realm, id, variantOf(options), options);
    if (!entry) return;
    // The first item ("[" is the only piece so far) goes without its comma.
    const first = parts.length === 1;
    const flags = window.flags[i]!;
    if (window.searchTerms) {
      parts.push(
        first ? entry.prefix.subarray(1) : entry.prefix,
        this.#flags(flags),
        this.#match(entry, id, window.searchTerms),
        CLOSE,
      );
      return;
    }
    if (entry.lastFlags !== flags || entry.lastFull === null) {
      const full = Buffer.concat([entry.prefix, this.#flags(flags), CLOSE]);
      this.#grow(entry, full.length - (entry.lastFull?.length ?? 0));
      entry.lastFlags = flags;
      entry.lastFull = full;
    }
    parts.push(first ? entry.lastFull.subarray(1) : entry.lastFull);
  }

  /**
   * The match fields for a search result. Token forms are kept per message (the
   * content never changes in place; reactions drop the entry anyway), so a new search
   * is two splices per result, and a repeated one (paging, reopening) a copy.
   */
  #match(entry: Entry, id: number, terms: ReadonlySet<string>): Buffer {
    let termsKey = this.#termsKeys.get(terms);
    if (termsKey === undefined) this.#termsKeys.set(terms, (termsKey = [...terms].join("\u0000")));
    if (entry.lastTerms === termsKey && entry.lastMatch !== null) return entry.lastMatch;
    if (entry.forms === null) {
      const message = this.#store.findMessageRecord(id);
      if (!message) return Buffer.from(`,"match_content":"","match_subject":""`);
      entry.forms = messageTokenForms(message.renderedContent, message.topic);
      this.#grow(entry, entry.forms.bytes);
    }
    const matches = highlightsFromForms(entry.forms, terms);
    const match = Buffer.from(
      `,"match_content":${JSON.stringify(matches.matchContent)},"match_subject":${JSON.stringify(matches.matchSubject)}`,
    );
    this.#grow(entry, match.length - (entry.lastMatch?.length ?? 0));
    entry.lastTerms = termsKey;
    entry.lastMatch = match;
    if (this.#bytes > this.#maxBytes) this.#evict();
    return match;
  }

  get bytes(): number {
    return this.#bytes;
  }

  #entry(realm: Realm, id: number, variant: number, options: MessageViewOptions): Entry | null {
    const cacheKey = id * 8 + variant;
    const hit = variant < 0 ? undefined : this.#entries.get(cacheKey);
    if (hit) return hit;
    const message: Message | undefined = this.#store.findMessageRecord(id);
    if (!message) return null;
    const json = JSON.stringify(messageBody(this.#store, realm, message, options));
    const prefix = Buffer.from(`,${json.slice(0, -1)},"flags":`);
    // A budget of 0 (or a disposed cache) keeps nothing: the entry serves this request only.
    const stored = this.#maxBytes > 0 && !this.disposed && variant >= 0;
    const entry: Entry = {
      prefix,
      lastFlags: null,
      lastFull: null,
      forms: null,
      lastTerms: null,
      lastMatch: null,
      stored,
    };
    if (!stored) return entry;
    this.#entries.set(cacheKey, entry);
    this.#bytes += entry.prefix.length;
    if (this.#bytes > this.#maxBytes) this.#evict();
    return entry;
  }

  static #size(entry: Entry): number {
    return (
      entry.prefix.length + (entry.lastFull?.length ?? 0) + (entry.forms?.bytes ?? 0) + (entry.lastMatch?.length ?? 0)
    );
  }

  #flags(flags: readonly ApiFlag[]): Buffer {
    let json = this.#flagJson.get(flags);
    if (!json) this.#flagJson.set(flags, (json = Buffer.from(JSON.stringify(flags))));
    return json;
  }

  #grow(entry: Entry, bytes: number): void {
    if (entry.stored) this.#bytes += bytes;
  }

  protected clear(): void {
    for (const entry of this.#entries.values()) entry.stored = false;
    this.#entries.clear();
    this.#bytes = 0;
  }

  #drop(messageId: number): void {
    for (let variant = 0; variant < 8; variant++) {
      const entry = this.#entries.get(messageId * 8 + variant);
      if (entry) this.#remove(messageId * 8 + variant, entry);
    }
  }

  #remove(cacheKey: number, entry: Entry): void {
    this.#bytes -= MessageJsonCache.#size(entry);
    entry.stored = false;
    this.#entries.delete(cacheKey);
  }

  /** Drops the oldest entries (insertion order) down to 80% of the budget. */
  #evict(): void {
    for (const [k, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes * 0.8) break;
      this.#remove(k, entry);
    }
  }
}
