/**
 * @module queries/read-receipts
 * GET /messages/{message_id}/read_receipts (Zulip's views/read_receipts.py): the users who have the message marked
 * read, for a caller who can access it, when the realm enables read receipts. As Zulip: only users with a row for the
 * message (historical ones included), active, with `send_read_receipts` on, never the sender, nor users who muted the
 * caller or whom the caller muted.
 *
 * Answered from the per-user read bitmaps without reading every user's: direct-message rows exist only for the
 * conversation's participants; otherwise only users listed in the read holders (anyone who ever had a message marked
 * read) who have a row (subscription intervals, moves, historical rows) are read, each only at the message's chunk.
 */
import { canAccessMessage, hasRow } from "../access.js";
import type { NarrowReader } from "../directory.js";
import { BadRequestError } from "../errors.js";
import type { ReadonlyBitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { PlanContext } from "../narrow/plan.js";
import type { Settings } from "../settings/defaults.js";
import type { MutedUsersRecord } from "../types.js";
import { REALM_PROPERTIES } from "../settings/realm-settings.js";

export interface ReadReceiptsReader extends NarrowReader {
  readonly bitmaps: NarrowReader["bitmaps"] & { getFrom(key: string, fromId: number): ReadonlyBitmap };
  settingsOf(userId: number): Settings;
  /** muter -> the users they muted. */
  readonly mutedUsersOf: ReadonlyMap<number, MutedUsersRecord>;
  /** muted user -> the users who mute them. */
  readonly mutingUsers: ReadonlyMap<number, ReadonlySet<number>>;
}

/** The IDs of the users who read `messageId`, ascending, as `ctx.user` may learn them. */
export function readReceipts(ctx: PlanContext<ReadReceiptsReader>, messageId: number): number[] {
  const { state, user } = ctx;
  const message =
    Number.isSafeInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? state.messageRecord(messageId)
      : undefined;
  if (!message || !canAccessMessage(state, user, message)) throw new BadRequestError("Invalid message(s)");
  const realm = state.realmDirectory.get(user.realmId);
  if (!(realm?.properties?.enableReadReceipts ?? REALM_PROPERTIES.enableReadReceipts.byDefault))
    throw new BadRequestError("Read receipts are disabled in this organization.");

  const holders = state.bitmaps.get(key.userFlagHolders("read"));
  let candidates: Iterable<number>;
  if (message.recipient.type === "direct") {
    candidates = state.conversations.get(message.recipient.conversationId)?.userIds ?? [];
  } else {
    const realmUsers = state.userDirectory.ofRealm(user.realmId);
    candidates =
      holders.size < realmUsers.size
        ? holders.toArray().filter((id) => realmUsers.has(id))
        : [...realmUsers].filter((id) => holders.has(id));
  }
  // Users who muted the caller (their reads would tell the caller so), and users the caller muted.
  const mutedOnEitherSide = new Set([
    ...(state.mutingUsers.get(user.id) ?? []),
    ...(state.mutedUsersOf.get(user.id)?.muted.map((m) => m.id) ?? []),
  ]);
  const out: number[] = [];
  for (const readerId of candidates) {
    if (readerId === message.senderId || !holders.has(readerId) || mutedOnEitherSide.has(readerId)) continue;
    const reader = state.userDirectory.get(readerId);
    if (!reader?.isActive || reader.realmId !== user.realmId) continue;
    if (!state.settingsOf(readerId).send_read_receipts) continue;
    // Rows of channel messages are derived (subscriptions, moves): a read bit may outlive its row, and the row check
    // costs no bitmap read for users who never had one.
    if (!hasRow(state, readerId, message)) continue;
    if (!state.bitmaps.getFrom(key.userFlag(readerId, "read"), message.id).has(message.id)) continue;
    out.push(readerId);
  }
  return out.sort((a, b) => a - b);
}
