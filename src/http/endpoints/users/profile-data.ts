/**
 * @module http/endpoints/users/profile-data
 * PATCH /users/me/profile_data — https://zulip.com/api/update-profile-data (not in the
 * API docs; Zulip's web app calls it) and DELETE /users/me/profile_data: a human user
 * sets or clears their own custom profile field values. Checks live in the engine
 * (actions/profile-fields.ts, actions/profile-data.ts).
 */
import { z } from "zod";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";

/** Items one request may carry: far above any realm's field count. */
const MAX_ITEMS = 1000;

const item = z.object({ id: z.number().int(), value: z.union([z.string(), z.array(z.number().int())]) });

export const updateProfileData = defineEndpoint({
  method: "PATCH",
  path: "/users/me/profile_data",
  auth: "user",
  params: { data: p.json(z.array(item), { maxItems: MAX_ITEMS }) },
  testing: {
    notRefs: {
      data:
        "field IDs and, in user fields, user IDs: another realm's field is 'Field id N not found.' and another " +
        "realm's user 'Invalid user ID: N', exactly as missing ones (test/http/profile-fields.test.ts)",
    },
    worst: { valid: { data: "[]" } },
  },
  handler(ctx, input) {
    ctx.store.updateOwnProfileData(ctx.user.id, input.data);
    return {};
  },
});

export const removeProfileData = defineEndpoint({
  method: "DELETE",
  path: "/users/me/profile_data",
  auth: "user",
  params: { data: ref(p.json(j.intList(), { maxItems: MAX_ITEMS }), "profileField") },
  testing: {
    probes: { data: [{ names: "profileField", label: "ID list", encode: (id) => JSON.stringify([id]) }] },
  },
  handler(ctx, input) {
    ctx.store.removeOwnProfileData(ctx.user.id, input.data);
    return {};
  },
});
