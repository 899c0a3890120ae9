/**
 * @module engine/internal
 * White-box access to a store's in-memory state, for the engine's own tests and for
 * bulk tools that live beside the engine (the dataset generator). Not exported from
 * src/engine/index.ts: src/http, src/realtime and embedders never reach it.
 */
import type { Store } from "./store.js";
import type { StoreState } from "./state.js";

export function internals(store: Store): StoreState {
  return store.state;
}
