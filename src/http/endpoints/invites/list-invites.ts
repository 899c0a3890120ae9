/**
 * @module http/endpoints/invites/list-invites
 * GET /invites — https://zulip.com/api/get-invites
 * Live invitations the caller controls: an administrator's whole realm, others' own.
 */
import { joinLink } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { realmUrl } from "../../realm-url.js";
import { inviteToWire } from "./invite-params.js";

export default defineEndpoint({
  method: "GET",
  path: "/invites",
  auth: "user",
  params: {},
  handler(ctx) {
    const base = realmUrl(ctx.server, ctx.realm);
    return {
      invites: ctx.store.listInvites(ctx.user.id).map((invite) => inviteToWire(invite, joinLink(base, invite.key))),
    };
  },
});
