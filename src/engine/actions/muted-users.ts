/**
 * @module actions/muted-users
 * Muted users (Zulip's zerver/views/muted_users.py, actions/muted_users.py): any user
 * may mute any other user of their realm, bots and deactivated users included. A muted
 * user's messages arrive already read for the muter (send-message.ts reads the sender's
 * muters, one map lookup per send), notify them of nothing (push-notifications.ts), and
 * muting marks the muted user's earlier messages read for the muter, after the mute's
 * own write and in batches, as Zulip's deferred mark-as-read does. Unmuting changes no
 * flag.
 */
import { userAudience } from "../events/audience.js";
import { BadRequestError } from "../errors.js";
import { RoaringBitmap32 } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { PlanContext } from "../narrow/plan.js";
import type { StoreState, WriteContext } from "../state.js";
import type { MutedUsersRecord, User } from "../types.js";
import { applyFlagChange, MARK_ALL_BATCH } from "./update-flags.js";

/** One entry of register's muted_users and of the muted_users event. */
export interface MutedUserView {
  readonly id: number;
  readonly timestamp: number;
}

/** Zulip's access_user_by_id(allow_bots=True, allow_deactivated=True): anyone of the realm. */
function accessMutable(state: StoreState, muter: User, mutedId: number): User {
  const target = state.users.get(mutedId);
  if (!target || target.realmId !== muter.realmId) throw new BadRequestError("No such user");
  return target;
}

function putRecord(state: StoreState, ctx: WriteContext, record: MutedUsersRecord): void {
  if (record.muted.length === 0) state.tables.mutedUsers.removeSync(record.userId);
  else state.tables.mutedUsers.putSync(record.userId, record);
  ctx.afterCommit(() => state.indexMutedUsers(record));
  ctx.emit({ type: "muted_users", userId: record.userId, muted: record.muted }, () => userAudience(record.userId));
}

/** POST /users/me/muted_users/{muted_user_id}. */
export function muteUser(ctx: PlanContext<StoreState>, mutedId: number): void {
  const { state, user: muter } = ctx;
  if (mutedId === muter.id) throw new BadRequestError("Cannot mute self");
  const target = accessMutable(state, muter, mutedId);
  const current = state.mutedUsersOf.get(muter.id)?.muted ?? [];
  if (current.some((m) => m.id === target.id)) throw new BadRequestError("User already muted");
  const record: MutedUsersRecord = { userId: muter.id, muted: [...current, { id: target.id, dateMuted: state.now() }] };
  state.write((w) => putRecord(state, w, record));
  markMutedMessagesRead(ctx, target.id);
}

/**
 * Zulip's do_mark_muted_user_messages_as_read: the muter's unread messages from the
 * muted user, MARK_ALL_BATCH per write (each with its update_message_flags event and
 * push removals), so that muting a prolific sender never holds the event loop in one piece.
 */
function markMutedMessagesRead(ctx: PlanContext<StoreState>, mutedId: number): void {
  const { state, user } = ctx;
  const unread = ctx.received.restrictToPersonal(user.id, state.bitmaps.get(key.sender(mutedId)));
  unread.andNotInPlace(state.bitmaps.get(key.userFlag(user.id, "read")));
  for (let from = 0; from < unread.size; from += MARK_ALL_BATCH) {
    const batch = new RoaringBitmap32(unread.rangeUint32Array(from, MARK_ALL_BATCH));
    applyFlagChange(ctx, batch, "read", "add", true);
  }
}

/** DELETE /users/me/muted_users/{muted_user_id}. */
export function unmuteUser(state: StoreState, muter: User, mutedId: number): void {
  const target = accessMutable(state, muter, mutedId);
  const current = state.mutedUsersOf.get(muter.id)?.muted ?? [];
  if (!current.some((m) => m.id === target.id)) throw new BadRequestError("User is not muted");
  const record: MutedUsersRecord = { userId: muter.id, muted: current.filter((m) => m.id !== target.id) };
  state.write((w) => putRecord(state, w, record));
}

/** register's muted_users (Zulip's get_user_mutes), in the order they were muted. */
export function mutedUsersView(state: StoreState, userId: number): MutedUserView[] {
  return (state.mutedUsersOf.get(userId)?.muted ?? []).map((m) => ({ id: m.id, timestamp: m.dateMuted }));
}
