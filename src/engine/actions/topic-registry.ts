/**
 * @module actions/topic-registry
 * The topic registry: a row per topic of a channel (TopicRow: its name and the renames
 * of the whole topic), which channel message records written since schema 5 name
 * (Message.topicRef) instead of holding their topic themselves. Renaming a whole topic
 * within its channel (resolve, unresolve, change_all) then writes its rows, not its
 * thousand records: storage/topic-rows gives each record the row's name and, as the
 * newest entries of its edit history, the row's renames made since the record was
 * written.
 *
 * Placement: every write of a channel message's record goes through `TopicPlacer`: a
 * record that stays where its row is keeps it; one in a new place (sent, moved one by
 * one or to another channel, or renamed with a topic that still has older records) joins
 * the row of that place, created if there is none (several rows may share a name after
 * topics merge: a send takes the lowest). The bitmap `tr:<row>` holds the messages
 * naming each row: a rename goes by reference when those of the rows of the old name
 * are the whole topic (no record of an older store left in it).
 *
 * topic_names ([channelId, folded name, rowId] -> name) finds the rows of a place; it
 * lives in LMDB, so followers and workers read it as the writer left it.
 */
import { key, foldTopic } from "../index/keys.js";
import { RoaringBitmap32, type ReadonlyBitmap } from "../index/bitmap-store.js";
import type { StoreState } from "../state.js";
import { getTopicRow, putTopicRow } from "../storage/topic-rows.js";
import type { Tables } from "../storage/tables.js";
import type { Message, TopicRename, TopicRow } from "../types.js";
import type { WriteContext } from "../write-coordinator.js";

/** Above every uint32 row ID: the end of a [channelId, folded] range of topic_names. */
const PAST_ROW_IDS = 2 ** 32;

/** The rows of a channel whose name folds as `topic` does, with their names, by ascending ID. */
export function rowsOfTopic(tables: Tables, channelId: number, topic: string): { id: number; name: string }[] {
  const folded = foldTopic(topic);
  const rows: { id: number; name: string }[] = [];
  for (const { key: k, value } of tables.topicNames.getRange({
    start: [channelId, folded, 0],
    end: [channelId, folded, PAST_ROW_IDS],
  }))
    rows.push({ id: k[2], name: value as string });
  return rows;
}

/**
 * The writer's places already looked up, "channelId:name" -> row ID, per store: a range
 * read of topic_names costs ~20 µs, a send's lookup of a known place one row read. An
 * entry is a hint, checked against the row (which a rename, or a failed write that
 * created it, may have changed): never wrong, at worst read again.
 */
const KNOWN_PLACES = new WeakMap<Tables, Map<string, number>>();
const MAX_KNOWN_PLACES = 100_000;

/**
 * The row a message sent to the place joins: the lowest with exactly that name when
 * first looked up (after topics merged, several rows may have it; any of them is right).
 */
export function rowOfPlace(tables: Tables, channelId: number, topic: string): number | undefined {
  return placeRow(tables, channelId, topic)?.id;
}

/** rowOfPlace, with the row. */
function placeRow(tables: Tables, channelId: number, topic: string): { id: number; row: TopicRow } | undefined {
  let known = KNOWN_PLACES.get(tables);
  if (known === undefined) KNOWN_PLACES.set(tables, (known = new Map()));
  const place = `${channelId}:${topic}`;
  const hint = known.get(place);
  if (hint !== undefined) {
    const row = getTopicRow(tables, hint);
    if (row !== undefined && row.channelId === channelId && row.name === topic) return { id: hint, row };
  }
  const id = rowsOfTopic(tables, channelId, topic).find((row) => row.name === topic)?.id;
  if (known.size >= MAX_KNOWN_PLACES) known.clear();
  if (id === undefined) {
    known.delete(place);
    return undefined;
  }
  known.set(place, id);
  const row = getTopicRow(tables, id);
  return row === undefined ? undefined : { id, row };
}

