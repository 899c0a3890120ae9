/**
 * @module parley
 * The package's entry point for embedders: the engine's whole public API
 * (src/engine/index.ts) with openStore wired to Zulip-flavoured Markdown
 * (src/markdown). The engine itself takes its renderer as a dependency and imports no
 * renderer; pass `renderer` to use another one.
 */
import {
  openFollower as openEngineFollower,
  openReplica as openEngineReplica,
  openStore as openEngineStore,
  type MessageRenderer,
  type Store,
  type StoreOptions,
} from "./engine/index.js";
import { renderMarkdown } from "./markdown/index.js";

export * from "./engine/index.js";
export { renderMarkdown, renderFullMarkdown } from "./markdown/index.js";

/** Options of openStore: the engine's, with the renderer optional (Markdown by default). */
export type OpenStoreOptions = Omit<StoreOptions, "renderer"> & { readonly renderer?: MessageRenderer };

/** Opens (or creates) the store in `dir`, rendering messages as Zulip-flavoured Markdown unless told otherwise. */
export function openStore(dir: string, options: OpenStoreOptions = {}): Store {
  return openEngineStore(dir, { ...options, renderer: options.renderer ?? renderMarkdown });
}

/** Opens `dir` as a follower of its server's writer (the engine's openFollower), rendering as openStore does. */
export function openFollower(dir: string, options: OpenStoreOptions & { readonly lockToken: string }): Store {
  return openEngineFollower(dir, { ...options, renderer: options.renderer ?? renderMarkdown });
}

/** Opens `dir` as a cluster replica (the engine's openReplica), rendering as openStore does. */
export function openReplica(dir: string, options: OpenStoreOptions = {}): Store {
  return openEngineReplica(dir, { ...options, renderer: options.renderer ?? renderMarkdown });
}
