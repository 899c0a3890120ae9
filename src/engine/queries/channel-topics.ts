/**
 * @module queries/channel-topics
 * GET /users/me/{stream_id}/topics (Zulip's get_topic_history_for_stream): the topics of
 * a channel that hold messages the caller may read, each with the newest such message ID,
 * newest first, and named as that message spells it. Topics differing only in case are
 * one topic, as in Zulip (here: one topic bitmap, key.channelTopic folds the name).
 *
 * Derived from the topic bitmaps, never by decoding a channel's messages: a channel's
 * list is built from each of its topic bitmaps' newest ID (one chunk read per topic,
 * BitmapStore.maximaWithPrefix) and that one message's meta, then kept by
 * ChannelTopicIndex, a DerivedCache following the store's change sets:
 * - new messages: read from the channel bitmap above the highest ID applied, at the
 *   next read (a send costs the cache nothing);
 * - a message whose topic or channel changed, or that was deleted: the topic it was
 *   the newest message of, and the topic it is in now, are stale and recomputed from
 *   their bitmaps at the next read of their channel.
 *
 * A private channel with protected history lists, per topic, the newest message the
 * caller has (received, sent or a historical row), as Zulip's join on UserMessage does.
 *
 * A list not cached is built (and a protected channel's filtered) in pages of
 * PAGE_TOPICS topics, one per turn of the event loop, by the asynchronous variants (the
 * HTTP route's): the first listing of a 100,000-topic channel read ~100,000 chunks and
 * metas and held the loop over a second. Writes between pages are caught up as in the
 * cache: messages sent from the build's start on are applied after it, and messages
 * moved or deleted meanwhile mark their topics stale.
 */
