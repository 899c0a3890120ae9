/**
 * @module actions/invites
 * Invitations as Zulip has them (zerver/views/invite.py, zerver/actions/invites.py):
 * email invitations (one address, used once) and reusable links, their listing,
 * revocation and resending, and the account created when a link is used.
 *
 * Who may do what:
 * - inviting by email needs the realm's can_invite_users_group (members by default);
 *   reusable links need create_multiuse_invite_group (administrators by default);
 *   guests and bots never (Zulip's require_member_or_admin);
 * - inviting as owner needs an owner; as administrator or moderator, an administrator;
 * - channels must be ones the inviter may add subscribers to, or default channels;
 *   groups ones whose can_add_members_group allows the inviter;
 * - a custom welcome text needs an administrator;
 * - listing shows administrators every invitation of the realm, others their own;
 *   revoking or resending someone else's invitation needs an administrator (an owner
 *   for an owner's invitation).
 * The mail of an invitation is enqueued in the write that creates it (mail/outbox.ts).
 */
import { generateConfirmationKey } from "../accounts/confirmation-key.js";
import { canAccessChannelContent, isAdmin } from "../access.js";
import { realmAudience, usersAudience } from "../events/audience.js";
import {
  BadRequestError,
  InvalidLinkError,
  InvitationError,
  PermissionDeniedError,
  type InviteeError,
} from "../errors.js";
import { enqueueMailInTxn } from "../mail/outbox.js";
import { invitationMail, joinLink } from "../mail/templates.js";
import type { PasswordRecord } from "../accounts/password.js";
import { checkPasswordPolicy } from "../accounts/password-policy.js";
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import type { Channel, Invite, Realm, Role, User, UserGroup } from "../types.js";
import { ROLE, ROLES } from "../types.js";
import { accessForUpdate } from "./groups.js";
import { codePointPrefix } from "../limits.js";
import { emailDomainRefusal } from "./realm-domains.js";
import {
  ensureNotificationBotInTxn,
  ensureSystemBotInTxn,
  findNotificationBot,
  findSystemBot,
  silentMention,
  WELCOME_BOT_EMAIL,
  WELCOME_BOT_NAME,
} from "./notification-bot.js";
import { sendInternalDirectMessage } from "./send-message.js";

/** Welcome Bot's messages notify no phone or mailbox (Zulip: "intended to be seen contextually in the application"). */
const QUIET = { externalNotifications: false } as const;
import { canAddSubscribers, subscribeNewUserInTxn } from "./subscriptions.js";
import { checkChosenFullName, createUserInTxn, isValidEmail } from "./users.js";
import { requireMemberOrAdmin } from "./lookups.js";
import { hasRealmPermission } from "./realm-permissions.js";
import { announceSignup, newUserNoticesInTxn } from "./new-user-notices.js";

/** Zulip's Realm.MAX_REALM_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH (code points). */
export const MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH = 8000;
/** Zulip's INVITES_DEFAULT_REALM_DAILY_MAX: invitation mails per realm per day. */
export const DEFAULT_DAILY_INVITE_LIMIT = 100;
/** The longest expiry accepted (about 100 years), so that expiry times stay representable. */
const MAX_EXPIRY_MINUTES = 100 * 365 * 24 * 60;
const DAY_SECONDS = 86_400;

export const DAILY_LIMIT_MESSAGE =
  "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.";
export const SOME_SKIPPED_MESSAGE =
  "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!";

export interface InviteOptions {
  readonly invitedAs: number;
  readonly channelIds: readonly number[];
  readonly groupIds: readonly number[];
  readonly includeRealmDefaultSubscriptions: boolean;
  readonly notifyReferrerOnJoin: boolean;
  /** Administrators only; null: the organization's default; "": no custom welcome message. */
  readonly welcomeMessageCustomText: string | null;
  /** null: never expires. */
  readonly expiresInMinutes: number | null;
}

/** Server facts an invitation needs: where links point and the daily limit. */
export interface InviteEnvironment {
  /** The realm's URL (scheme, host and port), without a trailing slash. */
  readonly realmUrl: string;
  /** Invitation mails per realm per 24 hours. */
  readonly dailyLimit: number;
}

export interface InviteUsersResult {
  readonly invites: readonly Invite[];
  /** Addresses not invited because they have an account: [email, reason, deactivated]. */
  readonly skipped: readonly InviteeError[];
}

/**
 * Zulip's get_invitee_emails_set: split on commas and newlines, "Name <addr>" reduced to addr, trimmed, deduplicated.
 */
