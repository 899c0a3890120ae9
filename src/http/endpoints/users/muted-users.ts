/**
 * @module http/endpoints/users/muted-users
 * POST and DELETE /users/me/muted_users/{muted_user_id} — https://zulip.com/api/mute-user
 * and https://zulip.com/api/unmute-user. Any user of the realm may be muted, bots and
 * deactivated users included; the effects on flags and notifications are the engine's
 * (actions/muted-users.ts).
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";

/** Zulip's `<int:muted_user_id>`: anything but digits names no user. */
function mutedUserId(pathParams: Readonly<Record<string, string>>): number {
  const raw = pathParams["muted_user_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("No such user");
  return Number(raw);
}

export const muteUserEndpoint = defineEndpoint({
  method: "POST",
  path: "/users/me/muted_users/:muted_user_id",
  pathRefs: { muted_user_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.muteUser(ctx.user.id, mutedUserId(ctx.pathParams));
    return {};
  },
});

export const unmuteUserEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/users/me/muted_users/:muted_user_id",
  pathRefs: { muted_user_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.unmuteUser(ctx.user.id, mutedUserId(ctx.pathParams));
    return {};
  },
});
