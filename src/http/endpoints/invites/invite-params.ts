/**
 * @module http/endpoints/invites/invite-params
 * The parameters POST /invites and POST /invites/multiuse share, and the wire shape
 * of an invitation (GET /invites).
 */
import { z } from "zod";
import {
  BadRequestError,
  MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH,
  type Invite,
  type InviteEnvironment,
  type InviteOptions,
  type Realm,
} from "../../../engine/index.js";
import type { ServerInfo } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { realmUrl } from "../../realm-url.js";

/** At most this many channels or groups per invitation (bounds the checks' work). */
export const MAX_INVITE_TARGETS = 1000;

export const sharedInviteParams = {
  invite_expires_in_minutes: p.json(z.number().int().nullable()).optional(),
  invite_as: p.int().optional(),
  group_ids: ref(p.json(j.intList(), { maxItems: MAX_INVITE_TARGETS }), "groupList").optional(),
  include_realm_default_subscriptions: p.bool().optional(),
  welcome_message_custom_text: p.str({ maxLength: MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH }).optional(),
};

export const streamIds = ref(p.json(j.intList(), { maxItems: MAX_INVITE_TARGETS }), "channelList");

interface SharedInput {
  readonly invite_expires_in_minutes: number | null | undefined;
  readonly invite_as: number | undefined;
  readonly group_ids: number[] | undefined;
  readonly include_realm_default_subscriptions: boolean | undefined;
  readonly welcome_message_custom_text: string | undefined;
}

/** The engine's options from the wire, Zulip's defaults filled in (expiry from INVITATION_LINK_VALIDITY_MINUTES). */
export function inviteOptions(
  server: ServerInfo,
  input: SharedInput,
  channelIds: readonly number[],
  notifyReferrerOnJoin: boolean,
): InviteOptions {
  return {
    invitedAs: input.invite_as ?? 400,
    channelIds,
    groupIds: input.group_ids ?? [],
    includeRealmDefaultSubscriptions: input.include_realm_default_subscriptions ?? false,
    notifyReferrerOnJoin,
    welcomeMessageCustomText: input.welcome_message_custom_text ?? null,
    expiresInMinutes:
      input.invite_expires_in_minutes === undefined
        ? server.config.INVITATION_LINK_VALIDITY_MINUTES
        : input.invite_expires_in_minutes,
  };
}

export function inviteEnvironment(server: ServerInfo, realm: Realm): InviteEnvironment {
  return { realmUrl: realmUrl(server, realm), dailyLimit: server.config.INVITES_DEFAULT_REALM_DAILY_MAX };
}

export const INVITE_NOT_REFS = {
  invite_expires_in_minutes: "a duration",
} as const;

/** Invitations are the caller's realm's own. */
export const INVITE_ID_NOT_A_REF =
  "another realm's invitation is 'No such invitation' exactly like a missing one (actions/invites.ts accessInvite)";

/** The invitation ID of a path: Zulip's converter takes digits only; anything else names no invitation. */
export function inviteIdOf(pathParams: Readonly<Record<string, string>>): number {
  const raw = pathParams["invite_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("No such invitation");
  return Number(raw);
}

/** One invitation as GET /invites lists it. */
export function inviteToWire(invite: Invite, link: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: invite.id,
    invited_by_user_id: invite.invitedById,
    invited: invite.invitedAt,
    expiry_date: invite.expiresAt,
    invited_as: invite.invitedAs,
    notify_referrer_on_join: invite.notifyReferrerOnJoin,
    is_multiuse: invite.kind === "multiuse",
  };
  if (invite.kind === "email") out["email"] = invite.email;
  else out["link_url"] = link;
  return out;
}
