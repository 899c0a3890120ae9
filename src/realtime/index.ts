/**
 * @module realtime
 * Zulip's event queues over the engine's typed events: register, long-poll, delete,
 * heartbeats, idle collection, graceful-restart persistence.
 */
export {
  EventHub,
  BadEventQueueError,
  DEFAULT_MAX_QUEUE_EVENTS,
  DEFAULT_MAX_QUEUES_PER_REALM,
  DEFAULT_MAX_QUEUES_PER_USER,
  type HubOptions,
  type HubStats,
  type PollInput,
} from "./hub.js";
export type { QueueOptions, SavedQueue } from "./queue.js";
export type { NarrowTermInput } from "./queue.js";
export { ManualClock, systemClock, type Clock } from "./clock.js";
export {
  loadSavedQueues,
  writeSavedQueues,
  SAVED_QUEUES_FILE,
  DEFAULT_SAVE_DEADLINE_MS,
  type SaveOptions,
  type SaveResult,
} from "./persist.js";
