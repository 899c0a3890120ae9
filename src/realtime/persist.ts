/**
 * @module realtime/persist
 * Event queues across a graceful restart: on SIGTERM the server writes every queue
 * (descriptor and pending events) to DATA/event-queues.json atomically (temporary
 * file, fsync, rename); the next start reads it, restores the queues and deletes the
 * file. After a crash there is no file, and clients get BAD_EVENT_QUEUE_ID and
 * register again, as with Zulip.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { SavedQueue } from "./queue.js";

export const SAVED_QUEUES_FILE = "event-queues.json";

const savedQueue = z.object({
  id: z.string(),
  userId: z.number().int(),
  realmId: z.number().int(),
  nextEventId: z.number().int().min(0),
  lastActivity: z.number(),
  options: z.object({
    eventTypes: z.array(z.string()).nullable(),
    allPublicStreams: z.boolean(),
    narrow: z.array(z.object({ operator: z.string(), operand: z.unknown(), negated: z.boolean().optional() })),
    applyMarkdown: z.boolean(),
    clientGravatar: z.boolean(),
    emptyTopicName: z.boolean(),
    streamTypingNotifications: z.boolean(),
    // Queues saved before this option existed did not ask for it.
    includeDeactivatedGroups: z.boolean().default(false),
    presenceFormat: z.enum(["legacy", "slim", "modern"]).default("legacy"),
    individualEmojiChanges: z.boolean().default(false),
    idleTimeoutSecs: z.number().positive(),
  }),
  events: z.array(z.object({ id: z.number().int(), body: z.string() })),
});
const savedFile = z.object({ version: z.literal(1), queues: z.array(savedQueue) });

export function writeSavedQueues(dataDir: string, queues: readonly SavedQueue[]): void {
  const path = join(dataDir, SAVED_QUEUES_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, JSON.stringify({ version: 1, queues }));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * Reads and deletes the saved queues; [] when there are none. A file that does not
 * parse is reported through `warn` and dropped: clients then register again.
 */
export function loadSavedQueues(dataDir: string, warn: (message: string) => void = () => undefined): SavedQueue[] {
  const path = join(dataDir, SAVED_QUEUES_FILE);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  rmSync(path, { force: true });
  try {
    return savedFile.parse(JSON.parse(text)).queues as SavedQueue[];
  } catch (error) {
    warn(`ignoring ${path}: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`);
    return [];
  }
}
