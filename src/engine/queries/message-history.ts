/**
 * @module queries/message-history
 * GET /messages/{id}/history (Zulip's get_message_edit_history and
 * fill_edit_history_entries): the stored history entries (newest first, each naming only
 * what changed) turned into snapshots of the message after each change, oldest first,
 * the original first; then filtered by the realm's edit history visibility policy.
 */
import { canAccessMessage } from "../access.js";
import { BadRequestError } from "../errors.js";
import type { AccessReader } from "../directory.js";
import type { EditHistoryEntry, User } from "../types.js";
import type { EditHistoryVisibility } from "../settings/message-policy.js";

/** The message as it was after one change (or as sent, for the first). */
export interface HistorySnapshot {
  readonly topic: string;
  readonly content: string;
  readonly renderedContent: string;
  /** UNIX seconds: of the change, or of the send. */
  readonly timestamp: number;
  /** Who made the change (the sender for the first); null for entries that do not say. */
  readonly userId: number | null;
  readonly prevTopic?: string;
  readonly prevContent?: string;
  readonly prevRenderedContent?: string;
  readonly prevStream?: number;
  readonly stream?: number;
  /** On the first snapshot: who deleted the earlier versions of the content. */
  readonly historyDeletedBy?: number;
}

/** `policy` is the viewer's realm's message_edit_history_visibility_policy. */
export function messageEditHistory(
  state: AccessReader,
  policy: EditHistoryVisibility,
  viewer: User,
  messageId: number,
): HistorySnapshot[] {
  if (policy === "none") throw new BadRequestError("Message edit history is disabled in this organization");
  const message =
    Number.isSafeInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? state.messageRecord(messageId)
      : undefined;
  if (!message || !canAccessMessage(state, viewer, message)) throw new BadRequestError("Invalid message(s)");
  const snapshots: HistorySnapshot[] = [];
  let content = message.content;
  let renderedContent = message.renderedContent;
  let topic = message.topic;
  for (const entry of message.editHistory ?? []) {
    const snapshot: { -readonly [K in keyof HistorySnapshot]: HistorySnapshot[K] } = {
      topic,
      content,
      renderedContent,
      timestamp: entry.timestamp,
      userId: entry.userId,
    };
    if (entry.prevTopic !== undefined) snapshot.prevTopic = topic = entry.prevTopic;
    if (entry.prevContent !== undefined) {
      snapshot.prevContent = content = entry.prevContent;
      snapshot.prevRenderedContent = renderedContent = entry.prevRenderedContent ?? "";
    }
    if (entry.prevStream !== undefined) {
      snapshot.prevStream = entry.prevStream;
      if (entry.stream !== undefined) snapshot.stream = entry.stream;
    }
    snapshots.push(snapshot);
  }
  snapshots.push({
    topic,
    content,
    renderedContent,
    timestamp: message.dateSent,
    userId: message.senderId,
    ...(message.historyDeletedBy !== undefined ? { historyDeletedBy: message.historyDeletedBy } : {}),
  });
  return visibleHistory(policy, snapshots.reverse());
}

/**
 * Zulip's visible_edit_history_for_message: under "moves", entries that only changed
 * the content are left out, and entries that also moved keep the move only.
 */
export function visibleHistory<T extends Pick<EditHistoryEntry, "prevContent" | "prevRenderedContent" | "prevTopic">>(
  policy: EditHistoryVisibility,
  entries: readonly T[],
): T[] {
  if (policy === "all") return [...entries];
  if (policy === "none") return [];
  const out: T[] = [];
  for (const entry of entries) {
    if (entry.prevContent === undefined) out.push(entry);
    else if (entry.prevTopic !== undefined) {
      const { prevContent: _content, prevRenderedContent: _rendered, ...move } = entry;
      out.push(move as T);
    }
  }
  return out;
}
