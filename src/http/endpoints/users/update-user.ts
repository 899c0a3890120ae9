/**
 * @module http/endpoints/users/update-user
 * PATCH /users/{user_id} and PATCH /users/{email} — https://zulip.com/api/update-user
 * Administrators change full_name, role and profile_data; owners with the
 * operator-granted can_change_user_emails permission change new_email directly. The
 * owner-role rules and permission checks are the engine's updateUser.
 * profile_data is checked against the realm's custom profile fields (an empty value
 * removes one), as Zulip's update_user_backend.
 */
import { z } from "zod";
import type { Role } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { userByPathSegment } from "./lookup.js";

const profileItem = z.object({
  id: z.number().int(),
  value: z.union([z.string(), z.array(z.number().int()), z.null()]),
});

export default defineEndpoint({
  method: "PATCH",
  path: "/users/:user_id_or_email",
  pathRefs: { user_id_or_email: "userOrEmail" },
  auth: "user",
  params: {
    full_name: p.str().optional(),
    role: p.int().optional(),
    profile_data: p.json(z.array(profileItem), { maxItems: 1000 }).optional(),
    new_email: p.str().optional(),
  },
  testing: {
    notRefs: {
      profile_data:
        "field IDs and, in user fields, user IDs: another realm's field is 'Field id N not found.' and another " +
        "realm's user 'Invalid user ID: N', exactly as missing ones (test/http/profile-fields.test.ts)",
      new_email: "the target's new address: addresses are unique per realm, so no other realm's account is consulted",
    },
    sweepBases: [{ params: { full_name: "Renamed" } }],
  },
  handler(ctx, input) {
    const target = userByPathSegment(ctx.store, ctx.realm.id, ctx.pathParams["user_id_or_email"] ?? "");
    ctx.store.updateUser(ctx.user.id, target.id, {
      ...(input.new_email !== undefined ? { newEmail: input.new_email } : {}),
      // Zulip's update_user_backend skips a blank full_name instead of refusing it.
      ...(input.full_name !== undefined && input.full_name.trim() !== "" ? { fullName: input.full_name } : {}),
      ...(input.role !== undefined ? { role: input.role as Role } : {}),
      ...(input.profile_data !== undefined ? { profileData: input.profile_data } : {}),
    });
    return {};
  },
});
