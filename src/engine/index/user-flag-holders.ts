/**
 * @module index/user-flag-holders
 * Which users hold each per-user flag bitmap. For each stored flag, key.userFlagHolders
 * is a bitmap of user IDs: every user whose `u:<id>:<flag>` bitmap ever got an ID,
 * added by BitmapStore in the same write (its directory rule, userFlagHolderOf). It is a
 * superset (a user whose bits were all removed stays listed), which is all readers need:
 * a user not listed has no such bitmap, so it is not read.
 *
 * Why: an event about one message tells each of 10,000 recipients their flags, and a
 * move asks each member of two channels for their granted, withdrawn and historical
 * rows. Nearly everyone holds no starred, collapsed, alert-word, historical, granted or
 * withdrawn bitmap, and each of those reads was a cache lookup, or, after a restart, a
 * disk read caching an empty bitmap (an edit to 10,000 queues: ~60,000 of them).
 *
 * Stores written before the holders existed get them built once, at their first open
 * by this code (buildUserFlagHolders); verify checks that every user flag bitmap on disk
 * is listed.
 */
import { EMPTY, RoaringBitmap32, type Bitmap, type ReadonlyBitmap } from "./bitmap-store.js";
import { key, STORED_FLAGS, userFlagHolderOf, type StoredFlag } from "./keys.js";
import type { BitmapStore } from "./bitmap-store.js";
import type { Tables } from "../storage/tables.js";

/** Meta key set once every user flag bitmap on disk is listed in its holders. */
export const USER_FLAG_HOLDERS_KEY = "userFlagHoldersIndexed";

interface BitmapReader {
  get(key: string): ReadonlyBitmap;
}

/** Whether a bitmap key is one of the holders (its IDs are users, not messages). */
export function isUserFlagHoldersKey(name: string): boolean {
  return name.startsWith("uh:");
}

/** Whether the user may hold a `flag` bitmap (false: they have none; true: read it). */
export function holdsUserFlag(bitmaps: BitmapReader, userId: number, flag: StoredFlag): boolean {
  return bitmaps.get(key.userFlagHolders(flag)).has(userId);
}

/** The user's `flag` bitmap, EMPTY without reading it when they hold none. Live: do not mutate. */
export function userFlagBitmap(bitmaps: BitmapReader, userId: number, flag: StoredFlag): ReadonlyBitmap {
  return holdsUserFlag(bitmaps, userId, flag) ? bitmaps.get(key.userFlag(userId, flag)) : EMPTY;
}

/** Whether `id` is in the user's `flag` bitmap. */
export function userFlagHas(bitmaps: BitmapReader, userId: number, flag: StoredFlag, id: number): boolean {
  return holdsUserFlag(bitmaps, userId, flag) && bitmaps.get(key.userFlag(userId, flag)).has(id);
}

/** Per flag, the users with a user flag bitmap on disk (one scan of those keys). */
export function usersWithFlagBitmaps(tables: Tables): Map<StoredFlag, Bitmap> {
  const out = new Map<StoredFlag, Bitmap>(STORED_FLAGS.map((flag) => [flag, new RoaringBitmap32()]));
  let last = "";
  // A chunk is persisted only while it holds an ID, so a key with chunks holds one.
  for (const [name] of tables.bitmapChunks.getKeys({ start: ["u:"], end: ["u;"] })) {
    if (name === last) continue;
    last = name;
    const place = userFlagHolderOf(name);
    if (place === null) continue;
    const flag = place[0].slice(3) as StoredFlag;
    out.get(flag)?.add(place[1]);
  }
  return out;
}

/**
 * Lists every user flag bitmap on disk in its holders, once per store (a store written
 * before the holders existed): one scan of the user flag keys and one write. Then tells
 * the bitmap store that the listing is complete.
 */
export function buildUserFlagHolders(tables: Tables, bitmaps: BitmapStore, write: (body: () => void) => void): void {
  if (tables.meta.get(USER_FLAG_HOLDERS_KEY) !== true) {
    const holders = usersWithFlagBitmaps(tables);
    write(() => {
      for (const [flag, users] of holders) if (!users.isEmpty) bitmaps.addBitmap(key.userFlagHolders(flag), users);
      tables.meta.putSync(USER_FLAG_HOLDERS_KEY, true);
    });
  }
  // Now a user flag key the holders do not list is read as empty without touching the disk.
  bitmaps.directoryComplete();
}

/** For verify: user flag bitmaps on disk whose user their holders do not list. */
export function unlistedUserFlagBitmaps(tables: Tables, bitmaps: BitmapStore): string[] {
  const problems: string[] = [];
  for (const [flag, users] of usersWithFlagBitmaps(tables)) {
    const listed = bitmaps.loadFromDisk(key.userFlagHolders(flag));
    for (const userId of RoaringBitmap32.andNot(users, listed))
      problems.push(`user ${userId} has a ${flag} bitmap that ${key.userFlagHolders(flag)} does not list`);
  }
  return problems;
}
