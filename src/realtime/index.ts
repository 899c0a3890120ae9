/**
 * @module realtime
 * Zulip's event queues over the engine's typed events: register, long-poll, delete,
 * heartbeats, idle collection, graceful-restart persistence.
 */
export { EventHub, BadEventQueueError, DEFAULT_MAX_QUEUE_EVENTS, type HubOptions, type HubStats, type PollInput } from "./hub.js";
export type { QueueOptions, SavedQueue } from "./queue.js";
export type { NarrowTermInput } from "./queue.js";
export { ManualClock, systemClock, type Clock } from "./clock.js";
export { loadSavedQueues, writeSavedQueues, SAVED_QUEUES_FILE } from "./persist.js";
