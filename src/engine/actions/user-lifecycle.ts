/**
 * @module actions/user-lifecycle
 * Accounts made and ended through the API, as Zulip does (zerver/views/users.py,
 * zerver/actions/create_user.py and users.py):
 * - POST /users: an administrator with the operator-granted can_create_users
 *   permission creates an account with a password (createAccount, which the CLI uses
 *   too): subscribed to the realm's default channels, pending invitations to the
 *   address revoked, greeted by the Welcome Bot;
 * - DELETE /users/{id} (administrators; owners for owners), DELETE /users/me and
 *   DELETE /bots/{id}: deactivation, which takes the user's bots with them, revokes the
 *   invitations they sent, removes their devices and refuses their API key from the
 *   next request on; the last owner (and, for oneself, the last user) cannot go;
 * - POST /users/{id}/reactivate: an administrator, or a bot's owner for the bot; a bot
 *   whose owner is gone passes to whoever reactivates it.
 */
import type { PasswordRecord } from "../accounts/password.js";
import { isStrongPassword } from "../accounts/password-strength.js";
import { canAdminUser, isAdmin } from "../access.js";
import { BadRequestError, CannotDeactivateLastUserError, PermissionDeniedError, clip } from "../errors.js";
import { enqueueMailInTxn } from "../mail/outbox.js";
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import { ROLE, type Channel, type Realm, type Role, type User } from "../types.js";
import { accessBot, changeOwnerInTxn, checkMayHaveBot } from "./bots.js";
import { customWelcomeText, realmWelcomeText, revokeInvitesInTxn, welcomeText } from "./invites.js";
import { checkEmailAddress, requireActiveUser } from "./lookups.js";
import {
  ensureSystemBotInTxn,
  findSystemBot,
  isSystemBot,
  WELCOME_BOT_EMAIL,
  WELCOME_BOT_NAME,
} from "./notification-bot.js";
import { emailDomainRefusal } from "./realm-domains.js";
import { sendInternalDirectMessage } from "./send-message.js";

/** Welcome Bot's messages notify no phone or mailbox (Zulip: "intended to be seen contextually in the application"). */
const QUIET = { externalNotifications: false } as const;
import { subscribeNewUserInTxn } from "./subscriptions.js";
import { checkChosenFullName, countOwners, createUserInTxn, emitUserUpdates, writeUserActiveInTxn } from "./users.js";
import { announceSignup, newUserNoticesInTxn } from "./new-user-notices.js";

/** Zulip's deactivation_notification_comment limit (characters). */
export const MAX_DEACTIVATION_COMMENT_LENGTH = 2000;

export interface NewAccountInput {
  readonly realmId: number;
  readonly email: string;
  readonly fullName: string;
  readonly role?: Role;
  /** Hashed by the caller (accounts/password.ts hashPassword); none: API-key login only. */
  readonly password?: PasswordRecord;
}

/**
 * A person's account as Zulip's do_create_user makes it (the API, the CLI): created,
 * subscribed to the realm's default channels, the address's pending invitations
 * revoked, then greeted by the Welcome Bot.
 */
