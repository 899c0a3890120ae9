/**
 * @module test/support/snapshot
 * A fingerprint of everything a store holds (counters, entity maps, every persisted
 * bitmap chunk and record), to prove a failed call changed nothing.
 */
import { createHash } from "node:crypto";
import type { Store } from "../../src/engine/index.js";

export function fingerprint(store: Store): string {
  const t = store.state.tables;
  const hash = createHash("sha256");
  hash.update(JSON.stringify(store.state.counters));
  for (const db of [t.realms, t.users, t.channels, t.groups, t.conversations, t.messages, t.subscriptions, t.userTopics, t.dateMessage]) {
    for (const { key, value } of db.getRange()) hash.update(JSON.stringify([key, value]));
  }
  for (const { key, value } of t.bitmapChunks.getRange()) {
    hash.update(JSON.stringify(key));
    hash.update(value);
  }
  return hash.digest("hex");
}
