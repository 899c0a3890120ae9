/**
 * @module actions/user-email
 * Changing a user's email address (Zulip's do_change_user_delivery_email): the checks
 * on the new address and the write with its realm_user events. Used by an owner's
 * PATCH /users/{id} new_email; a confirmed PATCH /settings email change can apply it
 * the same way.
 *
 * Every email is visible to everyone here (parley has Zulip's default
 * email_address_visibility, "everyone", and no other): the API email follows the real
 * one, and all three events go to the whole realm.
 */
import { userViewersAudience } from "../events/audience.js";
import { BadRequestError } from "../errors.js";
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import type { User } from "../types.js";
import { checkEmailAddress } from "./lookups.js";

/**
 * The new address, trimmed, when `user` may take it: a valid address no other account
 * of the realm has (Zulip's validate_email_not_already_in_realm, non-verbose: "Already
 * has an account." / "Account has been deactivated."). The user's own address in other
 * letter case is allowed.
 */
export function checkNewEmail(state: StoreState, user: User, email: string): string {
  const address = checkEmailAddress(email);
  const holderId = state.userByEmail.get(emailKey(user.realmId, address));
  const holder = holderId === undefined ? undefined : state.users.get(holderId);
  if (holder && holder.id !== user.id)
    throw new BadRequestError(holder.isActive ? "Already has an account." : "Account has been deactivated.");
  return address;
}

/**
 * Writes `before` with `email` as its real and API email, inside an open write, and
 * emits Zulip's three realm_user updates in its order: delivery_email, the avatar (a
 * Gravatar follows the email), new_email.
 */
export function writeEmailChange(state: StoreState, ctx: WriteContext, before: User, email: string): User {
  const next: User = { ...before, email, deliveryEmail: email };
  state.tables.users.putSync(next.id, next);
  ctx.afterCommit(() => state.indexUser(next));
  const everyone = () => userViewersAudience(state, next);
  ctx.emit({ type: "realm_user", op: "update", userId: next.id, changes: { deliveryEmail: email } }, everyone);
  ctx.emit({ type: "realm_user", op: "update", userId: next.id, changes: { avatarOf: next } }, everyone);
  ctx.emit({ type: "realm_user", op: "update", userId: next.id, changes: { newEmail: email } }, everyone);
  return next;
}
