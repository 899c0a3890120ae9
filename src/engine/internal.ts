/**
 * @module engine/internal
 * White-box access to a store's in-memory state, for the engine's own tests and for
 * bulk tools that live beside the engine (the dataset generator). Not exported from
 * src/engine/index.ts: src/http, src/realtime and embedders never reach it (a test
 * scans their imports).
 */
import type { ReceivedSets } from "./received.js";
import type { StoreState } from "./state.js";

// Keyed by the Store object; typed structurally so this module needs no import of store.ts.
const STATES = new WeakMap<object, StoreState>();
const RECEIVED = new WeakMap<object, ReceivedSets>();

/** Called once by the Store constructor. */
export function registerInternals(store: object, state: StoreState, received: ReceivedSets): void {
  STATES.set(store, state);
  RECEIVED.set(store, received);
}

export function internals(store: object): StoreState {
  const state = STATES.get(store);
  if (!state) throw new Error("not a store opened by this engine");
  return state;
}

/** The store's per-user received sets (received.ts), which live beside its state. */
export function receivedSetsOf(store: object): ReceivedSets {
  const received = RECEIVED.get(store);
  if (!received) throw new Error("not a store opened by this engine");
  return received;
}
