/**
 * @module actions/message-rewrite
 * The one way a stored message changes after it was sent (an edit, a move, a deletion):
 * its record, its meta and time entries and every message-level index bit go from what
 * `before` implies to what `after` implies, inside the caller's write. Index bits are
 * diffed through indexMessage, the function send and verify use, so the three cannot
 * disagree on which keys a message belongs to; bits both versions share are not touched.
 *
 * Per-user bits that depend on who received the message or on its mentions (read,
 * mentioned, group_mentioned, topic_wildcard_mentioned, historical, starred, ...) are
 * the caller's: an edit recomputes mentions, a move changes who may read, a deletion
 * clears them all. The `dm` bits of direct messages are message-level (indexMessage
 * writes them) and follow here.
 *
 * Many messages at once (a topic move) are grouped by key: one removeMany and one
 * addMany per bitmap, not one per message.
 */
import type { WriteContext } from "../write-coordinator.js";
import type { StoreState } from "../state.js";
import { messageMetaOf, type Message } from "../types.js";
import { encodeAhead, encodedValue, type EncodedValue } from "../storage/encoded-ahead.js";
import {
  encodeMessageRecord,
  putMessageRecord,
  removeMessageRecord,
  type EncodedMessageRecord,
} from "../storage/message-records.js";
import { storedMetaOf, type StoredMessageMeta } from "../storage/topic-rows.js";
import type { MessageField } from "../events/change-set.js";
import { RoaringBitmap32 } from "../index/bitmap-store.js";
import { isIndexableTerm, key } from "../index/keys.js";
import { indexTerms } from "../search/index.js";
import { indexMessage, RESOLVED_TOPIC_PREFIX } from "./send-message.js";
import { TopicPlacer } from "./topic-registry.js";

/** From how many IDs a key's removals go as one bitmap (below, per-ID calls cost less than building it). */
export const BULK_IDS = 16;

export interface MessageRewrite {
  readonly before: Message;
  /** The message as it is to be stored, same ID; null deletes it. */
  readonly after: Message | null;
}

/** The message-level index keys of a message (what indexMessage would set). */
export function indexKeysOf(state: StoreState, message: Message): Set<string> {
  const keys = new Set<string>();
  indexMessage(state, message, { add: (k) => keys.add(k) });
  return keys;
}

/**
 * Whether a rewrite only moves a channel message (another channel and/or topic, same
 * content and everything else indexed): its index keys then differ only in the keys of
 * its place, the same for every message moved between the same two places.
 */
function isRelocation(before: Message, after: Message): boolean {
  return (
    before.recipient.type === "channel" &&
    after.recipient.type === "channel" &&
    after.renderedContent === before.renderedContent &&
    after.senderId === before.senderId &&
    after.hasLink === before.hasLink &&
    after.hasImage === before.hasImage &&
    after.hasAttachment === before.hasAttachment &&
    after.reactions.length > 0 === before.reactions.length > 0 &&
    after.wildcard === before.wildcard
  );
}

/** The keys a channel message has because of where it is: channel, topic, resolved, the topic's search terms. */
function placeKeys(realmId: number, channelId: number, topic: string): { keys: Set<string>; terms: Set<string> } {
  const keys = new Set([key.channel(channelId), key.channelTopic(channelId, topic), key.topic(realmId, topic)]);
  if (topic.startsWith(RESOLVED_TOPIC_PREFIX)) keys.add(key.resolved(realmId));
  const terms = new Set(indexTerms(topic, "").filter(isIndexableTerm));
  return { keys, terms };
}

/** Messages relocated between the same two places ([channel ID, topic] each), and what that does to their keys. */
interface RelocationGroup {
  readonly change: Relocation;
  readonly realmId: number;
  readonly from: readonly [number, string];
  readonly to: readonly [number, string];
  readonly ids: number[];
}

/** What moving a message between two places does to its keys. */
interface Relocation {
  readonly remove: readonly string[];
  readonly add: readonly string[];
  /** Terms of the old topic only: their keys lose the message unless its content has them. */
  readonly oldTerms: readonly string[];
  /** Terms of the new topic only (a message whose content has one is already there: adding is harmless). */
  readonly newTerms: readonly string[];
}

