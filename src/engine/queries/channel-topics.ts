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
 */
import { canAccessChannelContent } from "../access.js";
import { BadRequestError } from "../errors.js";
import { DerivedCache, type ChangeSource, type Dependencies } from "../events/derived-cache.js";
import type { MessageChange } from "../events/change-set.js";
import { RoaringBitmap32, idsInRange, type Bitmap, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { BoundedCache } from "../index/bounded-cache.js";
import { key } from "../index/keys.js";
import type { TopicReader } from "../directory.js";
import type { User } from "../types.js";

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

  /** A list of these entries (distinct keys and maxIds), sorted once. */
  static of(entries: readonly TopicEntry[]): TopicList {
    const list = new TopicList();
    const ids = new Uint32Array(entries.length);
    entries.forEach((entry, i) => {
      list.byKey.set(entry.key, entry);
      list.byMax.set(entry.maxId, entry);
      list.bytes += bytesOf(entry);
      list.upTo = Math.max(list.upTo, entry.maxId);
      ids[i] = entry.maxId;
    });
    ids.sort();
    list.#sorted = new Array<TopicEntry>(ids.length);
    for (let i = 0; i < ids.length; i++) list.#sorted[ids.length - 1 - i] = list.byMax.get(ids[i]!)!;
    return list;
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
    this.byMax.delete(old.maxId);
    this.bytes -= bytesOf(old);
    this.#own().splice(this.#indexOf(old.maxId), 1);
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

  protected readonly dependencies: Dependencies = {
    message: (part) => this.#noteMoved(part),
    realm: "ignore",
    realmDefaults: "ignore",
    defaultChannels: "ignore",
    invites: "ignore",
    playgrounds: "ignore",
    channelFolder: "ignore",
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
    device: "ignore",
    attachment: "ignore",
    mail: "ignore",
    pushItem: "ignore",
    // Who may read which topic is decided per request (channelTopics); the lists hold every message.
    subscription: "ignore",
    userTopic: "ignore",
    flags: "ignore",
  };

  constructor(source: ChangeSource, reader: TopicReader, maxBytes = DEFAULT_CACHE_BYTES) {
    super(source);
    this.#reader = reader;
    this.#lists = new BoundedCache(maxBytes);
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

  protected clear(): void {
    this.#lists.clear();
    this.#moved.clear();
  }

  #noteMoved(part: ReadonlyMap<number, MessageChange>): void {
    // Nothing cached, nothing to correct: a bulk load's millions of added IDs cost a check.
    if (this.#lists.bytes === 0) return;
    for (const [id, change] of part) {
      const f = change.fields;
      if (f.has("topic") || f.has("channel") || f.has("deleted")) this.#moved.add(id);
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
    for (const [k, maxId] of this.#reader.bitmaps.maximaWithPrefix(key.channelTopic(channelId, ""))) {
      const meta = this.#reader.metaOf(maxId);
      if (meta !== undefined) entries.push({ key: k, name: meta[1], maxId });
    }
    return TopicList.of(entries);
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
  const channel = reader.channelDirectory.get(channelId);
  if (!channel || channel.isArchived || !canAccessChannelContent(reader, user, channel))
    throw new BadRequestError("Invalid channel ID");
  const all = index.topics(channel.id);
  if (channel.historyPublicToSubscribers) return all;
  const mine = received.restrictToPersonal(user.id, reader.bitmaps.get(key.channel(channel.id)));
  if (mine.isEmpty) return [];
  const oldest = mine.minimum();
  const out: ChannelTopic[] = [];
  let reordered = false;
  for (const topic of all) {
    // Newest first: every later topic ends before the caller's first message too.
    if (topic.maxId < oldest) break;
    if (mine.has(topic.maxId)) {
      out.push(topic);
      continue;
    }
    const visible = RoaringBitmap32.and(reader.bitmaps.get(topic.key), mine);
    const meta = visible.isEmpty ? undefined : reader.metaOf(visible.maximum());
    if (meta === undefined) continue;
    out.push({ name: meta[1], maxId: visible.maximum() });
    reordered = true;
  }
  if (reordered) out.sort((a, b) => b.maxId - a.maxId);
  return out;
}
