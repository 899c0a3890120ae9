/**
 * @module http/endpoints/invites
 * Invitations by email and reusable invitation links. The pages that use them
 * (join, email-change confirmation) are in src/http/pages.
 */
import type { Endpoint } from "../../endpoint.js";
import createMultiuse from "./create-multiuse.js";
import listInvites from "./list-invites.js";
import resendInvite from "./resend-invite.js";
import { revokeEmailInvite, revokeMultiuseInvite } from "./revoke-invite.js";
import sendInvites from "./send-invites.js";

export const INVITE_ENDPOINTS: readonly Endpoint[] = [
  sendInvites,
  listInvites,
  createMultiuse,
  revokeMultiuseInvite,
  revokeEmailInvite,
  resendInvite,
];
