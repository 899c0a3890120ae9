/**
 * @module export/zulip-invite-tables
 * Invitations in Zulip's tables: email invitations as zerver_preregistrationuser,
 * reusable links as zerver_multiuseinvite (their channels and groups as the
 * many-to-many ID lists Zulip's export writes), and each one's link key and expiry as
 * Zulip keeps them, a confirmation_confirmation row (type 2 INVITATION or 6
 * MULTIUSE_INVITE, object_id naming the invitation). Zulip's own export leaves these
 * tables out (an invitation link names the old server); parley's importer reads them
 * back, so a realm moved to another parley keeps its pending invitations and their links.
 */
import type { StoreState } from "../state.js";
import type { Invite } from "../types.js";

type Row = Record<string, unknown>;

/** confirmation.settings' STATUS_USED and STATUS_REVOKED (0: pending). */
export const INVITE_STATUS = { pending: 0, used: 1, revoked: 2 } as const;
/** Confirmation.INVITATION and Confirmation.MULTIUSE_INVITE. */
export const CONFIRMATION_TYPE = { email: 2, multiuse: 6 } as const;

function common(invite: Invite): Row {
  return {
    id: invite.id,
    realm: invite.realmId,
    referred_by: invite.invitedById,
    invited_as: invite.invitedAs,
    streams: [...invite.channelIds],
    groups: [...invite.groupIds],
    include_realm_default_subscriptions: invite.includeRealmDefaultSubscriptions,
    notify_referrer_on_join: invite.notifyReferrerOnJoin,
    welcome_message_custom_text: invite.welcomeMessageCustomText,
    status: INVITE_STATUS[invite.status],
  };
}

export function inviteTables(state: StoreState, realmId: number): Record<string, Row[]> {
  const invites = [...state.invites.values()].filter((i) => i.realmId === realmId).sort((a, b) => a.id - b.id);
  const email: Row[] = [];
  const multiuse: Row[] = [];
  const confirmations: Row[] = [];
  for (const invite of invites) {
    if (invite.kind === "email")
      email.push({
        ...common(invite),
        email: invite.email,
        invited_at: invite.invitedAt,
        realm_creation: false,
        password_required: true,
        multiuse_invite: null,
        full_name: null,
        full_name_validated: false,
        created_user: null,
      });
    else multiuse.push(common(invite));
    confirmations.push({
      id: confirmations.length + 1,
      realm: realmId,
      type: CONFIRMATION_TYPE[invite.kind],
      object_id: invite.id,
      confirmation_key: invite.key,
      date_sent: invite.invitedAt,
      expiry_date: invite.expiresAt,
    });
  }
  return {
    zerver_preregistrationuser: email,
    zerver_multiuseinvite: multiuse,
    confirmation_confirmation: confirmations,
  };
}
