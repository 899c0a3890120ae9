/**
 * @module import/replay-history
 * Messages' edit histories (zerver_message.edit_history: JSON entries, newest first),
 * set once every message and channel of the import exists, as Zulip's import does:
 * editors mapped to their new IDs, each earlier content rewritten like the message's
 * own (mentions and upload links) and rendered again by the engine. Zulip's older
 * entries name the earlier topic `prev_subject`. last_edit_timestamp and
 * last_moved_timestamp follow from the entries (Zulip has no column for the latter).
 *
 * An editor who was not imported leaves the entry without one; a move from or to a
 * channel that is not in the export (a private channel in a public export) keeps the
 * rest of its entry (an entry that was only that move is left out). Both are reported.
 */
import { z } from "zod";
import type { ImportedEdit, Store } from "../../src/engine/index.js";
import type { ZulipMessage } from "./zulip-export.js";

const entrySchema = z.looseObject({
  user_id: z.number().int().nullable().optional(),
  timestamp: z.number(),
  prev_content: z.string().optional(),
  prev_topic: z.string().optional(),
  prev_subject: z.string().optional(),
  topic: z.string().optional(),
  prev_stream: z.number().int().optional(),
  stream: z.number().int().optional(),
});
const historySchema = z.array(entrySchema);

export interface HistoryReplay {
  readonly store: Store;
  readonly users: ReadonlyMap<number, number>;
  readonly channels: ReadonlyMap<number, number>;
  readonly messages: ReadonlyMap<number, number>;
  /** What the message's own content went through (mention IDs, upload links). */
  readonly rewrite: (content: string) => string;
  readonly count: (what: string, n?: number) => void;
  readonly skip: (why: string, example: string) => void;
}

function parseHistory(text: string): z.infer<typeof historySchema> | null {
  try {
    const parsed = historySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function replayEditHistories(c: HistoryReplay, messages: readonly ZulipMessage[]): void {
  for (const m of messages) {
    if (m.edit_history === null || m.edit_history === undefined) continue;
    const messageId = c.messages.get(m.id);
    if (messageId === undefined) continue;
    const raw = parseHistory(m.edit_history);
    if (raw === null) {
      c.skip("edit history that is not a list of Zulip's edit entries", `message ${m.id}`);
      continue;
    }
    const edits: ImportedEdit[] = [];
    for (const e of raw) {
      const userId = e.user_id === null || e.user_id === undefined ? null : (c.users.get(e.user_id) ?? null);
      if (userId === null && e.user_id !== null && e.user_id !== undefined)
        c.skip("edit history: the editor was not imported (the entry names none)", `message ${m.id}`);
      const prevStream = e.prev_stream === undefined ? undefined : c.channels.get(e.prev_stream);
      const stream = e.stream === undefined ? undefined : c.channels.get(e.stream);
      const moved = e.prev_stream !== undefined && prevStream !== undefined && stream !== undefined;
      if (e.prev_stream !== undefined && !moved)
        c.skip(
          "edit history: a move from or to a channel not in the export (left out of the entry)",
          `message ${m.id}`,
        );
      const prevTopic = e.prev_topic ?? e.prev_subject;
      // An entry that was only that move says nothing any more.
      if (e.prev_content === undefined && prevTopic === undefined && !moved) continue;
      edits.push({
        userId,
        timestamp: Math.floor(e.timestamp),
        ...(e.prev_content !== undefined ? { prevContent: c.rewrite(e.prev_content) } : {}),
        ...(prevTopic !== undefined ? { prevTopic } : {}),
        ...(prevTopic !== undefined && e.topic !== undefined ? { topic: e.topic } : {}),
        ...(moved ? { prevStream, stream } : {}),
      });
    }
    try {
      c.store.importEditHistory(messageId, edits);
      c.count("edit histories");
    } catch (error) {
      c.skip(`edit history refused: ${error instanceof Error ? error.message : String(error)}`, `message ${m.id}`);
    }
  }
}
