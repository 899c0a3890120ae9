/**
 * @module http/endpoints/channels/channel-folders
 * Channel folders — https://zulip.com/api/create-channel-folder and its siblings:
 * POST /channel_folders/create, GET /channel_folders, PATCH /channel_folders (the new
 * order, every folder once) and PATCH /channel_folders/{channel_folder_id} (name,
 * description, archiving). Administrators change them (the engine's
 * actions/channel-folders); every member of the realm reads them.
 */
import {
  BadRequestError,
  MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
  MAX_CHANNEL_FOLDER_NAME_LENGTH,
} from "../../../engine/index.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { channelFolderToWire } from "../../../wire/channel.js";

/** Folders one reorder names at most: far above any realm's folder count. */
const MAX_FOLDERS_IN_ORDER = 1000;

const name = () => p.str({ maxLength: 4 * MAX_CHANNEL_FOLDER_NAME_LENGTH });
const description = () => p.str({ maxLength: MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH });

function folderIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["channel_folder_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Invalid channel folder ID");
  return Number(raw);
}

export const createChannelFolder = defineEndpoint({
  method: "POST",
  path: "/channel_folders/create",
  auth: "user",
  params: { name: name(), description: description().default("") },
  handler(ctx, input) {
    const folder = ctx.store.createChannelFolder(ctx.user.id, { name: input.name, description: input.description });
    return { channel_folder_id: folder.id };
  },
});

export const listChannelFolders = defineEndpoint({
  method: "GET",
  path: "/channel_folders",
  auth: "user",
  params: { include_archived: p.bool().default(false) },
  handler(ctx, input) {
    return { channel_folders: ctx.store.channelFolders(ctx.user.id, input.include_archived).map(channelFolderToWire) };
  },
});

export const reorderChannelFolders = defineEndpoint({
  method: "PATCH",
  path: "/channel_folders",
  auth: "user",
  params: { order: ref(p.json(j.intList(), { maxItems: MAX_FOLDERS_IN_ORDER }), "channelFolder") },
  testing: {
    probes: { order: [{ names: "channelFolder", label: "ID list", encode: (id) => JSON.stringify([id]) }] },
  },
  handler(ctx, input) {
    ctx.store.reorderChannelFolders(ctx.user.id, input.order);
    return {};
  },
});

export const updateChannelFolder = defineEndpoint({
  method: "PATCH",
  path: "/channel_folders/:channel_folder_id",
  pathRefs: { channel_folder_id: "channelFolder" },
  auth: "user",
  params: { name: name().optional(), description: description().optional(), is_archived: p.bool().optional() },
  testing: { sweepBases: [{ params: { description: "changed" } }] },
  handler(ctx, input) {
    ctx.store.updateChannelFolder(ctx.user.id, folderIdParam(ctx), {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.is_archived !== undefined ? { isArchived: input.is_archived } : {}),
    });
    return {};
  },
});
