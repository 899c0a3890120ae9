/**
 * @module actions/imported-history
 * An imported message's edit history (Zulip's Message.edit_history), set once on the
 * replayed message, after every channel of the import exists (a move may name a channel
 * created later in the replay). Zulip's import writes the column as exported, with the
 * editors mapped and each prev_content rendered again; so does this, through one checked
 * write. last_edit_timestamp and last_moved_timestamp follow from the entries by the
 * rules the engine's own edits and moves apply: the newest content edit, and the newest
 * move to another channel or topic that is not only a resolve or unresolve.
 */
import { BadRequestError } from "../errors.js";
import { exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import { getMessageRecord } from "../storage/message-records.js";
import type { EditHistoryEntry, Message } from "../types.js";
import { rewriteMessages } from "./message-rewrite.js";
import { historyResolveToggled } from "./move-messages.js";
import { renderContextFor } from "./render-context.js";
import { MAX_TOPIC_LENGTH, normalizeContent } from "./send-message.js";

/** One entry as an export gives it (the rendering is redone here, so none is taken). */
export interface ImportedEdit {
  /** A user of the message's realm; null where the export did not say (or the editor was not imported). */
  readonly userId: number | null;
  readonly timestamp: number;
  readonly prevContent?: string;
  readonly prevTopic?: string;
  readonly topic?: string;
  /** Channels of the message's realm. */
  readonly prevStream?: number;
  readonly stream?: number;
}

function checkTopic(topic: string | undefined): void {
  if (topic === undefined) return;
  if (topic.includes("\0") || exceedsCodePoints(topic, MAX_TOPIC_LENGTH))
    throw new BadRequestError("Invalid topic in the edit history");
}

/** Sets the history of a message that has none; `edits` newest first (ties keep their order). */
export function importEditHistory(state: StoreState, messageId: number, edits: readonly ImportedEdit[]): void {
  const before = getMessageRecord(state.tables, messageId);
  if (!before) throw new BadRequestError("Invalid message(s)");
  if (before.editHistory !== null) throw new BadRequestError("The message already has an edit history");
  if (edits.length === 0) return;
  const sender = state.users.get(before.senderId)!;
  const context = renderContextFor(state, sender);
  const channelOk = (id: number | undefined) => id === undefined || state.channels.get(id)?.realmId === before.realmId;
  const entries: EditHistoryEntry[] = [...edits]
    .sort((x, y) => y.timestamp - x.timestamp)
    .map((edit) => {
      if (!Number.isSafeInteger(edit.timestamp) || edit.timestamp < 0)
        throw new BadRequestError("Invalid timestamp in the edit history");
      if (edit.userId !== null && state.users.get(edit.userId)?.realmId !== before.realmId)
        throw new BadRequestError(`Invalid user ID ${edit.userId} in the edit history`);
      if (!channelOk(edit.prevStream) || !channelOk(edit.stream))
        throw new BadRequestError("Invalid channel in the edit history");
      checkTopic(edit.prevTopic);
      checkTopic(edit.topic);
      const prevContent = edit.prevContent === undefined ? undefined : normalizeContent(edit.prevContent);
      return {
        userId: edit.userId,
        timestamp: edit.timestamp,
        ...(prevContent !== undefined
          ? { prevContent, prevRenderedContent: state.renderer(prevContent, context).html }
          : {}),
        ...(edit.prevStream !== undefined ? { prevStream: edit.prevStream } : {}),
        ...(edit.stream !== undefined ? { stream: edit.stream } : {}),
        ...(edit.prevTopic !== undefined ? { prevTopic: edit.prevTopic } : {}),
        ...(edit.topic !== undefined ? { topic: edit.topic } : {}),
      };
    });
  const newest = (counts: (e: EditHistoryEntry) => boolean) => entries.find(counts)?.timestamp ?? null;
  const after: Message = {
    ...before,
    editHistory: entries,
    lastEditTimestamp: newest((e) => e.prevContent !== undefined),
    lastMovedTimestamp: newest(
      (e) =>
        e.prevStream !== undefined ||
        (e.prevTopic !== undefined && (e.topic === undefined || !historyResolveToggled(e.topic, e.prevTopic))),
    ),
  };
  state.write((ctx) => rewriteMessages(state, ctx, [{ before, after }]));
}
