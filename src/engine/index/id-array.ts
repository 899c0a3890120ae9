/**
 * @module index/id-array
 * A bitmap's IDs as a plain array. roaring's toArray() builds the JS array element by
 * element through the native boundary (about 10 ms for 48k IDs); copying its
 * Uint32Array in JS is several times faster, which matters where a whole backlog is
 * marked read in one request.
 */
import type { ReadonlyBitmap } from "./bitmap-store.js";

export function idArrayOf(bitmap: ReadonlyBitmap): number[] {
  const packed = bitmap.toUint32Array();
  const out = new Array<number>(packed.length);
  for (let i = 0; i < packed.length; i++) out[i] = packed[i]!;
  return out;
}
