/**
 * @module test/support/snapshot
 * A fingerprint of everything a store holds — every LMDB table, the counters, every
 * cached bitmap and the in-memory entity maps — to prove a failed call changed nothing,
 * and (compared across a reopen) that memory held exactly what is on disk.
 */
import { expect } from "vitest";
import type { EngineError, Store, UserTopic } from "../../src/engine/index.js";
import { TABLE_NAMES } from "../../src/engine/storage/tables.js";
import { internals } from "../../src/engine/internal.js";

/** Everything persisted plus the in-memory indexes and cached bitmaps: equal before and after a failed call. */
export function fingerprint(store: Store): string {
  const tb = internals(store).tables;
  // Every table of the engine's registry: a new table is fingerprinted without edits here.
  const dbs = Object.fromEntries(TABLE_NAMES.map((name) => [name, tb[name]])) as unknown as Record<
    string,
    { getRange(): Iterable<{ key: unknown; value: unknown }> }
  >;
  const enc = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v);
  const disk = Object.fromEntries(
    Object.entries(dbs).map(([name, db]) => [name, [...db.getRange()].map(({ key, value }) => [key, enc(value)])]),
  );
  const st = internals(store);
  // Persisted keys and cached ones: a failed write may have left IDs under a key it created.
  const keys = [...new Set([...st.bitmaps.persistedKeys(), ...st.bitmaps.cachedKeys()])].sort();
  // Sorted by key: a map's insertion order differs between a running store and one
  // freshly loaded, and only its content matters (so a reopened store compares equal).
  const entries = <K, V>(map: ReadonlyMap<K, V>, value: (v: V) => unknown = (v) => v): [K, unknown][] =>
    [...map.entries()]
      .sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0))
      .map(([k, v]) => [k, value(v)]);
  const sortedSet = (set: ReadonlySet<number>) => [...set].sort((a, b) => a - b);
  return JSON.stringify({
    disk,
    counters: st.counters,
    cache: keys.map((k): [string, number[]] => [k, st.bitmaps.get(k).toArray()]).filter(([, ids]) => ids.length > 0),
    realms: entries(st.realms),
    realmBySubdomain: entries(st.realmBySubdomain),
    users: entries(st.users),
    userByEmail: entries(st.userByEmail),
    userByApiKey: entries(st.userByApiKey),
    usersByName: entries(st.usersByName, (ids) => [...ids].sort((a, b) => a - b)),
    channels: entries(st.channels),
    channelByName: entries(st.channelByName),
    subs: entries(st.subsByUser, (m) => entries(m)),
    subscribers: entries(st.subscribers, sortedSet),
    groups: entries(st.groups),
    // Conversations and topic policies are read on demand into caches whose content
    // depends on what was asked: what is fingerprinted is that each cached entry is
    // what disk holds (a failed write must not leave a cached entry behind).
    staleCaches: staleCacheEntries(store),
    attachments: entries(st.attachments),
    attachmentByPath: entries(st.attachmentByPath),
    uploadSpace: entries(st.uploadSpaceByRealm),
  });
}

/** Cached conversations and per-user topic lists that differ from disk (empty when memory agrees with disk). */
function staleCacheEntries(store: Store): string[] {
  const st = internals(store);
  const stale: string[] = [];
  for (const [id, conversation] of st.conversations.cached()) {
    if (JSON.stringify(st.tables.conversations.get(id)) !== JSON.stringify(conversation))
      stale.push(`conversation ${id}`);
  }
  for (const [userId, topics] of st.userTopics.cached()) {
    const onDisk = [...st.tables.userTopics.getRange({ start: [userId], end: [userId + 1] })]
      .map(({ value }) => value as UserTopic)
      .filter((t) => t.policy !== 0);
    const cached = [...topics.values()];
    const byKey = (list: UserTopic[]) =>
      JSON.stringify(list.map((t) => [t.channelId, t.topic, t.policy, t.lastUpdated]).sort());
    if (byKey(onDisk) !== byKey(cached)) stale.push(`user topics of ${userId}`);
  }
  return stale;
}

/** Asserts that `fn` throws the expected engine error and leaves `store` exactly as it was. */
export function expectFailsUnchanged(
  store: Store,
  fn: () => unknown,
  expected: { code: string; message: string; data?: unknown },
): void {
  const before = fingerprint(store);
  let error: EngineError | undefined;
  try {
    fn();
  } catch (e) {
    error = e as EngineError;
  }
  expect(error, "expected the call to fail").toBeDefined();
  expect({
    code: error!.code,
    message: error!.message,
    ...(expected.data === undefined ? {} : { data: error!.data }),
  }).toEqual(expected);
  expect(fingerprint(store)).toBe(before);
}