function relocation(realmId: number, from: [number, string], to: [number, string]): Relocation {
  const old = placeKeys(realmId, from[0], from[1]);
  const next = placeKeys(realmId, to[0], to[1]);
  return {
    remove: [...old.keys].filter((k) => !next.keys.has(k)),
    add: [...next.keys].filter((k) => !old.keys.has(k)),
    oldTerms: [...old.terms].filter((t) => !next.terms.has(t)),
    newTerms: [...next.terms].filter((t) => !old.terms.has(t)),
  };
}

/** Which change-set fields a rewrite touches, for the change set of the write. */
export function rewriteFields(rewrite: MessageRewrite): MessageField[] {
  const { before, after } = rewrite;
  if (after === null) return ["deleted"];
  const fields: MessageField[] = [];
  if (after.content !== before.content || after.renderedContent !== before.renderedContent) fields.push("content");
  if (after.topic !== before.topic) fields.push("topic");
  const channelOf = (m: Message) => (m.recipient.type === "channel" ? m.recipient.channelId : null);
  if (channelOf(after) !== channelOf(before)) fields.push("channel");
  if (
    after.editHistory !== before.editHistory ||
    after.lastEditTimestamp !== before.lastEditTimestamp ||
    after.historyDeletedBy !== before.historyDeletedBy
  )
    fields.push("history");
  return fields;
}

/** One rewrite as planned: what to store. */
interface PlannedRecord {
  readonly rewrite: MessageRewrite;
  /** The new record's bytes, when encoded ahead of the write. */
  readonly encoded: EncodedMessageRecord | null;
  /** Its new place (message_meta), when it changes; encoded ahead with the record. */
  readonly place: StoredMessageMeta | EncodedValue | null;
}

/** Messages of a plan whose change-set fields are the same (a topic move's thousands share one). */
interface DeclaredChanges {
  readonly realmId: number;
  readonly fields: readonly MessageField[];
  readonly ids: number[];
}

function sameFields(x: readonly MessageField[], y: readonly MessageField[]): boolean {
  return x.length === y.length && x.every((field, i) => y[i] === field);
}

function samePlace(x: StoredMessageMeta, y: StoredMessageMeta): boolean {
  return x[0] === y[0] && x[1] === y[1] && x[2] === y[2];
}

/**
 * Rewrites worked out before their write: index bits by key, change-set fields, and
 * optionally the new records' bytes. Planning reads the store and writes nothing, so a
 * large move plans in chunks between turns of the event loop; the plan stays right only
 * while nothing commits a change to its messages (the caller checks before applying).
 */
export class RewritePlan {
  readonly #records: PlannedRecord[] = [];
  // Relocated messages by pair of places: a topic move's thousands share one pair, whose
  // keys get the whole ID list at once instead of one map lookup per key and message.
  readonly #relocations = new Map<string, RelocationGroup>();
  // The group of the previous relocated message: a topic move's messages all share it,
  // so most need no key string (building and hashing one cost ~0.3 µs a message).
  #lastRelocation: RelocationGroup | null = null;
  readonly #removals = new Map<string, number[]>();
  readonly #additions = new Map<string, number[]>();
  #placer: TopicPlacer | null = null;
  // The change set's message entries, worked out while planning and declared in bulk by apply:
  // one declaration per realm and fields instead of one object and lookup per message in the write.
  readonly #declared: DeclaredChanges[] = [];
  /** Messages that change place or go: their remembered conversations are forgotten. */
  readonly #moved: number[] = [];