import { canAccessChannelContent } from "../access.js";
import { BadRequestError } from "../errors.js";
import { DerivedCache, type ChangeSource, type Dependencies } from "../events/derived-cache.js";
import type { MessageChange } from "../events/change-set.js";
import { RoaringBitmap32, idsInRange, type Bitmap, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { BoundedCache } from "../index/bounded-cache.js";
import { key } from "../index/keys.js";
import type { TopicReader } from "../directory.js";
import type { Channel, User } from "../types.js";

export interface ChannelTopic {
  /** As the newest message the caller may read spells it; "" for the empty topic. */
  readonly name: string;
  readonly maxId: number;
}

/** One topic of a cached list; replaced, never changed, so that answers may share it. */
export interface TopicEntry extends ChannelTopic {
  /** Its bitmap's key (key.channelTopic). */
  readonly key: string;
}

/** Per entry: the object, two map slots and an array slot, beside the name and key strings. */
const ENTRY_BYTES = 200;
/** Per list, so that a cached list of no topics still counts. */
const LIST_BYTES = 200;
const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;
/** Messages moved or deleted since the last read beyond which every list is dropped instead. */
const MAX_PENDING_MOVES = 200_000;
/** Topics read (a chunk and a meta each) or filtered per turn by the asynchronous builds: a few ms. */
export const PAGE_TOPICS = 500;

/** Lets other work run before the next page (a store's: a follower catches up there, see Store.nextTurn). */
const nextImmediate = () => new Promise<void>((resolve) => setImmediate(resolve));

function bytesOf(entry: TopicEntry): number {
  return ENTRY_BYTES + 2 * (entry.name.length + entry.key.length);
}

class TopicList {
  readonly byKey = new Map<string, TopicEntry>();
  readonly byMax = new Map<number, TopicEntry>();
  /** The highest message ID of the channel applied. */
  upTo = 0;
  /** Keys to recompute from their bitmaps at the next read. */
  readonly stale = new Set<string>();
  bytes = LIST_BYTES;
  /** Every entry, newest first; copied before a change once handed out (answers share it). */
  #sorted: TopicEntry[] = [];
  #shared = false;

  /**
   * A list of these entries (distinct keys and maxIds), sorted once. `upTo`: the channel's
   * messages applied (default: the newest entry's); later ones are applied by catching up.
   */
  static of(entries: readonly TopicEntry[], upTo?: number): TopicList {
    const list = new TopicList();
    list.gather(entries);
    return list.sortGathered(upTo);
  }

  /** Adds entries before the list is sorted (a page at a time). */
  gather(entries: readonly TopicEntry[]): void {
    for (const entry of entries) {
      // Read a page apart, two topics may name one message that moved between them:
      // both are recomputed from their bitmaps at the first read.
      const other = this.byMax.get(entry.maxId);
      if (other) {
        this.stale.add(other.key).add(entry.key);
        continue;
      }
      this.byKey.set(entry.key, entry);
      this.byMax.set(entry.maxId, entry);
      this.bytes += bytesOf(entry);
      this.upTo = Math.max(this.upTo, entry.maxId);
    }
  }

  /** Sorts what was gathered, newest first; `upTo` as in of(). */
  sortGathered(upTo?: number): this {
    if (upTo !== undefined) this.upTo = upTo;
    const ids = new Uint32Array(this.byMax.size);
    let n = 0;
    for (const maxId of this.byMax.keys()) ids[n++] = maxId;
    ids.sort();
    this.#sorted = new Array<TopicEntry>(n);
    for (let i = 0; i < n; i++) this.#sorted[n - 1 - i] = this.byMax.get(ids[i]!)!;
    return this;
  }

  set(entry: TopicEntry): void {
    this.delete(entry.key);
    this.byKey.set(entry.key, entry);
    this.byMax.set(entry.maxId, entry);
    this.bytes += bytesOf(entry);
    this.#own().splice(this.#indexOf(entry.maxId), 0, entry);
  }

  delete(k: string): void {
    const old = this.byKey.get(k);
    if (!old) return;
    this.byKey.delete(k);
    // While stale topics are recomputed one by one, two may briefly name the same message.
    if (this.byMax.get(old.maxId) === old) this.byMax.delete(old.maxId);
    this.bytes -= bytesOf(old);
    const sorted = this.#own();
    let at = this.#indexOf(old.maxId);
    while (at < sorted.length && sorted[at] !== old && sorted[at]!.maxId === old.maxId) at++;
    if (sorted[at] === old) sorted.splice(at, 1);
  }

  newestFirst(): readonly TopicEntry[] {
    this.#shared = true;
    return this.#sorted;
  }

  #own(): TopicEntry[] {
    if (this.#shared) {
      this.#sorted = this.#sorted.slice();
      this.#shared = false;
    }
    return this.#sorted;
  }

  /** Where maxId is, or goes, in the newest-first order (a send's topic: at the front, at once). */
  #indexOf(maxId: number): number {
    const sorted = this.#sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]!.maxId > maxId) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The channels' topic lists, kept up to date from the store's change sets (see the module comment). */
export class ChannelTopicIndex extends DerivedCache {
  readonly #reader: TopicReader;
  readonly #lists: BoundedCache<number, TopicList>;
  /** Messages moved or deleted since the lists were last brought up to date. */
  #moved = new Set<number>();
  /**
   * Lists being built a page per turn, by channel (concurrent first reads share one),
   * with the messages moved or deleted since the build began.
   */
  readonly #building = new Map<number, { readonly list: Promise<TopicList>; readonly moved: Set<number> }>();
  /** Bumped by clear(): a build that saw it change started over. */
  #generation = 0;
  #movedCount = 0;

  protected readonly dependencies: Dependencies = {
    message: (part) => this.#noteMoved(part),
    realm: "ignore",
    realmDefaults: "ignore",
    defaultChannels: "ignore",
    invites: "ignore",
    playgrounds: "ignore",
    linkifiers: "ignore",
    channelFolder: "ignore",
    realmDomains: "ignore",
    profileFields: "ignore",
    user: "ignore",
    userSettings: "ignore",
    password: "ignore",
    presence: "ignore",
    emailChange: "ignore",
    channel: "ignore",
    group: "ignore",
    conversation: "ignore",
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
    // Who may read which topic is decided per request (channelTopics); the lists hold every message.
    subscription: "ignore",
    userTopic: "ignore",
    flags: "ignore",
  };

  /** Topics per page of the asynchronous builds and filters. */
  readonly pageTopics: number;

  /** How the asynchronous builds and filters yield between pages. */
  readonly nextTurn: () => Promise<void>;

  constructor(
    source: ChangeSource,
    reader: TopicReader,
    maxBytes = DEFAULT_CACHE_BYTES,
    pageTopics = PAGE_TOPICS,
    nextTurn: () => Promise<void> = nextImmediate,
  ) {
    super(source);
    this.#reader = reader;
    this.#lists = new BoundedCache(maxBytes);
    this.pageTopics = pageTopics;
    this.nextTurn = nextTurn;
  }

  /** Every topic of the channel holding a message, newest first. Shared: do not mutate. */
  topics(channelId: number): readonly TopicEntry[] {
    this.#applyMoves();
    const keep = !this.disposed;
    let list = keep ? this.#lists.get(channelId) : undefined;
    if (list && !this.#catchUp(channelId, list)) list = undefined;
    if (!list) {
      list = this.#build(channelId);
      if (keep) this.#lists.set(channelId, list, list.bytes);
    }
    return list.newestFirst();
  }

  /**
   * topics(), building a list not cached a page per turn (see the module comment), so
   * the first listing of a huge channel does not hold the event loop.
   */
  async topicsAsync(channelId: number): Promise<readonly TopicEntry[]> {
    this.#applyMoves();
    if (this.disposed) return this.topics(channelId);
    let list = this.#lists.get(channelId);
    if (list && !this.#catchUp(channelId, list)) list = undefined;
    if (!list) {
      let building = this.#building.get(channelId);
      if (!building) {
        const moved = new Set<number>();
        building = {
          list: this.#buildInPages(channelId, moved).finally(() => this.#building.delete(channelId)),
          moved,
        };
        this.#building.set(channelId, building);
      }
      list = await building.list;
      if (!this.disposed && this.#lists.peek(channelId) !== list) this.#lists.set(channelId, list, list.bytes);
      // What was written while the last page was read (and after): the same catch-up as a cached list's.
      return this.topics(channelId);
    }
    return list.newestFirst();
  }

  /**
   * Grows with every message moved or deleted (and every clear): a reader of topic bitmaps
   * across turns knows whether they changed under it.
   */
  get changes(): number {
    return this.#movedCount + this.#generation;
  }

  protected clear(): void {
    this.#lists.clear();
    this.#moved.clear();
    this.#generation++;
  }

  /**
   * #build, a page per turn; started over if the cache is cleared meanwhile (a failed
   * write). `moved` collects the messages moved or deleted while it runs: the topics
   * they left or entered may have been read before, and are marked stale.
   */
  async #buildInPages(channelId: number, moved: Set<number>): Promise<TopicList> {
    for (;;) {
      const generation = this.#generation;
      moved.clear();
      const prefix = key.channelTopic(channelId, "");
      // Messages from here on are applied by catching up, whichever page their topic was read in.
      const channel = this.#reader.bitmaps.get(key.channel(channelId));
      const upTo = channel.isEmpty ? 0 : channel.maximum();
      const list = new TopicList();
      let from: string | null = null;
      do {
        const page = this.#reader.bitmaps.maximaPage(prefix, from, this.pageTopics);
        const entries: TopicEntry[] = [];
        this.#addEntries(entries, page.maxima);
        list.gather(entries);
        from = page.next;
        await this.nextTurn();
      } while (from !== null && generation === this.#generation);
      if (generation !== this.#generation) continue;
      list.sortGathered(upTo);
      for (const id of moved) this.#markStale(id, channelId, list);
      return list;
    }
  }

  /** Marks the topic of `list` (channel `channelId`) that `id` was the newest of, and the one it is in now. */
  #markStale(id: number, channelId: number, list: TopicList): void {
    const left = list.byMax.get(id);
    if (left) list.stale.add(left.key);
    const meta = this.#reader.metaOf(id);
    if (meta !== undefined && meta[0] === channelId) list.stale.add(key.channelTopic(meta[0], meta[1]));
  }

  #noteMoved(part: ReadonlyMap<number, MessageChange>): void {
    // Nothing cached or being built, nothing to correct: a bulk load's millions of added IDs cost a check.
    if (this.#lists.bytes === 0 && this.#building.size === 0) return;
    for (const [id, change] of part) {
      const f = change.fields;
      if (!f.has("topic") && !f.has("channel") && !f.has("deleted")) continue;
      this.#movedCount++;
      this.#moved.add(id);
      for (const { moved } of this.#building.values()) moved.add(id);
    }
    if (this.#moved.size > MAX_PENDING_MOVES) this.clear();
  }

  /** Marks the topics each moved message left (if it was their newest) and entered. */
  #applyMoves(): void {
    if (this.#moved.size === 0) return;
    const lists = this.#lists.entries();
    for (const id of this.#moved) {
      for (const [, list] of lists) {
        const left = list.byMax.get(id);
        if (left) list.stale.add(left.key);
      }
      const meta = this.#reader.metaOf(id);
      if (meta === undefined || meta[0] <= 0) continue;
      this.#lists.peek(meta[0])?.stale.add(key.channelTopic(meta[0], meta[1]));
    }
    this.#moved.clear();
  }

  #build(channelId: number): TopicList {
    const entries: TopicEntry[] = [];
    // key.channelTopic of "" is the prefix every topic key of the channel starts with.
    this.#addEntries(entries, this.#reader.bitmaps.maximaWithPrefix(key.channelTopic(channelId, "")));
    return TopicList.of(entries);
  }

  #addEntries(entries: TopicEntry[], maxima: readonly [string, number][]): void {
    for (const [k, maxId] of maxima) {
      const meta = this.#reader.metaOf(maxId);
      if (meta !== undefined) entries.push({ key: k, name: meta[1], maxId });
    }
  }

  /**
   * Applies the messages sent since the list was brought up to date, then recomputes its
   * stale topics; false when so many were sent that building the list again costs less.
   */
  #catchUp(channelId: number, list: TopicList): boolean {
    const channel = this.#reader.bitmaps.getFrom(key.channel(channelId), list.upTo + 1);
    const fresh = channel.isEmpty ? 0 : channel.rangeCardinality(list.upTo + 1, channel.maximum() + 1);
    // Building reads a chunk and a meta per topic; catching up, a meta per new message.
    if (fresh > list.byKey.size + 1000) return false;
    const before = list.bytes;
    if (fresh > 0) {
      for (const id of idsInRange(channel, list.upTo + 1)) {
        const meta = this.#reader.metaOf(id);
        if (meta === undefined || meta[0] !== channelId) continue;
        const k = key.channelTopic(channelId, meta[1]);
        const known = list.byKey.get(k);
        if (!known || known.maxId < id) list.set({ key: k, name: meta[1], maxId: id });
      }
      list.upTo = channel.maximum();
    }
    for (const k of list.stale) {
      const bitmap = this.#reader.bitmaps.get(k);
      const maxId = bitmap.isEmpty ? 0 : bitmap.maximum();
      const meta = maxId === 0 ? undefined : this.#reader.metaOf(maxId);
      if (meta === undefined) list.delete(k);
      else list.set({ key: k, name: meta[1], maxId });
    }
    list.stale.clear();
    if (list.bytes !== before) this.#lists.resize(channelId, list.bytes - before);
    return true;
  }
}

/** What the topic list needs of the received sets: the caller's messages among some. */
export interface PersonalMessages {
  restrictToPersonal(userId: number, x: ReadonlyBitmap): Bitmap;
}

/**
 * The channel's topics as `user` may list them. Zulip's access_stream_by_id: a channel
 * that does not exist, is archived, or whose content the user may not read (a private
 * one they are not subscribed to) is "Invalid channel ID".
 */
export function channelTopics(
  reader: TopicReader,
  received: PersonalMessages,
  index: ChannelTopicIndex,
  user: User,
  channelId: number,
): readonly ChannelTopic[] {
  const channel = listedChannel(reader, user, channelId);
  const all = index.topics(channel.id);
  if (channel.historyPublicToSubscribers) return all;
  const personal = new PersonalTopics(reader, received, user, channel.id);
  personal.filter(all, 0, all.length);
  return personal.done();
}

/** channelTopics, building an uncached list and filtering a protected one a page per turn. */
export async function channelTopicsAsync(
  reader: TopicReader,
  received: PersonalMessages,
  index: ChannelTopicIndex,
  user: User,
  channelId: number,
): Promise<readonly ChannelTopic[]> {
  const channel = listedChannel(reader, user, channelId);
  const all = await index.topicsAsync(channel.id);
  if (channel.historyPublicToSubscribers) return all;
  // Filtered against the caller's messages as of the start; a message moved or deleted
  // meanwhile may have left a topic already filtered for one not filtered yet: then
  // again, and after a few tries in one turn.
  for (let attempt = 0; attempt < MAX_FILTER_ATTEMPTS; attempt++) {
    const changes = index.changes;
    const list = attempt === 0 ? all : await index.topicsAsync(channel.id);
    const personal = new PersonalTopics(reader, received, user, channel.id);
    const page = index.pageTopics;
    for (let from = 0; from < list.length && !personal.finished; from += page) {
      if (from > 0) await index.nextTurn();
      personal.filter(list, from, Math.min(list.length, from + page));
    }
    if (index.changes === changes) return personal.done();
  }
  return channelTopics(reader, received, index, user, channelId);
}

/** Tries of a protected channel's paged filter before it is done in one turn. */
const MAX_FILTER_ATTEMPTS = 3;

/**
 * Zulip's access_stream_by_id: a channel that does not exist, is archived, or whose
 * content the user may not read (a private one they are not subscribed to) is "Invalid
 * channel ID".
 */
function listedChannel(reader: TopicReader, user: User, channelId: number): Channel {
  const channel = reader.channelDirectory.get(channelId);
  if (!channel || channel.isArchived || !canAccessChannelContent(reader, user, channel))
    throw new BadRequestError("Invalid channel ID");
  return channel;
}

/** A protected channel's topics as one caller has them: per topic, the newest message that is theirs. */
class PersonalTopics {
  readonly #reader: TopicReader;
  readonly #mine: ReadonlyBitmap;
  readonly #out: ChannelTopic[] = [];
  #reordered = false;
  /** Past the caller's first message: no later topic can hold one of theirs. */
  finished: boolean;

  constructor(reader: TopicReader, received: PersonalMessages, user: User, channelId: number) {
    this.#reader = reader;
    this.#mine = received.restrictToPersonal(user.id, reader.bitmaps.get(key.channel(channelId)));
    this.finished = this.#mine.isEmpty;
  }

  /** Takes topics [from, to) of the newest-first list. */
  filter(all: readonly TopicEntry[], from: number, to: number): void {
    const mine = this.#mine;
    if (this.finished) return;
    const oldest = mine.minimum();
    for (let i = from; i < to; i++) {
      const topic = all[i]!;
      // Newest first: every later topic ends before the caller's first message too.
      if (topic.maxId < oldest) {
        this.finished = true;
        return;
      }
      if (mine.has(topic.maxId)) {
        this.#out.push(topic);
        continue;
      }
      const visible = RoaringBitmap32.and(this.#reader.bitmaps.get(topic.key), mine);
      const meta = visible.isEmpty ? undefined : this.#reader.metaOf(visible.maximum());
      if (meta === undefined) continue;
      this.#out.push({ name: meta[1], maxId: visible.maximum() });
      this.#reordered = true;
    }
  }

  done(): readonly ChannelTopic[] {
    if (this.#reordered) this.#out.sort((a, b) => b.maxId - a.maxId);
    return this.#out;
  }
}
