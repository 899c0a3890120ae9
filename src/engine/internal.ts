/**
 * @module engine/internal
 * White-box access to a store's in-memory state, for the engine's own tests and for
 * bulk tools that live beside the engine (the dataset generator). Not exported from
 * src/engine/index.ts: src/http, src/realtime and embedders never reach it (a test
 * scans their imports).
 */
import type { Store } from "./store.js";
import type { StoreState } from "./state.js";

const STATES = new WeakMap<Store, StoreState>();

/** Called once by the Store constructor. */
export function registerInternals(store: Store, state: StoreState): void {
  STATES.set(store, state);
}

export function internals(store: Store): StoreState {
  const state = STATES.get(store);
  if (!state) throw new Error("not a store opened by this engine");
  return state;
}