export function parseInviteeEmails(raw: string): string[] {
  const out = new Set<string>();
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    out.add((named ? named[1]! : part).trim());
  }
  return [...out];
}

/**
 * Membership of the realm's can_invite_users_group (role:members by default; never
 * guests). Bots may be members too, as in Zulip (register's can_invite_others_to_realm),
 * though the endpoints refuse bot requests.
 */
export function canInviteByEmail(state: StoreState, user: User): boolean {
  return hasRealmPermission(state, user, "canInviteUsersGroup");
}

/** Membership of the realm's create_multiuse_invite_group (role:administrators by default). */
export function canCreateMultiuseInvite(state: StoreState, user: User): boolean {
  return hasRealmPermission(state, user, "createMultiuseInviteGroup");
}

/** Zulip's check_role_based_permissions. */
function checkRoleBasedPermissions(actor: User, invitedAs: Role, requireAdmin: boolean): void {
  if (invitedAs === ROLE.OWNER && actor.role !== ROLE.OWNER)
    throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
  if (requireAdmin && !isAdmin(actor)) throw new BadRequestError("Must be an organization administrator");
}

function checkInvitedAs(value: number): Role {
  const role = ROLES.find((r) => r === value);
  if (role === undefined) throw new BadRequestError("Invalid invite_as");
  return role;
}

/** Every check of the options, in Zulip's order after the caller's permission. */
function checkOptions(
  state: StoreState,
  actor: User,
  options: InviteOptions,
): { role: Role; channels: Channel[]; groups: UserGroup[]; expiresAt: number | null } {
  const role = checkInvitedAs(options.invitedAs);
  checkRoleBasedPermissions(actor, role, role <= ROLE.MODERATOR);
  return { role, ...checkTargets(state, actor, options) };
}

function checkTargets(
  state: StoreState,
  actor: User,
  options: InviteOptions,
): { channels: Channel[]; groups: UserGroup[]; expiresAt: number | null } {
  const channels: Channel[] = [];
  for (const id of new Set(options.channelIds)) {
    const channel = state.channels.get(id);
    if (!channel || channel.isArchived || !canAccessChannelContent(state, actor, channel))
      throw new BadRequestError(`Invalid channel ID ${id}. No invites were sent.`);
    channels.push(channel);
  }
  // Zulip's get_streams_to_which_user_cannot_add_subscribers with allow_default_streams.
  if (channels.some((c) => !c.isDefault && !canAddSubscribers(state, actor, c)))
    throw new BadRequestError("You do not have permission to subscribe other users to channels.");
  const groups: UserGroup[] = [];
  for (const id of new Set(options.groupIds))
    groups.push(accessForUpdate(state, actor, id, "canAddMembersGroup", false));
  if (options.welcomeMessageCustomText !== null && !isAdmin(actor))
    throw new BadRequestError("Must be an organization administrator");
  const minutes = options.expiresInMinutes;
  if (minutes !== null && (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_EXPIRY_MINUTES))
    throw new BadRequestError("Invalid invite_expires_in_minutes");
  return { channels, groups, expiresAt: minutes === null ? null : state.now() + minutes * 60 };
}

/** Meta key of a realm's recent invitation-mail times (the daily limit's window). */
function sendsKey(realmId: number): string {
  return `inviteSends:${realmId}`;
}

function recentSends(state: StoreState, realmId: number): number[] {
  const stored: unknown = state.tables.meta.get(sendsKey(realmId));
  const since = state.now() - DAY_SECONDS;
  return Array.isArray(stored) ? stored.filter((t): t is number => typeof t === "number" && t > since) : [];
}

/** Zulip's check_invite_limit: refuses the whole request when it would pass the realm's daily limit. */
function checkDailyLimit(state: StoreState, realmId: number, count: number, limit: number): number[] {
  const sends = recentSends(state, realmId);
  if (sends.length + count > limit)
    throw new InvitationError(DAILY_LIMIT_MESSAGE, [], { sentInvitations: false, dailyLimitReached: true });
  return sends;
}

/** Zulip's get_existing_user_errors (non-verbose texts). */
/** Zulip's validate_email_is_valid answers for an address the realm's domains refuse. */
const INVITEE_REFUSALS = {
  domain: "Outside your domain.",
  disposable: "Please use your real email address.",
  plus: "Email addresses containing + are not allowed.",
} as const;

/** An address as a refusal quotes it (the join form takes any text). */
function clipEmail(email: string): string {
  return codePointPrefix(email, 100);
}