  /** Adds rewrites to the plan; with `encode`, their new records are encoded now rather than in the write. */
  add(state: StoreState, rewrites: readonly MessageRewrite[], encode = false): void {
    for (const rewrite of rewrites) {
      const { before, after } = rewrite;
      if (after !== null && (after.id !== before.id || after.realmId !== before.realmId))
        throw new Error(`rewriteMessages: message ${before.id} cannot change its ID or realm`);
      if (after !== null && isRelocation(before, after)) this.#relocate(before, after);
      else if (after === null) {
        // A deletion loses every key: no per-message set of them to diff.
        indexMessage(state, before, { add: (k, id) => push(this.#removals, k, id) });
      } else {
        const old = indexKeysOf(state, before);
        const next = indexKeysOf(state, after);
        for (const k of old) if (!next.has(k)) push(this.#removals, k, before.id);
        for (const k of next) if (!old.has(k)) push(this.#additions, k, before.id);
      }
      // Staged (encoded ahead): the record names the row of its place now, when there is one.
      const ahead = encode && after !== null ? (this.#placerOf(state).placeAhead(after, true) ?? null) : null;
      const encoded = ahead !== null ? encodeMessageRecord(state.tables, ahead, before, true) : null;
      let place: StoredMessageMeta | EncodedValue | null = null;
      if (ahead !== null) {
        // A content edit leaves the place as it was: no write of message_meta, one table fewer in its commit.
        const next = storedMetaOf(ahead);
        if (!samePlace(next, storedMetaOf(before))) place = encodedValue(encodeAhead(state.tables.messageMeta, next));
      }
      const planned = ahead === null ? rewrite : { before, after: ahead };
      this.#records.push({ rewrite: planned, encoded, place });
      const fields = rewriteFields(rewrite);
      if (fields.length > 0) this.#declare(before.realmId, fields, before.id);
      if (after === null || fields.includes("topic") || fields.includes("channel")) this.#moved.push(before.id);
    }
  }

  #declare(realmId: number, fields: readonly MessageField[], id: number): void {
    const last = this.#declared[this.#declared.length - 1];
    const group =
      last !== undefined && last.realmId === realmId && sameFields(last.fields, fields)
        ? last
        : this.#declared.find((g) => g.realmId === realmId && sameFields(g.fields, fields));
    if (group) group.ids.push(id);
    else this.#declared.push({ realmId, fields, ids: [id] });
  }

  /**
   * A move: the keys of the two places, worked out once per pair; the content is
   * tokenised only when the old topic had words the new one lacks.
   */
  #relocate(before: Message, after: Message): void {
    const from = messageMetaOf(before) as [number, string];
    const to = messageMetaOf(after) as [number, string];
    let group = this.#lastRelocation;
    if (
      group === null ||
      group.realmId !== before.realmId ||
      group.from[0] !== from[0] ||
      group.to[0] !== to[0] ||
      group.from[1] !== from[1] ||
      group.to[1] !== to[1]
    ) {
      // The first topic's length keeps the key unambiguous whatever the topics hold.
      const pair = `${before.realmId}:${from[0]}:${to[0]}:${from[1].length}:${from[1]}${to[1]}`;
      const known = this.#relocations.get(pair);
      group = known ?? { change: relocation(before.realmId, from, to), realmId: before.realmId, from, to, ids: [] };
      if (!known) this.#relocations.set(pair, group);
      this.#lastRelocation = group;
    }
    group.ids.push(before.id);
    if (group.change.oldTerms.length > 0) {
      const content = new Set(indexTerms("", before.renderedContent));
      for (const term of group.change.oldTerms)
        if (!content.has(term)) push(this.#removals, key.term(before.realmId, term), before.id);
    }
  }

  #placerOf(state: StoreState): TopicPlacer {
    return (this.#placer ??= new TopicPlacer(state));
  }

  /** Stores the planned rewrites inside `ctx`'s write (see rewriteMessages). Once. Returns what it stored. */
  apply(state: StoreState, ctx: WriteContext): (Message | null)[] {
    const placer = this.#placerOf(state);
    // What staging read of the registry may have changed since (each record is checked again).
    placer.forgetReads();
    const places: (StoredMessageMeta | EncodedValue | null)[] = [];
    const stored: (Message | null)[] = [];
    // Table by table: a move's thousands of puts cost a third more interleaved.
    for (const { rewrite, encoded, place } of this.#records) {
      const { before, after } = rewrite;
      const placed = placer.place(ctx, before, after);
      stored.push(placed);
      if (placed === null) {
        removeMessageRecord(state.tables, before);
        state.tables.messageMeta.removeSync(before.id);
        state.tables.dateMessage.removeSync([before.dateSent, before.id]);
        places.push(null);
      } else if (placed === after && encoded !== null) {
        putMessageRecord(state.tables, placed, before, encoded);
        places.push(place);
      } else {
        // Not encoded ahead, or its place got a row only now: stored (and its place worked out) here.
        putMessageRecord(state.tables, placed, before, undefined, true);
        const next = storedMetaOf(placed);
        places.push(samePlace(next, storedMetaOf(before)) ? null : next);
      }
    }
    for (const { realmId, fields, ids } of this.#declared) ctx.changed({ kind: "messages", ids, realmId, fields });
    placer.applyBits();
    this.#records.forEach(({ rewrite }, i) => {
      const place = places[i];
      if (place !== null && place !== undefined) state.tables.messageMeta.putSync(rewrite.before.id, place);
    });
    writeBits(state, new Map(this.#removals), new Map(this.#additions), this.#relocations.values());
    forgetConversations(state, ctx, this.#moved);
    return stored;
  }
}

/** A plan's index bits: removals and additions by key, and those of relocated groups (the maps are added to). */
function writeBits(
  state: StoreState,
  removals: Map<string, number[]>,
  additions: Map<string, number[]>,
  relocations: Iterable<Pick<RelocationGroup, "change" | "realmId" | "ids">>,
): void {
  for (const { change, realmId, ids } of relocations) {
    for (const k of change.remove) pushAll(removals, k, ids);
    for (const k of change.add) pushAll(additions, k, ids);
    for (const term of change.newTerms) pushAll(additions, key.term(realmId, term), ids);
  }
  // A topic's thousand IDs leave its keys in one native difference, not one delete and dirty mark each.
  for (const [k, ids] of removals)
    if (ids.length >= BULK_IDS) state.bitmaps.removeAll(k, new RoaringBitmap32(ids));
    else state.bitmaps.removeMany(k, ids);
  for (const [k, ids] of additions) state.bitmaps.addMany(k, ids);
}

/**
 * The conversation of a message was taken to be fixed at send; a move or deletion
 * makes the remembered one wrong. Forget it now (reads inside this write see the new
 * meta) and again after the commit (a failed write clears the whole index anyway).
 */
function forgetConversations(state: StoreState, ctx: WriteContext, moved: readonly number[]): void {
  if (moved.length === 0) return;
  for (const id of moved) state.messageConversations.forget(id);
  ctx.afterCommit(() => {
    for (const id of moved) state.messageConversations.forget(id);
  });
}

/**
 * A whole topic renamed within its channel by reference (actions/topic-registry): its
 * records are not rewritten, but the index bits of its messages go from the old place
 * to the new as a rewrite would move them, and the change set names each message (its
 * topic and history), as rewriteMessages would. `renderedContentOf` is asked only when
 * the old topic has search terms the new one lacks.
 */
export function relocateTopic(
  state: StoreState,
  ctx: WriteContext,
  realmId: number,
  from: readonly [number, string],
  to: readonly [number, string],
  ids: readonly number[],
  renderedContentOf: (id: number) => string,
): void {
  const change = relocation(realmId, [from[0], from[1]], [to[0], to[1]]);
  const removals = new Map<string, number[]>();
  if (change.oldTerms.length > 0)
    for (const id of ids) {
      const content = new Set(indexTerms("", renderedContentOf(id)));
      for (const term of change.oldTerms) if (!content.has(term)) push(removals, key.term(realmId, term), id);
    }
  writeBits(state, removals, new Map(), [{ change, realmId, ids: [...ids] }]);
  const fields: MessageField[] = ["topic", "history"];
  for (const id of ids) ctx.changed({ kind: "message", id, realmId, fields });
  forgetConversations(state, ctx, ids);
}

function push(into: Map<string, number[]>, k: string, id: number): void {
  const ids = into.get(k);
  if (ids) ids.push(id);
  else into.set(k, [id]);
}

/** Appends `ids` to the key's list, copying: the lists of a plan are not changed by applying it. */
function pushAll(into: Map<string, number[]>, k: string, ids: readonly number[]): void {
  const known = into.get(k);
  into.set(k, known ? known.concat(ids) : [...ids]);
}

/**
 * Stores each rewrite inside `ctx`'s write: records, message_meta, date_message, index
 * bits, and the message change for the write's change set. Returns each message as
 * stored (naming the topic registry row of its place: actions/topic-registry), null
 * for a deletion. Callers emit the client events (update_message, delete_message)
 * themselves: who hears of a move depends on access before and after, which only they know.
 */
export function rewriteMessages(
  state: StoreState,
  ctx: WriteContext,
  rewrites: readonly MessageRewrite[],
): (Message | null)[] {
  const plan = new RewritePlan();
  plan.add(state, rewrites);
  return plan.apply(state, ctx);
}
