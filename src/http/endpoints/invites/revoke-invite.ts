/**
 * @module http/endpoints/invites/revoke-invite
 * DELETE /invites/{invite_id} — https://zulip.com/api/revoke-email-invite
 * DELETE /invites/multiuse/{invite_id} — https://zulip.com/api/revoke-invite-link
 */
import { defineEndpoint } from "../../endpoint.js";
import { INVITE_ID_NOT_A_REF, inviteIdOf } from "./invite-params.js";

export const revokeEmailInvite = defineEndpoint({
  method: "DELETE",
  path: "/invites/:invite_id",
  auth: "user",
  params: {},
  testing: { notRefs: { invite_id: INVITE_ID_NOT_A_REF } },
  handler(ctx) {
    ctx.store.revokeInvite(ctx.user.id, inviteIdOf(ctx.pathParams), "email");
    return {};
  },
});

export const revokeMultiuseInvite = defineEndpoint({
  method: "DELETE",
  path: "/invites/multiuse/:invite_id",
  auth: "user",
  params: {},
  testing: { notRefs: { invite_id: INVITE_ID_NOT_A_REF } },
  handler(ctx) {
    ctx.store.revokeInvite(ctx.user.id, inviteIdOf(ctx.pathParams), "multiuse");
    return {};
  },
});
