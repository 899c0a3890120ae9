/**
 * @module actions/move-messages
 * Moving messages to another topic and/or channel (Zulip's topic and stream_id edits,
 * with propagate_mode), resolving and unresolving topics.
 *
 * Contract with actions/update-message (the PATCH orchestrator): prepareMove checks
 * everything and writes nothing; writeMove stores the move inside the orchestrator's
 * write, so an edit of content and topic together is one transaction and one
 * update_message event, built by the orchestrator from the MoveResult.
 *
 * NOT BUILT YET: prepareMove refuses every move. The mutable-messages issue (#28) fills
 * this module in; nothing outside it may depend on the refusal.
 */
import { BadRequestError } from "../errors.js";
import type { StoreState } from "../state.js";
import type { EditHistoryEntry, Message, User } from "../types.js";
import type { WriteContext } from "../write-coordinator.js";

export type PropagateMode = "change_one" | "change_later" | "change_all";

export interface MoveRequest {
  /** New topic (as sent by the client, not yet trimmed or validated); absent: keep. */
  readonly topic?: string;
  /** New channel; absent: keep. */
  readonly channelId?: number;
  readonly propagateMode: PropagateMode;
  readonly sendNotificationToOldThread: boolean;
  readonly sendNotificationToNewThread: boolean;
}

/** A checked move, ready to write. Opaque to the orchestrator. */
export interface PreparedMove {
  readonly messageIds: readonly number[];
}

/** What the orchestrator needs for the update_message event and its answer. */
export interface MoveResult {
  /** Every moved message, ascending. */
  readonly messageIds: readonly number[];
  readonly origChannelId: number;
  /** Absent when the channel did not change. */
  readonly newChannelId?: number;
  readonly origTopic: string;
  /** Absent when the topic did not change. */
  readonly newTopic?: string;
  readonly propagateMode: PropagateMode;
  /** Users who receive the update_message event (those who can read the messages after the move). */
  readonly audience: readonly number[];
}

/**
 * Checks a move of `message` (and, by propagate mode, others) by `actor`: topic and
 * channel validity, every realm and channel permission and time limit. Throws the
 * engine error Zulip's answer maps from; writes nothing.
 */
export function prepareMove(
  _state: StoreState,
  _actor: User,
  _message: Message,
  _request: MoveRequest,
  _now: number,
): PreparedMove {
  throw new BadRequestError("Moving messages is not supported yet");
}

/**
 * Stores a prepared move inside `ctx`'s write. `edited` is the target message as the
 * orchestrator changed it (its content edit, if any), and `historyEntry` the fields of
 * that edit's history entry, so the target gets one entry naming both.
 */
export function writeMove(
  _state: StoreState,
  _ctx: WriteContext,
  _move: PreparedMove,
  _edited: Message,
  _historyEntry: Partial<EditHistoryEntry>,
): MoveResult {
  throw new BadRequestError("Moving messages is not supported yet");
}
