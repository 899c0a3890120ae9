/**
 * A user's channel part (engine/received.ts) built from an ID on: it equals the whole
 * part from there on, loads only the channel chunks from there on, and is completed
 * downward (and extended upward by new messages) exactly, across unsubscribe and
 * resubscribe intervals that span bitmap chunks.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RoaringBitmap32 } from "../../src/engine/index/bitmap-store.js";
import { internals } from "../../src/engine/internal.js";
import { ReceivedSets } from "../../src/engine/received.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

const CHUNK = 1 << 16;

let t: TempStore | null = null;
afterEach(() => {
  t?.cleanup();
  t = null;
});

describe("channel part from an ID on", () => {
  it("equals the whole part above the ID, reads only those chunks, and completes downward and upward", () => {
    t = tempStore();
    const store = t.store;
    const w = seedRealm(store);
    const state = internals(store);
    const received: number[] = [];
    const send = (at: number | null, alsoReceived: boolean) => {
      if (at !== null) state.counters.nextMessageId = at;
      const id = store.sendMessage({
        senderId: w.bob.id,
        to: { type: "channel", channel: "general", topic: "t" },
        content: "x",
      }).id;
      if (alsoReceived) received.push(id);
      return id;
    };
    send(null, true);
    send(CHUNK + 10, true);
    send(3 * CHUNK + 5, true);
    store.unsubscribe(w.alice.id, ["general"]);
    send(4 * CHUNK + 1, false);
    send(5 * CHUNK + 2, false);
    store.subscribe(w.alice.id, { channels: [{ name: "general" }] });
    send(5 * CHUNK + 3, true);
    send(6 * CHUNK + 4, true);
    const above = (from: number) => received.filter((id) => id >= from);

    for (const from of [0, 1, CHUNK + 11, 4 * CHUNK, 5 * CHUNK + 3, 7 * CHUNK]) {
      state.bitmaps.clearCache();
      const sets = new ReceivedSets(state);
      const ranges = vi.spyOn(state.tables.bitmapChunks, "getRange");
      const part = sets.channelPart(w.alice.id, from);
      // Only chunks from `from`'s chunk on were read (for each channel alice is in).
      for (const [options] of ranges.mock.calls)
        expect(((options?.start as unknown[] | undefined)?.[1] as number) >= Math.floor(from / CHUNK)).toBe(true);
      ranges.mockRestore();
      // It holds whole chunks: a lower start in the same chunk builds nothing more.
      const unions = vi.spyOn(RoaringBitmap32, "orMany");
      expect(sets.channelPart(w.alice.id, Math.floor(from / CHUNK) * CHUNK)).toBe(part);
      expect(unions).not.toHaveBeenCalled();
      unions.mockRestore();
      expect(
        part.toArray().filter((id) => id >= Math.floor(from / CHUNK) * CHUNK),
        `from ${from}`,
      ).toEqual(above(Math.floor(from / CHUNK) * CHUNK));
      // New messages extend it; a lower start completes it.
      send(null, true);
      expect(
        sets
          .channelPart(w.alice.id, from)
          .toArray()
          .filter((id) => id >= from),
      ).toEqual(above(from));
      expect(sets.channelPart(w.alice.id).toArray()).toEqual(received);
      expect(
        sets
          .personal(w.alice.id)
          .toArray()
          .filter((id) => received.includes(id)),
      ).toEqual(received);
    }
  });
});