function existingUserError(state: StoreState, realmId: number, email: string): InviteeError | null {
  const id = state.userByEmail.get(emailKey(realmId, email));
  const user = id === undefined ? undefined : state.users.get(id);
  if (!user) return null;
  if (!user.isActive) return [email, "Account has been deactivated.", true];
  return [email, "Already has an account.", false];
}

/** The invitations' audience: the realm's administrators and whoever made the changed invitation. */
function invitesAudience(state: StoreState, realmId: number, referrerId: number) {
  return () => {
    const ids = new Set<number>();
    for (const id of realmAudience(state, realmId, isAdmin)) ids.add(id);
    const referrer = state.users.get(referrerId);
    if (referrer?.isActive) ids.add(referrerId);
    return usersAudience(ids);
  };
}

function emitInvitesChanged(state: StoreState, ctx: WriteContext, realmId: number, referrerId: number): void {
  ctx.emit({ type: "invites_changed", realmId }, invitesAudience(state, realmId, referrerId));
}

function realmOf(state: StoreState, realmId: number): Realm {
  const realm = state.realms.get(realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  return realm;
}

/**
 * POST /invites. Returns the invitations made and the addresses skipped (the caller reports those as
 * INVITATION_FAILED).
 */
export function inviteUsers(
  state: StoreState,
  actorId: number,
  rawEmails: string,
  options: InviteOptions,
  env: InviteEnvironment,
): InviteUsersResult {
  const actor = requireMemberOrAdmin(state, actorId);
  if (!canInviteByEmail(state, actor)) throw new BadRequestError("Insufficient permission");
  const role = checkInvitedAs(options.invitedAs);
  checkRoleBasedPermissions(actor, role, role <= ROLE.MODERATOR);
  if (rawEmails === "") throw new BadRequestError("You must specify at least one email address.");
  const emails = parseInviteeEmails(rawEmails);
  const { channels, groups, expiresAt } = checkTargets(state, actor, options);
  const sends = checkDailyLimit(state, actor.realmId, emails.length, env.dailyLimit);

  const errors: InviteeError[] = [];
  const skipped: InviteeError[] = [];
  const good: string[] = [];
  for (const email of emails) {
    if (email === "") continue;
    const refusal = isValidEmail(email) ? emailDomainRefusal(state, actor.realmId, email) : null;
    if (!isValidEmail(email)) errors.push([email, "Invalid address.", false]);
    else if (refusal !== null) errors.push([email, INVITEE_REFUSALS[refusal], false]);
    else {
      const existing = existingUserError(state, actor.realmId, email);
      if (existing) skipped.push(existing);
      else good.push(email);
    }
  }
  if (errors.length > 0)
    throw new InvitationError(
      "Some emails did not validate, so we didn't send any invitations.",
      [...errors, ...skipped],
      { sentInvitations: false },
    );
  if (good.length === 0)
    throw new InvitationError("We weren't able to invite anyone.", skipped, { sentInvitations: false });

  const realm = realmOf(state, actor.realmId);
  const invites = state.write((ctx) => {
    const now = state.now();
    const made = good.map((email) =>
      newInvite(state, actor, email, { role, channels, groups, expiresAt }, options, now),
    );
    for (const invite of made) {
      state.tables.invites.putSync(invite.id, invite);
      enqueueMailInTxn(
        state,
        ctx,
        invitationMail({
          to: invite.email!,
          referrerName: actor.fullName,
          referrerEmail: actor.deliveryEmail,
          realmName: realm.name,
          realmUrl: env.realmUrl,
          key: invite.key,
          expiresAt,
        }),
      );
    }
    state.tables.meta.putSync(sendsKey(realm.id), [...sends, ...made.map(() => now)]);
    ctx.afterCommit(() => {
      for (const invite of made) state.indexInvite(invite);
    });
    emitInvitesChanged(state, ctx, realm.id, actor.id);
    return made;
  });
  return { invites, skipped };
}

/**
 * A pending invitation record (inside a write: it takes an ID): for one address, or a reusable link when `email` is
 * null.
 */
function newInvite(
  state: StoreState,
  actor: User,
  email: string | null,
  checked: { role: Role; channels: readonly Channel[]; groups: readonly UserGroup[]; expiresAt: number | null },
  options: InviteOptions,
  now: number,
): Invite {
  return {
    id: state.allocate("nextInviteId"),
    realmId: actor.realmId,
    kind: email === null ? "multiuse" : "email",
    email,
    invitedById: actor.id,
    invitedAs: checked.role,
    channelIds: checked.channels.map((c) => c.id),
    groupIds: checked.groups.map((g) => g.id),
    includeRealmDefaultSubscriptions: options.includeRealmDefaultSubscriptions,
    notifyReferrerOnJoin: options.notifyReferrerOnJoin,
    welcomeMessageCustomText: options.welcomeMessageCustomText,
    invitedAt: now,
    expiresAt: checked.expiresAt,
    key: generateConfirmationKey(),
    status: "pending",
  };
}

/** POST /invites/multiuse: a reusable link (administrators, by default). */
export function createMultiuseInvite(
  state: StoreState,
  actorId: number,
  options: InviteOptions,
  env: Pick<InviteEnvironment, "realmUrl">,
): { invite: Invite; link: string } {
  const actor = requireMemberOrAdmin(state, actorId);
  if (!canCreateMultiuseInvite(state, actor)) throw new BadRequestError("Insufficient permission");
  const { role, channels, groups, expiresAt } = checkOptions(state, actor, options);
  const invite = state.write((ctx) => {
    const made = newInvite(state, actor, null, { role, channels, groups, expiresAt }, options, state.now());
    state.tables.invites.putSync(made.id, made);
    ctx.afterCommit(() => state.indexInvite(made));
    emitInvitesChanged(state, ctx, actor.realmId, actor.id);
    return made;
  });
  return { invite, link: joinLink(env.realmUrl, invite.key) };
}

function isLive(state: StoreState, invite: Invite): boolean {
  return invite.status === "pending" && (invite.expiresAt === null || invite.expiresAt > state.now());
}

/** GET /invites: live invitations the caller controls (administrators: all of the realm), by ID. */
export function listInvites(state: StoreState, actorId: number): Invite[] {
  const actor = requireMemberOrAdmin(state, actorId);
  const out: Invite[] = [];
  for (const invite of state.invites.values()) {
    if (invite.realmId !== actor.realmId || !isLive(state, invite)) continue;
    if (isAdmin(actor) || invite.invitedById === actor.id) out.push(invite);
  }
  return out.sort((a, b) => a.id - b.id);
}

/** Zulip's access_invite_by_id / access_multiuse_invite_by_id. */
function accessInvite(state: StoreState, actor: User, inviteId: number, kind: Invite["kind"]): Invite {
  const invite = state.invites.get(inviteId);
  // Used and revoked email invitations are gone in Zulip (deleted or filtered out).
  if (
    !invite ||
    invite.realmId !== actor.realmId ||
    invite.kind !== kind ||
    (kind === "email" && invite.status !== "pending")
  )
    throw new BadRequestError("No such invitation");
  if (invite.invitedById !== actor.id) checkRoleBasedPermissions(actor, invite.invitedAs, true);
  if (invite.status === "revoked") throw new BadRequestError("Invitation has already been revoked");
  return invite;
}

/** DELETE /invites/{id} and DELETE /invites/multiuse/{id}. */
export function revokeInvite(state: StoreState, actorId: number, inviteId: number, kind: Invite["kind"]): void {
  const actor = requireMemberOrAdmin(state, actorId);
  const invite = accessInvite(state, actor, inviteId, kind);
  const next: Invite = { ...invite, status: "revoked" };
  state.write((ctx) => {
    state.tables.invites.putSync(next.id, next);
    ctx.afterCommit(() => state.indexInvite(next));
    emitInvitesChanged(state, ctx, invite.realmId, invite.invitedById);
  });
}

/**
 * Inside an open write: revokes the realm's pending invitations that `which` selects
 * (Zulip revokes a deactivated user's invitations, and an address's invitations once an
 * account exists for it); their referrers and the administrators hear of it.
 */
export function revokeInvitesInTxn(
  state: StoreState,
  ctx: WriteContext,
  realmId: number,
  which: (invite: Invite) => boolean,
): void {
  const revoked: Invite[] = [];
  for (const invite of state.invites.values())
    if (invite.realmId === realmId && invite.status === "pending" && which(invite))
      revoked.push({ ...invite, status: "revoked" });
  if (revoked.length === 0) return;
  for (const next of revoked) state.tables.invites.putSync(next.id, next);
  ctx.afterCommit(() => {
    for (const next of revoked) state.indexInvite(next);
  });
  const referrers = new Set(revoked.map((i) => i.invitedById));
  ctx.emit({ type: "invites_changed", realmId }, () =>
    realmAudience(state, realmId, (u) => isAdmin(u) || referrers.has(u.id)),
  );
}

/** POST /invites/{id}/resend: the same link mailed again (counts against the daily limit). */
export function resendInvite(state: StoreState, actorId: number, inviteId: number, env: InviteEnvironment): void {
  const actor = requireMemberOrAdmin(state, actorId);
  const invite = accessInvite(state, actor, inviteId, "email");
  const sends = checkDailyLimit(state, actor.realmId, 1, env.dailyLimit);
  const realm = realmOf(state, invite.realmId);
  const referrer = state.users.get(invite.invitedById) ?? actor;
  state.write((ctx) => {
    enqueueMailInTxn(
      state,
      ctx,
      invitationMail({
        to: invite.email!,
        referrerName: referrer.fullName,
        referrerEmail: referrer.deliveryEmail,
        realmName: realm.name,
        realmUrl: env.realmUrl,
        key: invite.key,
        expiresAt: invite.expiresAt,
      }),
    );
    state.tables.meta.putSync(sendsKey(realm.id), [...sends, state.now()]);
  });
}

/** What the join page shows for a key: the invitation if it can still be used in `realmId`. */
export function usableInvite(state: StoreState, realmId: number, key: string): Invite {
  const id = state.inviteByKey.get(key);
  const invite = id === undefined ? undefined : state.invites.get(id);
  const realm = state.realms.get(realmId);
  if (!invite || invite.realmId !== realmId || !realm) throw new InvalidLinkError("unknown");
  if (invite.status === "revoked" || realm.deactivated) throw new InvalidLinkError("revoked");
  if (invite.status === "used") throw new InvalidLinkError("used");
  if (invite.expiresAt !== null && invite.expiresAt <= state.now()) throw new InvalidLinkError("expired");
  const referrer = state.users.get(invite.invitedById);
  // An invitation stands for its referrer's permission: it dies with their account.
  if (!referrer?.isActive) throw new InvalidLinkError("revoked");
  return invite;
}

export interface JoinDetails {
  readonly realmId: number;
  readonly key: string;
  readonly fullName: string;
  /** The invitee's address: required for reusable links, ignored for email invitations. */
  readonly email?: string;
}

export interface AcceptInviteInput extends JoinDetails {
  /** Hashed by the caller (accounts/password.ts hashPassword), off the event loop, after checkJoinForm. */
  readonly password: PasswordRecord;
}

interface CheckedJoin {
  readonly invite: Invite;
  readonly realm: Realm;
  readonly email: string;
  readonly fullName: string;
}

/** The link, the address and the name of a join form, checked: what the account would be made from. */
function checkJoinDetails(state: StoreState, input: JoinDetails): CheckedJoin {
  const invite = usableInvite(state, input.realmId, input.key);
  const realm = realmOf(state, invite.realmId);
  const email = invite.kind === "email" ? invite.email! : (input.email ?? "").trim();
  if (invite.kind === "multiuse" && !isValidEmail(email)) throw new BadRequestError("Invalid address.");
  // Zulip's registration form checks the realm's domains again, for emailed invitations too.
  const refusal = emailDomainRefusal(state, realm.id, email);
  if (refusal === "domain")
    throw new BadRequestError(
      `Your email address, ${clipEmail(email)}, is not in one of the domains that are allowed to register ` +
        "for accounts in this organization.",
    );
  if (refusal === "plus")
    throw new BadRequestError("Email addresses containing + are not allowed in this organization.");
  if (refusal === "disposable") throw new BadRequestError("Please use your real email address.");
  const existing = existingUserError(state, realm.id, email);
  if (existing) throw new BadRequestError(existing[1]);
  return { invite, realm, email, fullName: checkChosenFullName(state, realm.id, input.fullName, null) };
}

/**
 * The whole join form, before its password is hashed: the link (InvalidLinkError),
 * the address, the name and the password's strength (BadRequestError). Hashing is
 * the costly step, so a form that would be refused never reaches it.
 */
export function checkJoinForm(state: StoreState, input: JoinDetails & { readonly password: string }): void {
  const { email, fullName } = checkJoinDetails(state, input);
  checkPasswordPolicy(input.password, { email, fullName });
}

/**
 * The join page's submit: creates the account with the invited role, channels (and
 * the realm's default channels when asked) and groups, marks the invitation used
 * (and the address's other invitations revoked), in one write; then the notification
 * bot tells the referrer and the welcome bot greets the new user.
 */
export function acceptInvite(state: StoreState, input: AcceptInviteInput): User {
  // Checked again: the link may have been used or revoked while the password was hashed.
  const { invite, realm, email, fullName } = checkJoinDetails(state, input);
  // Channels and groups as they are now: archived channels and deactivated groups are skipped.
  const channelIds = new Set(invite.channelIds);
  if (invite.includeRealmDefaultSubscriptions)
    for (const c of state.channels.values()) if (c.realmId === realm.id && c.isDefault) channelIds.add(c.id);
  const channels = [...channelIds]
    .map((id) => state.channels.get(id))
    .filter((c): c is Channel => c !== undefined && c.realmId === realm.id && !c.isArchived);
  const groups = invite.groupIds
    .map((id) => state.groups.get(id))
    .filter(
      (g): g is UserGroup => g !== undefined && g.realmId === realm.id && !g.deactivated && g.systemRole === null,
    );
  const referrerId = invite.invitedById;
  const notify = invite.notifyReferrerOnJoin;

  const user = state.write((ctx) => {
    if (notify) ensureNotificationBotInTxn(state, ctx, realm);
    ensureSystemBotInTxn(state, ctx, realm, WELCOME_BOT_EMAIL, WELCOME_BOT_NAME);
    const created = createUserInTxn(
      state,
      ctx,
      { realmId: realm.id, email, fullName, role: invite.invitedAs, password: input.password },
      realm,
    );
    subscribeNewUserInTxn(state, ctx, created, channels);
    for (const group of groups) {
      const next: UserGroup = { ...group, members: [...group.members, created.id] };
      state.tables.groups.putSync(next.id, next);
      ctx.afterCommit(() => state.indexGroup(next));
      ctx.emit({ type: "user_group", op: "add_members", groupId: group.id, userIds: [created.id] }, () =>
        realmAudience(state, realm.id),
      );
    }
    const changed: Invite[] = [];
    if (invite.kind === "email") changed.push({ ...invite, status: "used" });
    // Zulip's revoke_preregistration_users: the address's other invitations die.
    for (const other of state.invites.values()) {
      if (
        other.id !== invite.id &&
        other.realmId === realm.id &&
        other.kind === "email" &&
        other.status === "pending" &&
        other.email!.toLowerCase() === email.toLowerCase()
      )
        changed.push({ ...other, status: "revoked" });
    }
    for (const next of changed) state.tables.invites.putSync(next.id, next);
    ctx.afterCommit(() => {
      for (const next of changed) state.indexInvite(next);
    });
    if (changed.length > 0) emitInvitesChanged(state, ctx, realm.id, referrerId);
    newUserNoticesInTxn(state, ctx, realm, created);
    return created;
  });
  announceSignup(state, realm, user);

  const referrer = state.users.get(referrerId);
  const notificationBot = findNotificationBot(state, realm.id);
  if (notify && referrer?.isActive && notificationBot)
    sendInternalDirectMessage(
      state,
      notificationBot.id,
      referrer.id,
      `${silentMention(user)} accepted your invitation to join ${realm.name}!`,
    );
  const welcomeBot = findSystemBot(state, realm.id, WELCOME_BOT_EMAIL);
  if (welcomeBot) {
    sendInternalDirectMessage(state, welcomeBot.id, user.id, welcomeText(realm), QUIET);
    // Invitations without their own text use the organization's (Zulip's welcome_message_custom_text).
    const custom = invite.welcomeMessageCustomText ?? realmWelcomeText(realm);
    if (custom.trim() !== "")
      sendInternalDirectMessage(state, welcomeBot.id, user.id, customWelcomeText(realm, custom), QUIET);
  }
  return user;
}

/** The realm's welcome_message_custom_text ("" when none). */
export function realmWelcomeText(realm: Realm): string {
  const text = realm.properties?.welcomeMessageCustomText;
  return typeof text === "string" ? text : "";
}

/** The Welcome Bot's message with an organization's custom welcome text (Zulip's get_custom_welcome_message_string). */
export function customWelcomeText(realm: Realm, custom: string): string {
  return `A message from the administrators of ${realm.name}:\n\n${custom}`;
}

/** The Welcome Bot's greeting to a new user (an invited one, or one an administrator or the CLI created). */
export function welcomeText(realm: Realm): string {
  return [
    `Hello, and welcome to ${realm.name}! 👋`,
    "",
    "I'm Welcome Bot. Conversations here happen in **channels**, each split into **topics**; you have been subscribed to a few channels to start with.",
    "Say hello in one of them, or reply to me here to try things out.",
  ].join("\n");
}
