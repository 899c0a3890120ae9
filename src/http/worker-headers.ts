/**
 * @module http/worker-headers
 * Headers between the workers of `parley serve --workers` (http/forward, src/workers).
 */

/** Carries the client's address from a reader to the writer; a client's own copy is dropped. */
export const CLIENT_ADDRESS_HEADER = "x-parley-client-address";
/** Names the worker that answered (tests and operators tell workers apart). */
export const WORKER_HEADER = "X-Parley-Worker";
