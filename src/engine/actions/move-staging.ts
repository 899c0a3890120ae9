/**
 * @module actions/move-staging
 * A large move in two phases, so that no single turn of the event loop holds it all
 * (issue 28: no request holding the loop over 50 ms). Phase 1, between writes, reads the
 * moved records, builds their new versions, encodes them and works out their index bits
 * and change-set entries, a chunk per turn (RewritePlan). Phase 2 is the move's one
 * write (writeMove with the staged rewrites): a reader still never sees half a move, and
 * the change log holds what the one-phase write would have logged.
 *
 * When the messages change channel, staging ends with the rows plan (actions/move-rows:
 * who keeps, gains and loses them), in turns of its own (MOVE_ROWS_STEP users of the
 * two channels a turn: a topic moved before into a 10,000-member channel held the loop
 * 10-170 ms in one turn, bench:worst), the last of which also renders Notification Bot's
 * notices (move-notices: prerenderMoveNotices; a few milliseconds of
 * the write before). Those renderings are dropped when any write commits before the
 * move's: the write then renders the notices itself.
 *
 * The staged work stays right only while nothing it read changes. So staging listens to
 * every committed change set (events/change-set, the contract every cache of the store
 * relies on) and is spoiled by one that names a moved message (any field: content,
 * reactions, history), anyone's flags of one, the two channels or their subscriptions,
 * a user's role or activation, any other move between channels or deletion (they rewrite
 * the withdrawn-row groups the rows plan read), a rename of a topic registry row the
 * staged records name (actions/topic-registry: their history would lack it), or by a
 * failed write (`everything`). A whole-topic rename that goes by reference is not staged.
 * The caller also checks the request again just before phase 2 (permissions, and which
 * messages it takes: a message sent into the topic meanwhile joins a change_all) and
 * stages again when anything differs; after a few attempts it writes in one phase, so a
 * move always completes. What phase 2 decides itself (topic policies, notices, event
 * audiences) it reads then, from the current state.
 */
import type { ChangeSet } from "../events/change-set.js";
import { RoaringBitmap32 } from "../index/bitmap-store.js";
import type { StoreState } from "../state.js";
import { getMessageRecords } from "../storage/message-records.js";
import type { EditHistoryEntry, Message } from "../types.js";
import { RewritePlan } from "./message-rewrite.js";
import {
  moveRewrites,
  planMoveRowsInSteps,
  prerenderNotices,
  type PreparedMove,
  type StagedRewrites,
} from "./move-messages.js";
import type { NoticeRenders } from "./move-notices.js";
import type { ChannelMoveRows } from "./move-rows.js";
import { rowOfPlace } from "./topic-registry.js";

/**
 * From how many messages a move is staged (smaller ones write in one phase: a few
 * milliseconds, and no extra turns), how many messages a turn stages, and how many
 * times a spoiled staging is repeated before the move is written in one phase. Settings,
 * so that tests stage small moves in several turns.
 */
export const MOVE_STAGING = { minMessages: 500, chunkMessages: 500, attempts: 3 };

/** A move staged for its write; `spoiled` once a committed write changed any of its messages. */
export interface StagedMove extends StagedRewrites {
  readonly move: PreparedMove;
  readonly spoiled: boolean;
  /** Stops listening for changes (after the write, or when staging is abandoned). */
  release(): void;
}

/** Whether a move is large enough to be staged. */
export function shouldStage(move: PreparedMove): boolean {
  return move.messageIds.length >= MOVE_STAGING.minMessages;
}

/**
 * Phase 1: reads, rewrites and encodes the move's messages `MOVE_STAGING.chunkMessages`
 * at a time, awaiting `pause` between chunks. The history entries are those writeMove
 * gives a move without a content edit (`historyEntry` for the target too).
 */
