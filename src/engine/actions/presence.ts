/**
 * @module actions/presence
 * Presence (POST /users/me/presence), Zulip's rules: a ping records when the user was
 * last connected and, for "active", last active; a stored timestamp moves only when
 * the new one is more than PRESENCE_UPDATE_MIN_FREQ_SECONDS newer; every stored change
 * takes the next presence sequence number (Zulip's last_update_id). Users who turned
 * presence_enabled off are not recorded. A user seen for the first time, or coming
 * back after being inactive long enough to look offline soon, is announced at once
 * with a `presence` event to the users who may see them (not above
 * USER_LIMIT_FOR_PRESENCE_EVENTS active users: clients poll).
 *
 * Durability: presence is the most frequent request, so a ping changes memory only.
 * flushPresence() writes every record changed since the last flush in one transaction;
 * the server calls it every PRESENCE_FLUSH_INTERVAL_MS and at shutdown (Store.close).
 * A crash loses at most the timestamps of the pings since the last flush (a few
 * seconds): those users look as they did at that flush, nothing else is touched.
 * Sequence numbers are leased in blocks of PRESENCE_SEQ_BLOCK whose upper bound is
 * written (durably, before any number of the block is handed out), and a reopened
 * store resumes above that bound: numbers clients saw before a crash are never
 * handed out again, so `last_update_id` stays correct across a crash.
 */
import { BadRequestError, FollowerWriteError } from "../errors.js";
import { realmAudience } from "../events/audience.js";
import { PRESENCE_CEILING_KEY, type StoreState } from "../state.js";
import type { PresenceRecord, User } from "../types.js";
import { requireActiveUser } from "./users.js";
import { presenceEnabled } from "../queries/presence.js";

/** Zulip's PRESENCE_PING_INTERVAL_SECS and OFFLINE_THRESHOLD_SECS (as register reports them). */
export const PRESENCE_PING_INTERVAL_SECS = 60;
export const OFFLINE_THRESHOLD_SECS = 140;
/** Zulip's PRESENCE_UPDATE_MIN_FREQ_SECONDS: a newer timestamp closer than this is not stored. */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/** Zulip's PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS. */
export const LEGACY_ACTIVITY_OFFSET_SECS = 70;
/** Zulip's USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS. */
export const USER_LIMIT_FOR_PRESENCE_EVENTS = 100;
/** How often the server writes changed presence records: the most a crash can lose. */
export const PRESENCE_FLUSH_INTERVAL_MS = 2000;
/** Sequence numbers leased per durable write of the bound. */
export const PRESENCE_SEQ_BLOCK = 10_000;

export type PresenceStatus = "active" | "idle";

/** Inactive at least this long, an active ping announces the user (Zulip's "now online"). */
const NOW_ONLINE_AFTER_SECS = OFFLINE_THRESHOLD_SECS - PRESENCE_PING_INTERVAL_SECS - 10;
/** "Never" for the comparisons below: a day, as Zulip. */
const NEVER = 86_400;

/** Records a ping from `userId` at the store's clock. Bots are refused, as Zulip's human_users_only. */
export function updatePresence(state: StoreState, userId: number, status: PresenceStatus): void {
  // A ping changes memory first (the flush writes it later): a follower must refuse before that.
  if (state.role !== "writer") throw new FollowerWriteError("a presence ping");
  const user = requireActiveUser(state, userId);
  if (user.isBot) throw new BadRequestError("This endpoint does not accept bot requests.");
  if (!presenceEnabled(state, user.id)) return;
  const now = state.now();
  const active = status === "active";
  const current = state.presence.get(user.id);
  const sinceActive = current?.lastActive != null ? now - current.lastActive : NEVER;
  const sinceConnected = current ? now - current.lastConnected : NEVER;
  const becameOnline = active && sinceActive > NOW_ONLINE_AFTER_SECS;

  let next: PresenceRecord | null = null;
  if (!current) {
    next = {
      userId: user.id,
      realmId: user.realmId,
      lastActive: active ? now : null,
      lastConnected: now,
      lastUpdateId: 0,
    };
  } else {
    let lastConnected = current.lastConnected;
    let lastActive = current.lastActive;
    if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECONDS) lastConnected = now;
    if (active && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
      lastActive = now;
      if (now > lastConnected) lastConnected = now;
    }
    if (lastConnected !== current.lastConnected || lastActive !== current.lastActive)
      next = { ...current, lastActive, lastConnected };
  }
  if (next === null) return;
  next.lastUpdateId = nextPresenceSeq(state);
  state.indexPresence(next);
  state.presenceDirty.add(user.id);
  state.changedInMemory({ kind: "presence", id: user.id });
  const log = state.presenceLogs.get(user.realmId);
  log?.compactIfStale(state.usersOfRealm(user.realmId).size, (id) => state.presence.get(id)?.lastUpdateId);
  if (!current || becameOnline) announce(state, user, next);
}

/** The next sequence number; extends the durable lease first when it is used up. */
/**
 * A person's presence as an export had it (parley import): last active and last
 * connected times set as they were, not as a ping at the import's clock would set them
 * (a ping rounds to PRESENCE_UPDATE_MIN_FREQ_SECONDS). In memory like a ping, flushed
 * with them; no event (nobody is told an imported person came online).
 */
export function restorePresence(
  state: StoreState,
  userId: number,
  lastActive: number | null,
  lastConnected: number,
): void {
  if (state.role !== "writer") throw new FollowerWriteError("a presence import");
  const user = requireActiveUser(state, userId);
  if (user.isBot) throw new BadRequestError("Presence is not supported for bot users.");
  if (!Number.isFinite(lastConnected) || (lastActive !== null && !Number.isFinite(lastActive)))
    throw new BadRequestError("Invalid presence times");
  const record: PresenceRecord = { userId: user.id, realmId: user.realmId, lastActive, lastConnected, lastUpdateId: 0 };
  record.lastUpdateId = nextPresenceSeq(state);
  state.indexPresence(record);
  state.presenceDirty.add(user.id);
  state.changedInMemory({ kind: "presence", id: user.id });
}

function nextPresenceSeq(state: StoreState): number {
  if (state.presenceSeq >= state.presenceSeqCeiling) {
    const ceiling = state.presenceSeq + PRESENCE_SEQ_BLOCK;
    state.write(() => state.tables.meta.putSync(PRESENCE_CEILING_KEY, ceiling));
    state.presenceSeqCeiling = ceiling;
  }
  return ++state.presenceSeq;
}

function announce(state: StoreState, user: User, presence: PresenceRecord): void {
  const audience = realmAudience(state, user.realmId);
  let active = 0;
  for (const id of state.usersOfRealm(user.realmId))
    if (state.users.get(id)?.isActive === true && ++active > USER_LIMIT_FOR_PRESENCE_EVENTS) return;
  state.dispatch({
    seq: 0,
    deliveries: [
      { event: { type: "presence", user, presence: { ...presence }, serverTimestamp: Date.now() / 1000 }, audience },
    ],
  });
}

/**
 * Writes every presence record changed since the last flush, in one transaction.
 * Returns how many were written. A failed write keeps them pending for the next call.
 */
export function flushPresence(state: StoreState): number {
  if (state.presenceDirty.size === 0) return 0;
  const ids = [...state.presenceDirty];
  state.write((ctx) => {
    for (const id of ids) {
      const record = state.presence.get(id);
      if (!record) continue;
      state.tables.presence.putSync(id, record);
      ctx.changed({ kind: "presence", id });
    }
  });
  state.presenceDirty.clear();
  return ids.length;
}
