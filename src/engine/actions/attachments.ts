/**
 * @module actions/attachments
 * Uploaded files' records (Zulip's Attachment): created after the bytes are safely on
 * disk, claimed by the messages that link them (Zulip's do_claim_attachments), listed
 * and deleted by their owner, and removed when nothing claimed them for weeks. The
 * bytes themselves are not the engine's: callers store and delete them (src/uploads)
 * around these writes. Who may download a file is access.ts's canDownloadAttachment.
 */
import { canDownloadAttachment } from "../access.js";
import { userAudience } from "../events/audience.js";
import { BadRequestError, UploadQuotaError } from "../errors.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Attachment, AttachmentImage, Message, User } from "../types.js";
import { requireActiveUser } from "./users.js";

/** Zulip's "Invalid attachment": another user's file answers exactly like a missing one. */
export const INVALID_ATTACHMENT = "Invalid attachment";

/**
 * `<realm>/<2 hex>/<24 URL-safe random>/<name>`: the name is Zulip's sanitized file
 * name (no slash, no NUL, never "." or "..", at most 255 bytes).
 */
const PATH_ID_RE = /^(\d{1,10})\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/([^/\0]{1,255})$/;

/** Whether `pathId` has the shape this server generates (anything else names no file). */
export function isValidPathId(pathId: string): boolean {
  const match = PATH_ID_RE.exec(pathId);
  return match !== null && match[2] !== "." && match[2] !== ".." && Buffer.byteLength(match[2]!) <= 255;
}

export interface NewAttachment {
  readonly ownerId: number;
  readonly pathId: string;
  readonly name: string;
  readonly size: number;
  readonly contentType: string;
  readonly image: AttachmentImage | null;
}

/** Bytes of the realm's stored uploads (Zulip's currently_used_upload_space_bytes). */
export function uploadSpaceUsed(state: StoreState, realmId: number): number {
  return state.uploadSpaceByRealm.get(realmId) ?? 0;
}

/** Zulip's check_upload_within_quota; `quotaBytes` null: no quota. */
export function checkUploadQuota(state: StoreState, realmId: number, size: number, quotaBytes: number | null): void {
  if (quotaBytes !== null && uploadSpaceUsed(state, realmId) + size > quotaBytes) throw new UploadQuotaError();
}

/** Records a stored upload (Zulip's create_attachment) and tells its owner. */
export function createAttachment(state: StoreState, input: NewAttachment, quotaBytes: number | null): Attachment {
  const owner = requireActiveUser(state, input.ownerId);
  if (!isValidPathId(input.pathId) || !input.pathId.startsWith(`${owner.realmId}/`))
    throw new BadRequestError("Invalid path");
  if (state.attachmentByPath.has(input.pathId)) throw new BadRequestError("Invalid path");
  if (input.name.includes("\0")) throw new BadRequestError("File name must not contain null bytes");
  if (!Number.isSafeInteger(input.size) || input.size < 0) throw new BadRequestError("Invalid file size");
  // The authoritative check: synchronous with the write, so uploads that streamed in
  // parallel past the HTTP layer's early check cannot both get in.
  checkUploadQuota(state, owner.realmId, input.size, quotaBytes);
  const spaceAfter = uploadSpaceUsed(state, owner.realmId) + input.size;
  return state.write((ctx) => {
    const attachment: Attachment = {
      id: state.allocate("nextAttachmentId"),
      realmId: owner.realmId,
      ownerId: owner.id,
      pathId: input.pathId,
      name: input.name,
      size: input.size,
      contentType: input.contentType,
      createTime: state.now(),
      messageIds: [],
      image: input.image,
    };
    state.tables.attachments.putSync(attachment.id, attachment);
    ctx.afterCommit(() => state.indexAttachment(attachment));
    ctx.emit({ type: "attachment", op: "add", attachment, uploadSpaceUsed: spaceAfter }, () => userAudience(owner.id));
    return attachment;
  });
}

/**
 * DELETE /attachments/{id}: the owner's own file only. Returns the removed record (its bytes are the caller's to
 * delete).
 */
export function deleteAttachment(state: StoreState, userId: number, attachmentId: number): Attachment {
  const user = requireActiveUser(state, userId);
  const attachment = state.attachments.get(attachmentId);
  if (!attachment || attachment.ownerId !== user.id) throw new BadRequestError(INVALID_ATTACHMENT);
  removeAttachments(state, [attachment]);
  return attachment;
}

function removeAttachments(state: StoreState, attachments: readonly Attachment[]): void {
  if (attachments.length === 0) return;
  // Events carry the space after the write; memory changes only after the commit.
  const space = new Map<number, number>();
  state.write((ctx) => {
    for (const attachment of attachments) {
      const after = (space.get(attachment.realmId) ?? uploadSpaceUsed(state, attachment.realmId)) - attachment.size;
      space.set(attachment.realmId, after);
      state.tables.attachments.removeSync(attachment.id);
      ctx.afterCommit(() => state.unindexAttachment(attachment));
      ctx.emit({ type: "attachment", op: "remove", attachment, uploadSpaceUsed: after }, () =>
        userAudience(attachment.ownerId),
      );
    }
  });
}

