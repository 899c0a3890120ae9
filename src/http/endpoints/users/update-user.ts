/**
 * @module http/endpoints/users/update-user
 * PATCH /users/{user_id} and PATCH /users/{email} — https://zulip.com/api/update-user
 * Administrators change full_name, role and profile_data; the owner-role rules and
 * permission checks are the engine's updateUser.
 *
 * Deviations: new_email is refused with BAD_REQUEST (changing emails is not
 * supported); the engine has no custom profile field definitions, so profile_data
 * field IDs and value types are not checked against field types.
 */
import { z } from "zod";
import { isAdmin } from "../../../engine/access.js";
import { BadRequestError, PermissionDeniedError } from "../../../engine/errors.js";
import type { Role } from "../../../engine/types.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { userByPathSegment } from "./lookup.js";

const profileItem = z.object({ id: z.number().int(), value: z.union([z.string(), z.array(z.number().int()), z.null()]) });

export default defineEndpoint({
  method: "PATCH",
  path: "/users/:user_id_or_email",
  auth: "user",
  params: {
    full_name: p.str().optional(),
    role: p.int().optional(),
    profile_data: p.json(z.array(profileItem), { maxItems: 1000 }).optional(),
    new_email: p.str().optional(),
  },
  handler(ctx, input) {
    const target = userByPathSegment(ctx.store, ctx.realm.id, ctx.pathParams["user_id_or_email"] ?? "");
    if (input.new_email !== undefined) {
      // Zulip checks the caller's right over the target before looking at new_email.
      if (!isAdmin(ctx.user)) throw new PermissionDeniedError("Insufficient permission");
      throw new BadRequestError("Changing a user's email address is not supported by this server");
    }
    ctx.store.updateUser(ctx.user.id, target.id, {
      ...(input.full_name !== undefined ? { fullName: input.full_name } : {}),
      ...(input.role !== undefined ? { role: input.role as Role } : {}),
      ...(input.profile_data !== undefined ? { profileData: input.profile_data } : {}),
    });
    return {};
  },
});
