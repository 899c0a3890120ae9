/**
 * @module accounts/password-policy
 * What a new password must be, checked before it is hashed. Zulip's defaults are
 * PASSWORD_MIN_LENGTH 6 and a zxcvbn guess estimate of 10,000; parley checks the
 * length (and refuses the most common passwords) without zxcvbn.
 */
import { BadRequestError } from "../errors.js";

export const PASSWORD_MIN_LENGTH = 6;
/** Zulip's PASSWORD_MAX_LENGTH. */
export const PASSWORD_MAX_LENGTH = 100;

const TOO_COMMON = new Set(["123456", "1234567", "12345678", "123456789", "1234567890", "password", "password1", "qwerty", "qwertyuiop", "abc123", "111111", "000000", "letmein", "iloveyou", "welcome", "admin123"]);

/** Throws BadRequestError unless `plain` is acceptable as a new password. */
export function checkPasswordPolicy(plain: string): void {
  const length = [...plain].length;
  if (length > PASSWORD_MAX_LENGTH) throw new BadRequestError(`Password is too long (limit: ${PASSWORD_MAX_LENGTH} characters).`);
  if (length < PASSWORD_MIN_LENGTH || TOO_COMMON.has(plain.toLowerCase()) || new Set(plain).size < 3) throw new BadRequestError("The password is too weak.");
}
