/**
 * @module http/endpoints/users/path
 * Zulip's `users/<int:user_id>` segment for the routes that take IDs only: anything but
 * a user ID (digits) names no user.
 */
import { BadRequestError } from "../../../engine/index.js";

export function userIdParam(pathParams: Readonly<Record<string, string>>): number {
  const raw = pathParams["user_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("No such user");
  return Number(raw);
}
