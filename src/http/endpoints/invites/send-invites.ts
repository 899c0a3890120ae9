/**
 * @module http/endpoints/invites/send-invites
 * POST /invites — https://zulip.com/api/send-invites
 * Every rule is the engine's (actions/invites.ts). When some addresses already have
 * accounts, the others are invited and the answer is Zulip's INVITATION_FAILED with
 * sent_invitations true.
 */
import { InvitationError, SOME_SKIPPED_MESSAGE } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import type { SweepFixture } from "../../endpoint-testing.js";
import { p } from "../../params.js";
import { INVITE_NOT_REFS, inviteEnvironment, inviteOptions, sharedInviteParams, streamIds } from "./invite-params.js";

const newAddress = (fixture: SweepFixture) => `${fixture.fresh("invitee")}@new.dev`;

export default defineEndpoint({
  method: "POST",
  path: "/invites",
  auth: "user",
  params: {
    invitee_emails: p.str(),
    stream_ids: streamIds,
    notify_referrer_on_join: p.bool().optional(),
    ...sharedInviteParams,
  },
  testing: {
    notRefs: {
      ...INVITE_NOT_REFS,
      invitee_emails:
        "addresses name nobody the caller could be denied: existing accounts of the caller's realm are reported by " +
        "design, other realms are not consulted",
    },
    sweepBases: [
      { params: { invitee_emails: newAddress, group_ids: "[]" }, for: ["stream_ids"] },
      { params: { invitee_emails: newAddress, stream_ids: "[]" }, for: ["group_ids"] },
    ],
  },
  handler(ctx, input) {
    const options = inviteOptions(ctx.server, input, input.stream_ids, input.notify_referrer_on_join ?? true);
    const { skipped } = ctx.store.inviteUsers(
      ctx.user.id,
      input.invitee_emails,
      options,
      inviteEnvironment(ctx.server, ctx.realm),
    );
    if (skipped.length > 0) throw new InvitationError(SOME_SKIPPED_MESSAGE, skipped, { sentInvitations: true });
    return {};
  },
});
