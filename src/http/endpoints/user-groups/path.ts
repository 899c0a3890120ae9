/**
 * @module http/endpoints/user-groups/path
 * The {user_group_id} path parameter: digits, or Zulip's "Invalid user group".
 */
import { BadRequestError } from "../../../engine/index.js";
import type { AuthedContext } from "../../endpoint.js";

export function groupIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["user_group_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Invalid user group");
  return Number(raw);
}
