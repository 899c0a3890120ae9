/**
 * @module actions/delete-edit-history
 * DELETE /messages/{message_id}/history (in the Zulip fork whose OpenAPI parley follows):
 * the earlier versions of a message's content are dropped from its edit history, moves
 * stay, and the message keeps who did it (`history_deleted_by` in GET history). Whoever
 * may delete the message may delete its history: the same checks as DELETE
 * /messages/{id}, the time limit included. A message with no content edits left to drop
 * is refused as the spec shows ("Invalid message(s)"). The spec defines no event.
 */
import { canChangeMessage } from "../access.js";
import { BadRequestError } from "../errors.js";
import type { StoreState } from "../state.js";
import { getMessageRecord } from "../storage/message-records.js";
import type { EditHistoryEntry, Message } from "../types.js";
import { checkCanDelete, INVALID_MESSAGE } from "./delete-messages.js";
import { rewriteMessages } from "./message-rewrite.js";
import { requireActiveUser } from "./users.js";

/** An entry without its content change; null when the content was all it changed. */
function withoutContent(entry: EditHistoryEntry): EditHistoryEntry | null {
  const { prevContent, prevRenderedContent, ...rest } = entry;
  void prevContent;
  void prevRenderedContent;
  return rest.prevTopic !== undefined || rest.prevStream !== undefined ? rest : null;
}

export function deleteMessageEditHistory(state: StoreState, actorId: number, messageId: number): void {
  const actor = requireActiveUser(state, actorId);
  const before =
    Number.isInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? getMessageRecord(state.tables, messageId)
      : undefined;
  if (!before || !canChangeMessage(state, actor, before)) throw new BadRequestError(INVALID_MESSAGE);
  checkCanDelete(state, actor, before, state.now());
  const history = before.editHistory ?? [];
  if (!history.some((e) => e.prevContent !== undefined)) throw new BadRequestError(INVALID_MESSAGE);
  const kept = history.map(withoutContent).filter((e): e is EditHistoryEntry => e !== null);
  const after: Message = {
    ...before,
    editHistory: kept.length > 0 ? kept : null,
    // Zulip derives last_edit_timestamp from the newest content entry: none is left.
    lastEditTimestamp: null,
    historyDeletedBy: actor.id,
  };
  state.write((ctx) => rewriteMessages(state, ctx, [{ before, after }]));
}
