/**
 * @module http/endpoints/invites/create-multiuse
 * POST /invites/multiuse — https://zulip.com/api/create-invite-link
 * A reusable link (administrators by default); the answer is its URL on the realm's host.
 */
import { defineEndpoint } from "../../endpoint.js";
import { realmUrl } from "../../realm-url.js";
import { INVITE_NOT_REFS, inviteOptions, sharedInviteParams, streamIds } from "./invite-params.js";

export default defineEndpoint({
  method: "POST",
  path: "/invites/multiuse",
  auth: "user",
  params: { stream_ids: streamIds.optional(), ...sharedInviteParams },
  testing: {
    notRefs: INVITE_NOT_REFS,
    sweepBases: [
      { params: { stream_ids: "[]" }, for: ["group_ids"] },
      { params: {}, for: ["stream_ids"] },
    ],
  },
  handler(ctx, input) {
    // Zulip's reusable links take no notify_referrer_on_join: nobody is told who used one.
    const options = inviteOptions(ctx.server, input, input.stream_ids ?? [], false);
    const { link } = ctx.store.createMultiuseInvite(ctx.user.id, options, {
      realmUrl: realmUrl(ctx.server, ctx.realm),
    });
    return { invite_link: link };
  },
});
