/**
 * @module test/support/snapshot
 * A fingerprint of everything a store holds — every LMDB table, the counters, every
 * cached bitmap and the in-memory entity maps — to prove a failed call changed nothing.
 */
import { expect } from "vitest";
import type { EngineError, Store } from "../../src/engine/index.js";
import { TABLE_NAMES } from "../../src/engine/storage/tables.js";
import { internals } from "../../src/engine/internal.js";

/** Everything persisted plus the in-memory indexes and cached bitmaps: equal before and after a failed call. */
export function fingerprint(store: Store): string {
  const tb = internals(store).tables;
  // Every table of the engine's registry: a new table is fingerprinted without edits here.
  const dbs = Object.fromEntries(TABLE_NAMES.map((name) => [name, tb[name]])) as unknown as Record<string, { getRange(): Iterable<{ key: unknown; value: unknown }> }>;
  const enc = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v);
  const disk = Object.fromEntries(Object.entries(dbs).map(([name, db]) => [name, [...db.getRange()].map(({ key, value }) => [key, enc(value)])]));
  const st = internals(store);
  const keys = [...st.bitmaps.persistedKeys()];
  return JSON.stringify({
    disk,
    counters: st.counters,
    cache: keys.map((k) => [k, st.bitmaps.get(k).toArray()]),
    users: [...st.users.entries()],
    channels: [...st.channels.entries()],
    channelByName: [...st.channelByName.entries()],
    subs: [...st.subsByUser.entries()].map(([u, m]) => [u, [...m.entries()]]),
    subscribers: [...st.subscribers.entries()].map(([c, set]) => [c, [...set]]),
    groups: [...st.groups.entries()],
    conversations: [...st.conversations.entries()],
    userTopics: [...st.userTopics.entries()].map(([u, m]) => [u, [...m.entries()]]),
  });
}

/** Asserts that `fn` throws the expected engine error and leaves `store` exactly as it was. */
export function expectFailsUnchanged(store: Store, fn: () => unknown, expected: { code: string; message: string; data?: unknown }): void {
  const before = fingerprint(store);
  let error: EngineError | undefined;
  try {
    fn();
  } catch (e) {
    error = e as EngineError;
  }
  expect(error, "expected the call to fail").toBeDefined();
  expect({ code: error!.code, message: error!.message, ...(expected.data === undefined ? {} : { data: error!.data }) }).toEqual(expected);
  expect(fingerprint(store)).toBe(before);
}
