/**
 * @module actions/email-change
 * Changing one's own email address (PATCH /settings `email`), as Zulip's
 * do_start_email_change_process does it: nothing changes until the link mailed to the
 * new address is opened; opening it changes the address (API and delivery email),
 * tells the old address, and announces the change with realm_user updates.
 */
import { isAdmin } from "../access.js";
import { BadRequestError, InvalidLinkError } from "../errors.js";
import { enqueueMailInTxn } from "../mail/outbox.js";
import { emailChangeConfirmationMail, emailChangedNoticeMail } from "../mail/templates.js";
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import type { EmailChange, User } from "../types.js";
import { generateConfirmationKey } from "../accounts/confirmation-key.js";
import { isValidEmail } from "./users.js";
import { writeEmailChange } from "./user-email.js";

/** Zulip's EMAIL_CHANGE_CONFIRMATION_DAYS. */
export const EMAIL_CHANGE_VALIDITY_SECONDS = 86_400;

/** Zulip's validate_email_is_valid and validate_email_not_already_in_realm (non-verbose texts). */
export function checkNewEmail(state: StoreState, user: User, raw: string): string {
  const email = raw.trim();
  if (!isValidEmail(email)) throw new BadRequestError("Invalid address.");
  const id = state.userByEmail.get(emailKey(user.realmId, email));
  const holder = id === undefined ? undefined : state.users.get(id);
  if (holder && holder.id !== user.id)
    throw new BadRequestError(holder.isActive ? "Already has an account." : "Account has been deactivated.");
  return email;
}

/** Inside an open write: records the request and mails the confirmation link to the new address. */
export function startEmailChangeInTxn(
  state: StoreState,
  ctx: WriteContext,
  user: User,
  newEmail: string,
  realmUrl: string,
): EmailChange {
  const realm = state.realms.get(user.realmId);
  const now = state.now();
  const change: EmailChange = {
    key: generateConfirmationKey(),
    userId: user.id,
    realmId: user.realmId,
    oldEmail: user.deliveryEmail,
    newEmail,
    createdAt: now,
    expiresAt: now + EMAIL_CHANGE_VALIDITY_SECONDS,
    usedAt: null,
  };
  state.tables.emailChanges.putSync(change.key, change);
  ctx.afterCommit(() => state.emailChanges.set(change.key, change));
  ctx.changed({ kind: "emailChange", id: user.id });
  enqueueMailInTxn(
    state,
    ctx,
    emailChangeConfirmationMail({
      to: newEmail,
      oldEmail: user.deliveryEmail,
      realmName: realm?.name ?? "",
      realmUrl,
      key: change.key,
    }),
  );
  return change;
}

/** Opening the link: the change, or InvalidLinkError (unknown, used, expired, or the account is gone). */
export function confirmEmailChange(state: StoreState, realmId: number, key: string, realmUrl: string): User {
  const change = state.emailChanges.get(key);
  if (!change || change.realmId !== realmId) throw new InvalidLinkError("unknown");
  if (change.usedAt !== null) throw new InvalidLinkError("used");
  if (change.expiresAt <= state.now()) throw new InvalidLinkError("expired");
  const user = state.users.get(change.userId);
  const realm = state.realms.get(realmId);
  if (!user?.isActive || !realm || realm.deactivated) throw new InvalidLinkError("revoked");
  // Zulip's validate_email_change_request again: the lock may have come since the request.
  if (realm.properties?.emailChangesDisabled === true && !isAdmin(user))
    throw new BadRequestError("Email address changes are disabled in this organization.");
  // The address may have been taken since the request.
  const newEmail = checkNewEmail(state, user, change.newEmail);
  const used: EmailChange = { ...change, usedAt: state.now() };
  return state.write((ctx) => {
    state.tables.emailChanges.putSync(used.key, used);
    ctx.afterCommit(() => state.emailChanges.set(used.key, used));
    ctx.changed({ kind: "emailChange", id: used.userId });
    enqueueMailInTxn(
      state,
      ctx,
      emailChangedNoticeMail({ to: change.oldEmail, newEmail, realmName: realm.name, realmUrl }),
    );
    // The same write and events as an owner's change (delivery_email, avatar, new_email).
    return writeEmailChange(state, ctx, user, newEmail);
  });
}
