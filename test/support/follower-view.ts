/**
 * @module test/support/follower-view
 * What a store answers and holds, as one comparable value: a follower that caught up
 * must equal a follower freshly opened on the same directory (test/engine/follower*).
 * Answers first (narrow windows, unread counts, directories, per-user lists), asked
 * while the caches hold whatever the run left in them, then everything held in memory:
 * the fingerprint (tables, counters, every bitmap through the cache, the main entity
 * maps, stale cached conversations and topic policies) and every entity index's maps.
 */
import { EngineError, type Store } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { fingerprint } from "./snapshot.js";

/** Maps and sets as sorted arrays, recursively (insertion order differs between a follower and a fresh open). */
function plain(value: unknown): unknown {
  if (value instanceof Map) return [...value.entries()].map(([k, v]) => [plain(k), plain(v)]).sort(byJson);
  if (value instanceof Set) return [...value].map(plain).sort(byJson);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v);
    return out;
  }
  return value;
}

function byJson(a: unknown, b: unknown): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** An answer, or the error it raised (a deactivated user's queries fail alike on both). */
function answer(fn: () => unknown): unknown {
  try {
    return plain(fn());
  } catch (error) {
    if (error instanceof EngineError) return { error: error.code, message: error.message };
    throw error;
  }
}

/** What `viewers` are answered, by query. */
export function answers(store: Store, viewers: readonly number[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const id of viewers) {
    out[`${id}`] = {
      home: answer(() => store.getMessages(id, { narrow: [], anchor: "newest", numBefore: 40, numAfter: 0 })),
      firstUnread: answer(() =>
        store.getMessages(id, { narrow: [], anchor: "first_unread", numBefore: 5, numAfter: 5 }),
      ),
      starred: answer(() =>
        store.getMessages(id, {
          narrow: [{ operator: "is", operand: "starred" }],
          anchor: "newest",
          numBefore: 20,
          numAfter: 0,
        }),
      ),
      unread: answer(() => store.unreadSummary(id)),
      recent: answer(() => store.recentConversations(id)),
      users: answer(() => store.listUsers(id)),
      subscriptions: answer(() => store.subscriptionLists(id, true)),
      channels: answer(() => store.visibleChannels(id, true)),
      groups: answer(() => store.userGroups(id, true)),
      topics: answer(() => store.userTopics(id)),
      settings: answer(() => store.userSettings(id)),
      muted: answer(() => store.mutedUsers(id)),
      alertWords: answer(() => store.alertWords(id)),
      statuses: answer(() => store.realmUserStatuses(id)),
      presence: answer(() => store.realmPresence(id)),
      devices: answer(() => store.devices(id)),
      maxMessageId: answer(() => store.maxMessageId(id)),
    };
  }
  return out;
}

/** Every entity index's public maps (presence's change logs aside: their order follows arrival). */
export function entityMaps(store: Store): unknown {
  const entities = internals(store).entities as unknown as Record<string, Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const [name, index] of Object.entries(entities)) {
    const maps: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(index))
      if ((value instanceof Map || value instanceof Set) && !(name === "presence" && field === "logs"))
        maps[field] = plain(value);
    out[name] = maps;
  }
  return out;
}

/** The answers, then the memory: compare two stores' with toEqual (a diff names the part). */
export function followerView(store: Store, viewers: readonly number[]): Record<string, unknown> {
  const asked = answers(store, viewers);
  return {
    answers: asked,
    entities: entityMaps(store),
    lastMessageId: store.lastMessageId,
    fingerprint: JSON.parse(fingerprint(store)) as unknown,
  };
}
