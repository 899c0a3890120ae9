/**
 * @module test/support/version-4-records
 * Stores messages' records as a version-4 build wrote them (before the topic registry,
 * actions/topic-registry): each holds its topic and whole edit history itself, names no
 * row, and its message_meta is [channelId, topic]. What an older store's records look like.
 */
import { internals } from "../../src/engine/internal.js";
import { key } from "../../src/engine/index/keys.js";
import { getMessageRecord, putMessageRecord } from "../../src/engine/storage/message-records.js";
import { messageMetaOf, type Message } from "../../src/engine/types.js";
import type { Store } from "../../src/engine/index.js";

export function writeAsVersion4(store: Store, ids: readonly number[]): void {
  const state = internals(store);
  state.write((ctx) => {
    for (const id of ids) {
      const resolved = getMessageRecord(state.tables, id);
      if (!resolved) throw new Error(`no message ${id}`);
      const { topicRef, topicFrom, ...legacy } = resolved;
      void topicFrom;
      putMessageRecord(state.tables, legacy satisfies Message);
      state.tables.messageMeta.putSync(id, messageMetaOf(legacy));
      if (topicRef !== undefined) state.bitmaps.removeMany(key.topicRow(topicRef), [id]);
      ctx.changed({ kind: "message", id, realmId: legacy.realmId, fields: ["history"] });
    }
  });
}
