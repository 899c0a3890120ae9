/**
 * @module accounts/password-policy
 * The join page's check of a new password, with its own error texts: the strength
 * rule is the one PATCH /settings and the CLI use (accounts/password-strength.ts).
 */
import { BadRequestError } from "../errors.js";
import { isStrongPassword, PASSWORD_MAX_LENGTH } from "./password-strength.js";

/** Throws BadRequestError unless `plain` is acceptable as the new account's password. */
export function checkPasswordPolicy(plain: string, owner: { readonly email: string; readonly fullName: string }): void {
  if ([...plain].length > PASSWORD_MAX_LENGTH)
    throw new BadRequestError(`Password is too long (limit: ${PASSWORD_MAX_LENGTH} characters).`);
  if (!isStrongPassword(plain, owner)) throw new BadRequestError("The password is too weak.");
}
