/**
 * @module test/support/move
 * Moves messages the way the PATCH orchestrator does (prepareMove, then writeMove and
 * its notices in one write), for engine tests of moves.
 */
import { internals } from "../../src/engine/internal.js";
import {
  prepareMove,
  writeMove,
  type MoveRequest,
  type MoveResult,
  type PropagateMode,
} from "../../src/engine/actions/move-messages.js";
import { getMessageRecord } from "../../src/engine/storage/message-records.js";
import type { Message, Store } from "../../src/engine/index.js";

export interface MoveInput {
  readonly topic?: string;
  readonly channelId?: number;
  readonly propagateMode?: PropagateMode;
  readonly sendNotificationToOldThread?: boolean;
  readonly sendNotificationToNewThread?: boolean;
}

export function record(store: Store, id: number): Message {
  const message = getMessageRecord(internals(store).tables, id);
  if (!message) throw new Error(`no message ${id}`);
  return message;
}

/** Moves `messageId` as `actorId`; null when the request moves nothing. */
export function moveMessages(store: Store, actorId: number, messageId: number, input: MoveInput): MoveResult | null {
  const state = internals(store);
  const actor = state.users.get(actorId)!;
  const message = record(store, messageId);
  const request: MoveRequest = {
    ...(input.topic !== undefined ? { topic: input.topic } : {}),
    ...(input.channelId !== undefined ? { channelId: input.channelId } : {}),
    propagateMode: input.propagateMode ?? "change_one",
    sendNotificationToOldThread: input.sendNotificationToOldThread ?? false,
    sendNotificationToNewThread: input.sendNotificationToNewThread ?? false,
  };
  const prepared = prepareMove(state, actor, message, request, state.now());
  if (prepared === null) return null;
  return state.write((ctx) => {
    const result = writeMove(state, ctx, prepared, message, { userId: actorId, timestamp: state.now() });
    result.writeNotices();
    return result;
  });
}
