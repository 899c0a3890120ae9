/**
 * @module http/endpoints/invites/resend-invite
 * POST /invites/{invite_id}/resend — https://zulip.com/api/resend-email-invite
 * The same link mailed again; counts against the realm's daily limit.
 */
import { defineEndpoint } from "../../endpoint.js";
import { INVITE_ID_NOT_A_REF, inviteEnvironment, inviteIdOf } from "./invite-params.js";

export default defineEndpoint({
  method: "POST",
  path: "/invites/:invite_id/resend",
  auth: "user",
  params: {},
  testing: { notRefs: { invite_id: INVITE_ID_NOT_A_REF } },
  handler(ctx) {
    ctx.store.resendInvite(ctx.user.id, inviteIdOf(ctx.pathParams), inviteEnvironment(ctx.server, ctx.realm));
    return {};
  },
});