function putRow(state: StoreState, id: number, row: TopicRow, previousName: string | null): void {
  if (previousName !== null && foldTopic(previousName) !== foldTopic(row.name))
    state.tables.topicNames.removeSync([row.channelId, foldTopic(previousName), id]);
  putTopicRow(state.tables, id, row);
  if (previousName !== row.name) state.tables.topicNames.putSync([row.channelId, foldTopic(row.name), id], row.name);
}

/** A new row for a place (inside a write). */
export function createTopicRow(state: StoreState, ctx: WriteContext, channelId: number, name: string): number {
  const id = state.allocate("nextTopicRowId");
  putRow(state, id, { channelId, name, renames: [] }, null);
  ctx.changed({ kind: "topic", id, op: "added" });
  return id;
}

/**
 * The messages naming the rows of (channel, topic folded) when they are the whole of
 * `topic` (the channel+topic bitmap): a rename of it may go by reference. Null when
 * some message of the topic has a record written before the registry.
 */
export function topicByReference(
  state: StoreState,
  channelId: number,
  topic: string,
  messages: ReadonlyBitmap,
): number[] | null {
  const rows = rowsOfTopic(state.tables, channelId, topic);
  let count = 0;
  for (const row of rows) count += state.bitmaps.get(key.topicRow(row.id)).size;
  return count === messages.size && count > 0 ? rows.map((row) => row.id) : null;
}

/** Renames rows (a whole topic within its channel): one rename appended to each, the name index follows. */
export function renameTopicRows(
  state: StoreState,
  ctx: WriteContext,
  rowIds: readonly number[],
  rename: TopicRename,
): void {
  for (const id of rowIds) {
    const row = getTopicRow(state.tables, id);
    if (row === undefined) throw new Error(`topic row ${id} is missing`);
    putRow(state, id, { ...row, name: rename.topic, renames: [...row.renames, rename] }, row.name);
    ctx.changed({ kind: "topic", id });
  }
}

/**
 * A new channel message (send-message) joins the row of its place, created if none:
 * TopicPlacer.place for one message, without its maps and copy (a send's few microseconds).
 */
export function placeSent(state: StoreState, ctx: WriteContext, message: Message): void {
  if (message.recipient.type !== "channel") return;
  const { channelId } = message.recipient;
  const found = placeRow(state.tables, channelId, message.topic);
  const id = found?.id ?? createTopicRow(state, ctx, channelId, message.topic);
  message.topicRef = id;
  message.topicFrom = found?.row.renames.length ?? 0;
  state.bitmaps.add(key.topicRow(id), message.id);
}

/**
 * Places the records a write stores: which row each names, and the `tr:` bits that
 * follow. Rows read are remembered for the placer's life (one write, or one staging
 * whose write is spoiled by any change of a row: actions/move-staging).
 */
export class TopicPlacer {
  readonly #rows = new Map<number, TopicRow | undefined>();
  /** By "channelId:name": the row a new arrival there joins. */
  readonly #places = new Map<string, number | undefined>();
  readonly #added = new Map<number, number[]>();
  readonly #removed = new Map<number, number[]>();
  /** By "channelId:name": the ID predicted for the row of a place that has none (placeAhead). */
  readonly #predicted = new Map<string, number>();

  constructor(private readonly state: StoreState) {}

  #row(id: number): TopicRow | undefined {
    if (!this.#rows.has(id)) this.#rows.set(id, getTopicRow(this.state.tables, id));
    return this.#rows.get(id);
  }

