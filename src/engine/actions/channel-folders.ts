/**
 * @module actions/channel-folders
 * Channel folders (Zulip's ChannelFolder, feature levels 389 and 414): administrators
 * create, rename, describe, archive and reorder them; everyone in the realm sees them
 * (register's channel_folders, GET /channel_folders) and hears every change
 * (`channel_folder` add, update and reorder events). A channel names its folder in
 * `folderId`, set when it is created or by PATCH /streams/{id}.
 */
import { isAdmin } from "../access.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { realmAudience } from "../events/audience.js";
import { exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import type { ChannelFolder, User } from "../types.js";
import { renderChannelDescription, requireChannelFolder } from "./channels.js";
import { requireActiveUser } from "./lookups.js";

/** Zulip's ChannelFolder.MAX_NAME_LENGTH and MAX_DESCRIPTION_LENGTH (register's max_channel_folder_*). */
export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
export const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;

function requireAdmin(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  return actor;
}

/** The realm's folders in Zulip's order (`order`, then ID), archived ones when asked. */
export function realmChannelFolders(state: StoreState, realmId: number, includeArchived: boolean): ChannelFolder[] {
  return [...state.channelFolders.values()]
    .filter((f) => f.realmId === realmId && (includeArchived || !f.isArchived))
    .sort((a, b) => a.order - b.order || a.id - b.id);
}

/** Zulip's check_channel_folder_name: trimmed, not empty, not too long, no control characters, free in the realm. */
function checkFolderName(state: StoreState, realmId: number, raw: string, exceptId: number | null): string {
  const name = raw.trim();
  if (name === "") throw new BadRequestError("Channel folder name can't be empty.");
  if (exceedsCodePoints(name, MAX_CHANNEL_FOLDER_NAME_LENGTH))
    throw new BadRequestError(`Channel folder name too long (limit: ${MAX_CHANNEL_FOLDER_NAME_LENGTH} characters).`);
  let position = 0;
  for (const ch of name) {
    position++;
    const code = ch.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f || (code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe)
      throw new BadRequestError(`Invalid character in channel folder name, at position ${position}.`);
  }
  for (const f of state.channelFolders.values())
    if (f.realmId === realmId && f.id !== exceptId && f.name.toLowerCase() === name.toLowerCase())
      throw new BadRequestError("Channel folder name already in use");
  return name;
}

function checkFolderDescription(raw: string): string {
  // Zulip does not allow newlines in folder descriptions, as in channel descriptions.
  const description = raw.replace(/\r?\n/g, " ");
  if (exceedsCodePoints(description, MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH))
    throw new BadRequestError(
      `Channel folder description too long (limit: ${MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH} characters).`,
    );
  return description;
}

/** POST /channel_folders/create: a new folder at the end of the realm's list. */
export function createChannelFolder(
  state: StoreState,
  actorId: number,
  input: { readonly name: string; readonly description: string },
): ChannelFolder {
  const actor = requireAdmin(state, actorId);
  const name = checkFolderName(state, actor.realmId, input.name, null);
  const description = checkFolderDescription(input.description);
  const existing = realmChannelFolders(state, actor.realmId, true);
  const order = existing.length === 0 ? 0 : Math.max(...existing.map((f) => f.order)) + 1;
  const renderedDescription = renderChannelDescription(state, actor, description);
  return state.write((ctx) => {
    const folder: ChannelFolder = {
      id: state.allocate("nextChannelFolderId"),
      realmId: actor.realmId,
      name,
      description,
      renderedDescription,
      order,
      dateCreated: state.now(),
      creatorId: actor.id,
      isArchived: false,
    };
    state.tables.channelFolders.putSync(folder.id, folder);
    ctx.afterCommit(() => state.channelFolders.set(folder.id, folder));
    ctx.emit({ type: "channel_folder", op: "add", folder }, () => realmAudience(state, actor.realmId));
    return folder;
  });
}

/**
 * PATCH /channel_folders/{id}: name, description, archiving and unarchiving. A folder
 * that still holds channels is not archived (Zulip's rule).
 */
export function updateChannelFolder(
  state: StoreState,
  actorId: number,
  folderId: number,
  input: { readonly name?: string; readonly description?: string; readonly isArchived?: boolean },
): void {
  const actor = requireAdmin(state, actorId);
  const folder = requireChannelFolder(state, actor.realmId, folderId);
  const next: ChannelFolder = { ...folder };
  const fields: ("name" | "description" | "isArchived")[] = [];
  if (input.name !== undefined) {
    next.name = checkFolderName(state, actor.realmId, input.name, folder.id);
    if (next.name !== folder.name) fields.push("name");
  }
  if (input.description !== undefined) {
    next.description = checkFolderDescription(input.description);
    if (next.description !== folder.description) {
      next.renderedDescription = renderChannelDescription(state, actor, next.description);
      fields.push("description");
    }
  }
  if (input.isArchived !== undefined && input.isArchived !== folder.isArchived) {
    if (input.isArchived)
      for (const c of state.channels.values())
        if (c.realmId === folder.realmId && c.folderId === folder.id)
          throw new BadRequestError("You need to remove all the channels from this folder to archive it.");
    next.isArchived = input.isArchived;
    fields.push("isArchived");
  }
  if (fields.length === 0) return;
  state.write((ctx) => {
    state.tables.channelFolders.putSync(next.id, next);
    ctx.afterCommit(() => state.channelFolders.set(next.id, next));
    ctx.emit({ type: "channel_folder", op: "update", folder: next, fields }, () => realmAudience(state, next.realmId));
  });
}

/** PATCH /channel_folders: the realm's folders in a new order, every folder's ID exactly once. */
export function reorderChannelFolders(state: StoreState, actorId: number, order: readonly number[]): void {
  const actor = requireAdmin(state, actorId);
  const folders = realmChannelFolders(state, actor.realmId, true);
  const ids = new Set(folders.map((f) => f.id));
  if (order.length !== ids.size || new Set(order).size !== order.length || order.some((id) => !ids.has(id)))
    throw new BadRequestError("Invalid order mapping.");
  const byId = new Map(folders.map((f) => [f.id, f]));
  const changed = order
    .map((id, position) => ({ ...byId.get(id)!, order: position }))
    .filter((f) => f.order !== byId.get(f.id)!.order);
  state.write((ctx) => {
    for (const folder of changed) {
      state.tables.channelFolders.putSync(folder.id, folder);
      ctx.afterCommit(() => state.channelFolders.set(folder.id, folder));
    }
    ctx.emit({ type: "channel_folder", op: "reorder", realmId: actor.realmId, order: [...order] }, () =>
      realmAudience(state, actor.realmId),
    );
  });
}