export function createAccount(state: StoreState, input: NewAccountInput): User {
  const realm = state.realms.get(input.realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  const user = state.write((ctx) => {
    ensureSystemBotInTxn(state, ctx, realm, WELCOME_BOT_EMAIL, WELCOME_BOT_NAME);
    const created = createUserInTxn(
      state,
      ctx,
      {
        realmId: realm.id,
        email: input.email,
        fullName: input.fullName,
        ...(input.role !== undefined ? { role: input.role } : {}),
        ...(input.password !== undefined ? { password: input.password } : {}),
      },
      realm,
    );
    subscribeNewUserInTxn(state, ctx, created, defaultChannels(state, realm));
    const address = created.deliveryEmail.toLowerCase();
    revokeInvitesInTxn(state, ctx, realm.id, (i) => i.kind === "email" && i.email?.toLowerCase() === address);
    newUserNoticesInTxn(state, ctx, realm, created);
    return created;
  });
  announceSignup(state, realm, user);
  const welcomeBot = findSystemBot(state, realm.id, WELCOME_BOT_EMAIL);
  if (welcomeBot) {
    sendInternalDirectMessage(state, welcomeBot.id, user.id, welcomeText(realm), QUIET);
    const custom = realmWelcomeText(realm);
    if (custom.trim() !== "")
      sendInternalDirectMessage(state, welcomeBot.id, user.id, customWelcomeText(realm, custom), QUIET);
  }
  return user;
}

/** The realm's default channels (Zulip's get_slim_realm_default_streams). */
function defaultChannels(state: StoreState, realm: Realm): Channel[] {
  return [...state.channels.values()].filter((c) => c.realmId === realm.id && c.isDefault && !c.isArchived);
}

export interface CreateUserByAdminInput {
  readonly email: string;
  readonly fullName: string;
}

/**
 * POST /users before the password is hashed (the costly step): Zulip's checks in its
 * order, the password's strength included. Returns the trimmed email and name.
 */
export function checkCreateUserByAdmin(
  state: StoreState,
  actorId: number,
  input: CreateUserByAdminInput & { readonly password: string },
): { readonly email: string; readonly fullName: string } {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  if (actor.canCreateUsers !== true) throw new BadRequestError("User not authorized to create users");
  const fullName = checkChosenFullName(state, actor.realmId, input.fullName, null);
  let email: string;
  try {
    email = checkEmailAddress(input.email);
  } catch {
    throw new BadRequestError("Bad name or username");
  }
  checkEmailAllowed(state, actor.realmId, email);
  if (state.userByEmail.has(emailKey(actor.realmId, email)))
    throw new BadRequestError(`Email '${clip(email)}' already in use`);
  if (!isStrongPassword(input.password, { email, fullName })) throw new BadRequestError("The password is too weak.");
  return { email, fullName };
}

/** Zulip's create_user_backend answers to email_allowed_for_realm. */
function checkEmailAllowed(state: StoreState, realmId: number, email: string): void {
  const refusal = emailDomainRefusal(state, realmId, email);
  if (refusal === "domain") throw new BadRequestError(`Email '${clip(email)}' not allowed in this organization`);
  if (refusal === "plus") throw new BadRequestError("Email addresses containing + are not allowed.");
  if (refusal === "disposable")
    throw new BadRequestError("Disposable email addresses are not allowed in this organization");
}

/** POST /users once the password is hashed: checked again (the state may have changed), then created. */
export function createUserByAdmin(
  state: StoreState,
  actorId: number,
  input: CreateUserByAdminInput & { readonly password: PasswordRecord },
): User {
  const actor = requireActiveUser(state, actorId);
  // The strength check ran before hashing; everything else is judged again now.
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  if (actor.canCreateUsers !== true) throw new BadRequestError("User not authorized to create users");
  const fullName = checkChosenFullName(state, actor.realmId, input.fullName, null);
  const email = checkEmailAddress(input.email);
  checkEmailAllowed(state, actor.realmId, email);
  if (state.userByEmail.has(emailKey(actor.realmId, email)))
    throw new BadRequestError(`Email '${clip(email)}' already in use`);
  return createAccount(state, { realmId: actor.realmId, email, fullName, password: input.password });
}

export interface DeactivationNotice {
  /** Zulip's deactivation_notification_comment: null sends no mail, "" a mail without a comment. */
  readonly comment: string | null;
  /** The realm's URL, for the mail (the engine does not know it). */
  readonly realmUrl: string;
}

/**
 * DELETE /users/{user_id} (Zulip's deactivate_user_backend): a person of the realm,
 * active, deactivated by an administrator (an owner for an owner); never the last owner.
 */
export function deactivateUser(
  state: StoreState,
  actorId: number,
  targetId: number,
  notice: DeactivationNotice = { comment: null, realmUrl: "" },
): void {
  const actor = requireActiveUser(state, actorId);
  const target = state.users.get(targetId);
  if (!target || target.realmId !== actor.realmId || target.isBot) throw new BadRequestError("No such user");
  if (!target.isActive) throw new BadRequestError("User is deactivated");
  if (!canAdminUser(actor, target)) throw new BadRequestError("Insufficient permission");
  if (target.role === ROLE.OWNER && actor.role !== ROLE.OWNER)
    throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
  if (isLastOwner(state, target)) throw new BadRequestError("Cannot deactivate the only organization owner");
  const comment = notice.comment === null ? null : notice.comment.trim();
  if (comment !== null && [...comment].length > MAX_DEACTIVATION_COMMENT_LENGTH)
    throw new BadRequestError(
      `deactivation_notification_comment is too long (limit: ${MAX_DEACTIVATION_COMMENT_LENGTH} characters)`,
    );
  const realm = state.realms.get(target.realmId)!;
  state.write((ctx) => {
    deactivateInTxn(state, ctx, target);
    if (comment !== null) enqueueMailInTxn(state, ctx, deactivationMail(target, realm, notice.realmUrl, comment));
  });
}

/** DELETE /users/me (Zulip's deactivate_user_own_backend): anyone but the last user or the last owner. */
export function deactivateOwnUser(state: StoreState, userId: number): void {
  const user = requireActiveUser(state, userId);
  let active = 0;
  for (const id of state.usersOfRealm(user.realmId)) {
    const other = state.users.get(id);
    if (other?.isActive && !isSystemBot(other)) active++;
  }
  if (active === 1) throw new CannotDeactivateLastUserError(false);
  if (isLastOwner(state, user)) throw new CannotDeactivateLastUserError(true);
  state.write((ctx) => deactivateInTxn(state, ctx, user));
}

/** DELETE /bots/{bot_id} (Zulip's deactivate_bot_backend): its owner or an administrator; no-op when deactivated. */
export function deactivateBot(state: StoreState, actorId: number, botId: number): void {
  const actor = requireActiveUser(state, actorId);
  const bot = accessBot(state, actor, botId);
  if (!bot.isActive) return;
  state.write((ctx) => deactivateInTxn(state, ctx, bot));
}

/** Zulip's check_last_owner: the realm's only active human owner. */
function isLastOwner(state: StoreState, user: User): boolean {
  return user.role === ROLE.OWNER && !user.isBot && countOwners(state, user.realmId) === 1;
}

/**
 * Zulip's do_deactivate_user inside an open write: the user's active bots first, then
 * the user; the invitations they sent are revoked. The API key and devices stop
 * working with the commit (authentication reads isActive); event queues are collected
 * by the realtime layer when it sees the deactivation.
 */
function deactivateInTxn(state: StoreState, ctx: WriteContext, user: User): void {
  if (!user.isBot) {
    for (const id of state.usersOfRealm(user.realmId)) {
      const bot = state.users.get(id);
      if (bot?.isBot && bot.isActive && bot.botOwnerId === user.id) writeUserActiveInTxn(state, ctx, bot, false);
    }
  }
  writeUserActiveInTxn(state, ctx, user, false);
  revokeInvitesInTxn(state, ctx, user.realmId, (invite) => invite.invitedById === user.id);
}

function deactivationMail(user: User, realm: Realm, realmUrl: string, comment: string) {
  return {
    to: [user.deliveryEmail],
    subject: `Your account on ${realm.name} has been deactivated`,
    text: [
      "Hi,",
      "",
      `Your account ${user.deliveryEmail} on ${realm.name} (${realmUrl}) has been deactivated by an administrator.`,
      ...(comment === "" ? [] : ["", "They wrote:", "", comment]),
      "",
      "If you think this is a mistake, contact the organization's administrators.",
    ].join("\n"),
  };
}

/**
 * POST /users/{user_id}/reactivate (Zulip's reactivate_user_backend and
 * do_reactivate_user): any user of the realm the actor may administer (a bot's owner
 * may reactivate it); a bot needs the actor's permission to create such a bot and a
 * name no active user has. A bot whose owner is deactivated passes to the actor.
 * Reactivating an active user changes nothing.
 */
export function reactivateUser(state: StoreState, actorId: number, targetId: number): void {
  const actor = requireActiveUser(state, actorId);
  const target = state.users.get(targetId);
  if (!target || target.realmId !== actor.realmId) throw new BadRequestError("No such user");
  if (!canAdminUser(actor, target)) throw new BadRequestError("Insufficient permission");
  if (target.isBot) checkMayHaveBot(state, actor, target);
  if (target.isImportedStub)
    throw new BadRequestError("Cannot activate a placeholder account; ask the user to sign up, instead.");
  if (target.isActive) return;
  const owner = target.botOwnerId === null ? undefined : state.users.get(target.botOwnerId);
  state.write((ctx) => {
    const active = writeUserActiveInTxn(state, ctx, target, true);
    if (!target.isBot || owner === undefined || owner.isActive) return;
    const adopted: User = { ...active, botOwnerId: actor.id };
    state.tables.users.putSync(adopted.id, adopted);
    ctx.afterCommit(() => state.indexUser(adopted));
    emitUserUpdates(state, ctx, active, adopted);
    changeOwnerInTxn(state, ctx, active, adopted);
  });
}