export async function stageMove(
  state: StoreState,
  move: PreparedMove,
  historyEntry: Partial<EditHistoryEntry>,
  timestamp: number,
  pause: () => Promise<void>,
): Promise<StagedMove> {
  let spoiled = false;
  const ids = new Set(move.messageIds);
  const channels = [move.fromChannelId, move.toChannelId];
  // The registry rows the staged records name, before and after: a rename of one spoils them
  // (their history would lack it). The write checks each record's row again.
  const rows = new Set<number>([rowOfPlace(state.tables, move.toChannelId, move.toTopic) ?? 0]);
  let noticeRenders: NoticeRenders | null = null;
  const stopListening = state.onChanges((changes) => {
    spoiled ||= touchesMove(changes, ids, channels) || [...changes.topic.keys()].some((id) => rows.has(id));
    // A rendering reads users, channels, emoji, linkifiers...: any commit may change it.
    noticeRenders = null;
  });
  const records: Message[] = [];
  const plan = new RewritePlan();
  let moveRows: ChannelMoveRows | null = null;
  const moved = RoaringBitmap32.from(move.messageIds);
  // A plan read over several turns is whole only if no commit between them spoiled it.
  const planRowsOverTurns = async (steps: Generator<void, ChannelMoveRows | null, void>) => {
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done === true) return spoiled ? null : step.value;
      await pause();
      if (spoiled) return null;
    }
  };
  try {
    const chunk = Math.max(1, MOVE_STAGING.chunkMessages);
    // A turn of its own for each chunk: not with the request's checks before, nor with the write after.
    for (let start = 0; start < move.messageIds.length && !spoiled; start += chunk) {
      await pause();
      if (spoiled) break;
      const part = getMessageRecords(state.tables, move.messageIds.slice(start, start + chunk));
      for (const record of part) if (record.topicRef !== undefined) rows.add(record.topicRef);
      records.push(...part);
      plan.add(state, moveRewrites(move, part, move.messageId, historyEntry, timestamp), true);
    }
    await pause();
    const from = state.channels.get(move.fromChannelId);
    const to = state.channels.get(move.toChannelId);
    // Gone meanwhile: the check before the write refuses the move.
    if (!from || !to) spoiled = true;
    else if (!spoiled) {
      // The IDs of the records found (a message deleted meanwhile has none, and spoiled the staging).
      if (records.length !== move.messageIds.length) spoiled = true;
      else moveRows = await planRowsOverTurns(planMoveRowsInSteps(state, from, to, moved, records, move.messageId));
      const renders = spoiled ? null : prerenderNotices(state, move, moved);
      noticeRenders = renders;
      // And the write in a turn of its own.
      if (moveRows !== null || (renders?.size ?? 0) > 0) await pause();
    }
  } catch (error) {
    stopListening();
    throw error;
  }
  return {
    move,
    records,
    moved,
    plan,
    rows: moveRows,
    get spoiled() {
      return spoiled;
    },
    get noticeRenders() {
      return noticeRenders;
    },
    release: stopListening,
  };
}

/** User fields the rows of a move depend on (planChannelMoveRows: who is a guest, who is there). */
const ROW_USER_FIELDS = ["role", "isActive", "realmId"] as const;

/**
 * Whether a committed change set may change what staging read: the moved messages'
 * records (any change naming one), the rows plan's inputs (the two channels, their
 * subscriptions, users' roles, anyone's flags of a moved message, the withdrawn groups
 * any other move or deletion rewrites), or anything at all after a failed write.
 */
function touchesMove(changes: ChangeSet, ids: ReadonlySet<number>, channels: readonly number[]): boolean {
  if (changes.everything) return true;
  for (const [id, change] of changes.message)
    if (ids.has(id) || change.fields.has("channel") || change.fields.has("deleted")) return true;
  for (const list of changes.flags.values()) for (const id of list) if (ids.has(id)) return true;
  if (channels.some((id) => changes.channel.has(id))) return true;
  for (const concerned of changes.subscription.values())
    if (concerned === null || channels.some((id) => concerned.has(id))) return true;
  for (const change of changes.user.values())
    if (change.op !== "changed" || change.fields === null || ROW_USER_FIELDS.some((f) => change.fields!.has(f)))
      return true;
  return false;
}

/** Whether a move checked again just before its write is the staged one (same messages, same places). */
export function sameMove(staged: PreparedMove, now: PreparedMove): boolean {
  return (
    staged.actorId === now.actorId &&
    staged.messageId === now.messageId &&
    staged.fromChannelId === now.fromChannelId &&
    staged.toChannelId === now.toChannelId &&
    staged.fromTopic === now.fromTopic &&
    staged.toTopic === now.toTopic &&
    staged.messageIds.length === now.messageIds.length &&
    staged.messageIds.every((id, i) => now.messageIds[i] === id)
  );
}
