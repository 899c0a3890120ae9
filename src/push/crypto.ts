/**
 * @module push/crypto
 * End-to-end encryption of notification payloads for one device: libsodium's
 * secretbox (XSalsa20-Poly1305, tweetnacl's implementation) under the device's key,
 * a fresh random 24-byte nonce prepended to the box, all in standard base64 — what
 * PyNaCl's SecretBox.encrypt produces and Zulip's mobile app opens.
 */
import { randomBytes } from "node:crypto";
import nacl from "tweetnacl";

/** Encrypts `payload` (as JSON) for a device whose push key is base64 of 0x31 followed by the 32-byte key. */
export function encryptForDevice(pushKeyBase64: string, payload: unknown): string {
  const key = Buffer.from(pushKeyBase64, "base64").subarray(1);
  if (key.length !== nacl.secretbox.keyLength) throw new Error("push key of the wrong length");
  const nonce = randomBytes(nacl.secretbox.nonceLength);
  const box = nacl.secretbox(Buffer.from(JSON.stringify(payload), "utf8"), nonce, key);
  return Buffer.concat([nonce, box]).toString("base64");
}
