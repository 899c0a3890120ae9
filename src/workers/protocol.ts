/**
 * @module workers/protocol
 * What the supervisor of `parley serve --workers` and its workers tell each other over
 * Node's IPC channel, and the environment a worker starts with.
 */
import { z } from "zod";

/** Set in a worker's environment: "writer", or "reader-N". */
export const WORKER_ENV = "PARLEY_WORKER";
/** The private directory (mode 0700) of the server's Unix sockets. */
export const WORKER_DIR_ENV = "PARLEY_WORKER_DIR";
/** The token of the data directory's lock, which the supervisor holds and every worker joins. */
export const LOCK_TOKEN_ENV = "PARLEY_LOCK_TOKEN";
/**
 * The key (hex) every worker signs and checks temporary download URLs with
 * (uploads/tokens), random per supervisor: a URL one worker hands out opens on any.
 */
export const DOWNLOAD_KEY_ENV = "PARLEY_DOWNLOAD_KEY";
/** The public port every worker binds (chosen by the supervisor, also for --port 0). */
export const WORKER_PORT_ENV = "PARLEY_WORKER_PORT";
/**
 * The port of the HTTP/1.0-capable listener (--compat-port), which the writer alone
 * binds: chosen by the supervisor (also for --compat-port 0), so a restarted writer
 * binds the same one. Absent without --compat-port.
 */
export const WORKER_COMPAT_PORT_ENV = "PARLEY_WORKER_COMPAT_PORT";

/** How many workers the server runs (one writer, the rest readers): queue IDs name one (http/queue-routing). */
export const WORKER_COUNT_ENV = "PARLEY_WORKER_COUNT";

/** The writer's listener for forwarded requests, in the worker directory (a reader's is `<name>.sock`). */
export const WRITER_SOCKET = "writer.sock";
/** The limits the writer keeps for the whole server (http/shared-limits), in the worker directory. */
export const LIMITS_SOCKET = "limits.sock";
/** The writer's released event batches, to every reader's own queues (realtime/writer-stream). */
export const EVENTS_SOCKET = "events.sock";

export const workerMessage = z.discriminatedUnion("type", [
  /** Listening: the supervisor may start the readers (after the writer) and greet the operator. */
  z.object({ type: z.literal("ready") }),
  /** The writer answers GET /metrics: it asks for every reader's series. */
  z.object({ type: z.literal("collect-metrics"), id: z.number() }),
  /** A reader's series (prom-client JSON). */
  z.object({ type: z.literal("metrics"), id: z.number(), series: z.array(z.unknown()) }),
]);
export type WorkerMessage = z.infer<typeof workerMessage>;

export const supervisorMessage = z.discriminatedUnion("type", [
  /** To a reader: send your series. */
  z.object({ type: z.literal("send-metrics"), id: z.number() }),
  /** To the writer: the readers' series it asked for. */
  z.object({ type: z.literal("peer-metrics"), id: z.number(), series: z.array(z.array(z.unknown())) }),
]);
export type SupervisorMessage = z.infer<typeof supervisorMessage>;
