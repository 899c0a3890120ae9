/**
 * @module accounts/password-strength
 * Zulip's check_password_strength with its production settings: PASSWORD_MIN_LENGTH 6,
 * PASSWORD_MAX_LENGTH 100 (register reports both, and password_min_guesses 10000).
 *
 * Zulip estimates guesses with zxcvbn; parley has no zxcvbn (no dependency added for
 * it), so the guesses rule is approximated by refusing what zxcvbn scores far below
 * 10,000 guesses: one repeated character, a keyboard or alphabet run ("123456",
 * "abcdef", "qwerty"), a password from the short list of the most used ones, and the
 * user's own email address or name. Anything else of 6 characters or more passes,
 * where zxcvbn might still refuse some dictionary words.
 */

export const PASSWORD_MIN_LENGTH = 6;
export const PASSWORD_MAX_LENGTH = 100;
/** Zulip's PASSWORD_MIN_GUESSES (reported in register; approximated, see above). */
export const PASSWORD_MIN_GUESSES = 10_000;

/** The most used passwords of public breach lists (each far under 10,000 guesses for zxcvbn). */
const COMMON = new Set([
  "password",
  "password1",
  "password12",
  "password123",
  "passw0rd",
  "p@ssw0rd",
  "p@ssword",
  "iloveyou",
  "letmein",
  "welcome",
  "welcome1",
  "monkey",
  "dragon",
  "football",
  "baseball",
  "master",
  "shadow",
  "sunshine",
  "princess",
  "trustno1",
  "superman",
  "batman",
  "starwars",
  "michael",
  "jennifer",
  "charlie",
  "computer",
  "freedom",
  "whatever",
  "secret",
  "changeme",
  "admin123",
  "administrator",
  "zulip123",
  "qwerty123",
  "abc123",
  "abcd1234",
  "a1b2c3",
  "1q2w3e",
  "1q2w3e4r",
  "1qaz2wsx",
  "zaq12wsx",
  "asdfgh",
  "zxcvbn",
  "zxcvbnm",
  "hello123",
]);

/** Runs along the alphabet, the digits and the three keyboard rows, forwards or backwards. */
const RUNS = ["abcdefghijklmnopqrstuvwxyz", "01234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"];

function isRun(password: string): boolean {
  return RUNS.some((run) => run.includes(password) || run.includes([...password].reverse().join("")));
}

/** True when Zulip would accept `password` as a new password (see the module note for the guesses rule). */
export function isStrongPassword(
  password: string,
  owner: { readonly email: string; readonly fullName: string },
): boolean {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) return false;
  const folded = password.toLowerCase();
  if (new Set(folded).size === 1) return false;
  if (isRun(folded)) return false;
  if (COMMON.has(folded)) return false;
  const email = owner.email.toLowerCase();
  if (folded === email || folded === email.split("@")[0] || folded === owner.fullName.toLowerCase()) return false;
  return true;
}
