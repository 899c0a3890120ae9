/**
 * @module bench/events/protocol
 * IPC messages between the benchmark's parent (load generator) and its child servers.
 */
export interface Credentials {
  readonly email: string;
  readonly apiKey: string;
}

export interface ReadyMessage {
  readonly type: "ready";
  readonly port: number;
  readonly setupSecs: number;
  readonly channelId: number;
  readonly sender: Credentials;
  readonly users: readonly Credentials[];
}

export type ParentRequest = { readonly cmd: "gc" } | { readonly cmd: "stats" };

export type ChildReply =
  | { readonly reply: "gc"; readonly rss: number; readonly heapUsed: number }
  | {
      readonly reply: "stats";
      readonly queues: number;
      readonly polling: number;
      readonly queuedEvents: number;
      readonly eventsDelivered: number;
    };

export interface FloorReadyMessage {
  readonly type: "floor-ready";
  readonly port: number;
}
