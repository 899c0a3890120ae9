/**
 * @module accounts/confirmation-key
 * The secret in invitation and email-change links (Zulip's confirmation keys).
 */
import { randomBytes } from "node:crypto";

/** 24 lowercase letters and digits (Zulip's generate_key length): about 124 bits. */
export function generateConfirmationKey(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (const b of randomBytes(24)) out += alphabet[b % alphabet.length];
  return out;
}