/** Zulip's ARCHIVED_DATA_VACUUMING_DELAY_DAYS: how long a deleted message's uploads outlive it. */
export const ARCHIVE_RETENTION_SECS = 30 * 86_400;

/**
 * Zulip's delete_old_unclaimed_attachments: files no message links, uploaded before
 * `olderThan` (UNIX seconds), not linked from a scheduled message that is still to be
 * sent, and not claimed by a message deleted within ARCHIVE_RETENTION_SECS (Zulip's
 * archive still references those). Returns the removed records; their bytes are the
 * caller's to delete.
 */
export function removeOldUnclaimedAttachments(state: StoreState, olderThan: number): Attachment[] {
  const pending = [...state.scheduledMessages.values()].filter((s) => !s.delivered).map((s) => s.content);
  const archivedSince = state.now() - ARCHIVE_RETENTION_SECS;
  const old = [...state.attachments.values()].filter(
    (a) =>
      a.messageIds.length === 0 &&
      a.createTime < olderThan &&
      (a.claimDeletedAt === undefined || a.claimDeletedAt < archivedSince) &&
      !pending.some((content) => content.includes(`/user_uploads/${a.pathId}`)),
  );
  removeAttachments(state, old);
  return old;
}

/** GET /attachments: the user's own uploads, oldest first. */
export function listAttachments(state: StoreState, userId: number): Attachment[] {
  return [...state.attachments.values()].filter((a) => a.ownerId === userId).sort((a, b) => a.id - b.id);
}

/**
 * The file at `pathId` if `viewer` (null: no credentials) may download it from realm
 * `realmId`; undefined otherwise, whether it exists or not, so callers cannot tell
 * the two apart.
 */
export function attachmentForViewer(
  state: StoreState,
  viewer: User | null,
  realmId: number,
  pathId: string,
): Attachment | undefined {
  const id = state.attachmentByPath.get(pathId);
  const attachment = id === undefined ? undefined : state.attachments.get(id);
  return attachment && canDownloadAttachment(state, viewer, realmId, attachment) ? attachment : undefined;
}

/**
 * The uploads a message from `sender` may claim among the paths it links: existing
 * ones the sender may access themselves (Zulip skips the others with a warning).
 */
export function claimableAttachments(state: StoreState, sender: User, pathIds: readonly string[]): Attachment[] {
  const out: Attachment[] = [];
  for (const pathId of new Set(pathIds)) {
    const attachment = attachmentForViewer(state, sender, sender.realmId, pathId);
    if (attachment) out.push(attachment);
  }
  return out;
}

/** Links claimed uploads to a message being stored, inside its write (Zulip's claim_attachment). */
export function claimAttachments(
  state: StoreState,
  ctx: WriteContext,
  attachments: readonly Attachment[],
  messageId: number,
): void {
  for (const current of attachments) {
    const next: Attachment = { ...current, messageIds: [...current.messageIds, messageId] };
    state.tables.attachments.putSync(next.id, next);
    ctx.afterCommit(() => state.indexAttachment(next));
    ctx.emit(
      { type: "attachment", op: "update", attachment: next, uploadSpaceUsed: uploadSpaceUsed(state, next.realmId) },
      () => userAudience(next.ownerId),
    );
  }
}

/** What a content edit did to a message's uploads. */
export interface ReclaimResult {
  /** Whether the message still claims an upload (its has_attachment). */
  readonly hasAttachment: boolean;
  /** Zulip's detached_uploads: the sender's uploads the edit unlinked that no message claims any more. */
  readonly detached: readonly Attachment[];
}

/**
 * A content edit's claims, inside its write (Zulip's check_attachment_reference_change):
 * uploads the message claimed whose links the new content dropped are detached (the
 * file stays; unclaimed for weeks, it is removed like any unclaimed upload), newly
 * linked ones the sender may access are claimed. Each changed upload's owner hears of it.
 */
export function reclaimAttachments(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  sender: User,
  pathIds: readonly string[],
): ReclaimResult {
  // No index from messages to uploads: a message that claimed none (has_attachment
  // false, the common case) needs no look, one that did scans its realm's uploads.
  const claimed = message.hasAttachment
    ? [...state.attachments.values()].filter((a) => a.realmId === message.realmId && a.messageIds.includes(message.id))
    : [];
  const linked = new Set(pathIds);
  const before = new Set(claimed.map((a) => a.pathId));
  const dropped = claimed.filter((a) => !linked.has(a.pathId));
  const added = claimableAttachments(
    state,
    sender,
    [...linked].filter((pathId) => !before.has(pathId)),
  );
  const detached: Attachment[] = [];
  for (const current of dropped) {
    const next: Attachment = { ...current, messageIds: current.messageIds.filter((id) => id !== message.id) };
    state.tables.attachments.putSync(next.id, next);
    ctx.afterCommit(() => state.indexAttachment(next));
    ctx.emit(
      { type: "attachment", op: "update", attachment: next, uploadSpaceUsed: uploadSpaceUsed(state, next.realmId) },
      () => userAudience(next.ownerId),
    );
    if (next.messageIds.length === 0 && next.ownerId === sender.id) detached.push(next);
  }
  claimAttachments(state, ctx, added, message.id);
  return { hasAttachment: claimed.length - dropped.length + added.length > 0, detached };
}
