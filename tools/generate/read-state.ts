/**
 * @module tools/generate/read-state
 * Bulk "read everything up to message X" for generated users.
 *
 * Why not Store.updateFlags: it checks every ID (record load + access check), ~2 µs
 * each; a 10,000-user realm with 1M messages would need billions of those. A reader
 * who caught up to X is exactly the ID range [1, X] in the read bitmap (extra IDs the
 * user never received are harmless: unread = received AND NOT read, and messages
 * without a row report read+historical regardless). The engine has no range flag API,
 * so this goes to the bitmap store's addRange, inside the caller's store.batch().
 */
import type { Store } from "../../src/engine/index.js";
import { key } from "../../src/engine/index/keys.js";
import { internals } from "../../src/engine/internal.js";

/** Marks message IDs [1, upTo] read for `userId`. Call inside store.batch(). */
export function markReadUpTo(store: Store, userId: number, upTo: number): void {
  if (upTo < 1) return;
  internals(store).bitmaps.addRange(key.userFlag(userId, "read"), 1, upTo + 1);
}
