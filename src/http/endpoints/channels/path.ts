/**
 * @module http/endpoints/channels/path
 * The {stream_id} path parameter. Zulip's routes take digits only; anything else
 * names no channel, answered as one that does not exist ("Invalid channel ID").
 */
import { BadRequestError } from "../../../engine/index.js";
import type { AuthedContext } from "../../endpoint.js";

export function channelIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["stream_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Invalid channel ID");
  return Number(raw);
}
