/**
 * @module tools/generate/read-state
 * Bulk "read everything up to message X" for generated users.
 *
 * Why not Store.updateFlags: it checks every ID (record load + access check), ~2 µs
 * each; a 10,000-user realm with 1M messages would need billions of those. A reader
 * who caught up to X is exactly the ID range [1, X] in the read bitmap (extra IDs the
 * user never received are harmless: unread = received AND NOT read, and messages
 * without a row report read+historical regardless). The engine has no range flag API
 * yet (reported), so this adds the range to the live cached bitmap, inside the
 * caller's store.batch(), after marking each touched 2^16-ID chunk dirty through the
 * public add() path so that commit() persists those chunks.
 */
import type { Store } from "../../src/engine/index.js";
import { RoaringBitmap32, type Bitmap } from "../../src/engine/index/bitmap-store.js";
import { key } from "../../src/engine/index/keys.js";
import { internals } from "../../src/engine/internal.js";

const CHUNK_SPAN = 1 << 16;

/** Marks message IDs [1, upTo] read for `userId`. Call inside store.batch(). */
export function markReadUpTo(store: Store, userId: number, upTo: number): void {
  if (upTo < 1) return;
  const k = key.userFlag(userId, "read");
  const bitmaps = internals(store).bitmaps;
  for (let low = 0; low <= upTo; low += CHUNK_SPAN) {
    const from = Math.max(1, low);
    const to = Math.min(upTo + 1, low + CHUNK_SPAN);
    const live = bitmaps.get(k);
    if (live.rangeCardinality(from, to) === to - from) continue;
    // One absent ID through the public path marks this chunk dirty (and undoable).
    const missing = RoaringBitmap32.andNot(new RoaringBitmap32().addRange(from, to), live);
    bitmaps.add(k, missing.minimum());
    (bitmaps.get(k) as Bitmap).addRange(from, to);
  }
}