  #rowOfPlace(channelId: number, name: string): number | undefined {
    const k = `${channelId}:${name}`;
    if (!this.#places.has(k)) {
      const found = placeRow(this.state.tables, channelId, name);
      if (found !== undefined) this.#rows.set(found.id, found.row);
      this.#places.set(k, found?.id);
    }
    return this.#places.get(k);
  }

  /** Whether `message` is where the row it names is. */
  #inItsRow(message: Message): boolean {
    if (message.topicRef === undefined || message.recipient.type !== "channel") return false;
    const row = this.#row(message.topicRef);
    return row !== undefined && row.channelId === message.recipient.channelId && row.name === message.topic;
  }

  /**
   * `after` naming the row of its place when one exists (no write: staging places ahead),
   * or undefined when its place has no row yet. With `predict`, a place without a row gets
   * the ID its row will have if the write creates the rows of the places planned, in this
   * order, and no other row before (place then keeps `after`, encoded ahead, as it is).
   */
  placeAhead(after: Message, predict = false): Message | undefined {
    if (after.recipient.type !== "channel") return withoutRow(after);
    if (this.#inItsRow(after)) {
      // Where its row is: it starts after the row's renames (its history, read in this write, holds them).
      const from = this.#row(after.topicRef!)!.renames.length;
      return after.topicFrom === from ? after : { ...after, topicFrom: from };
    }
    const { channelId } = after.recipient;
    let id = this.#rowOfPlace(channelId, after.topic);
    if (id === undefined && predict) {
      const k = `${channelId}:${after.topic}`;
      id = this.#predicted.get(k);
      if (id === undefined) this.#predicted.set(k, (id = this.state.counters.nextTopicRowId + this.#predicted.size));
      return after.topicRef === id && after.topicFrom === 0 ? after : { ...after, topicRef: id, topicFrom: 0 };
    }
    if (id === undefined) return undefined;
    return { ...after, topicRef: id, topicFrom: this.#row(id)?.renames.length ?? 0 };
  }

  /** Forgets the rows and places read (a plan staged before its write reads them again in it). */
  forgetReads(): void {
    this.#rows.clear();
    this.#places.clear();
    this.#predicted.clear();
  }

  /**
   * `after` as it is to be stored, naming the row of its place (created if none), and the
   * move of its `tr:` bit from `before`'s row; `before` null for a new message, `after`
   * null for a deletion. Returns `after` itself when it already names the right row.
   */
  place(ctx: WriteContext, before: Message | null, after: Message | null): Message | null {
    let placed: Message | null = after;
    if (after !== null) {
      placed = this.placeAhead(after) ?? null;
      if (placed === null) {
        const channelId = (after.recipient as { channelId: number }).channelId;
        const id = createTopicRow(this.state, ctx, channelId, after.topic);
        this.#rows.set(id, { channelId, name: after.topic, renames: [] });
        this.#places.set(`${channelId}:${after.topic}`, id);
        // As predicted when staged: `after` itself (its bytes encoded ahead stay right).
        placed = after.topicRef === id && after.topicFrom === 0 ? after : { ...after, topicRef: id, topicFrom: 0 };
      }
    }
    const from = before?.topicRef;
    const to = placed?.topicRef;
    if (from !== to) {
      const id = (before ?? after)!.id;
      if (from !== undefined) push(this.#removed, from, id);
      if (to !== undefined) push(this.#added, to, id);
    }
    return placed;
  }

  /** Writes the `tr:` bits of every placement so far (inside the write). */
  applyBits(): void {
    for (const [row, ids] of this.#removed)
      if (ids.length > 16) this.state.bitmaps.removeAll(key.topicRow(row), new RoaringBitmap32(ids));
      else this.state.bitmaps.removeMany(key.topicRow(row), ids);
    for (const [row, ids] of this.#added) this.state.bitmaps.addMany(key.topicRow(row), ids);
    this.#removed.clear();
    this.#added.clear();
  }
}

function withoutRow(message: Message): Message {
  if (message.topicRef === undefined && message.topicFrom === undefined) return message;
  const { topicRef, topicFrom, ...rest } = message;
  void topicRef;
  void topicFrom;
  return rest;
}

function push(into: Map<number, number[]>, row: number, id: number): void {
  const ids = into.get(row);
  if (ids) ids.push(id);
  else into.set(row, [id]);
}
