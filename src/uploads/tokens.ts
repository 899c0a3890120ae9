/**
 * @module uploads/tokens
 * Temporary download URLs (Zulip's generate_unauthed_file_access_url): a token that
 * signs the path_id and when it was made, valid for SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS
 * without credentials. The key is random per process (a restart ends every token,
 * which at a 60-second lifetime costs nothing), or under `parley serve --workers` the
 * supervisor's, shared by every worker: a client may open the URL on another worker
 * than the one that handed it out.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Zulip's SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS. */
export const TOKEN_VALIDITY_SECONDS = 60;

export class DownloadTokens {
  readonly #key: Buffer;
  readonly #now: () => number;
  readonly #validity: number;

  /** `now` in milliseconds. */
  constructor(now: () => number, validitySeconds = TOKEN_VALIDITY_SECONDS, key: Buffer = randomBytes(32)) {
    this.#now = now;
    this.#validity = validitySeconds;
    this.#key = key;
  }

  #sign(text: string): string {
    return createHmac("sha256", this.#key).update(`user_uploads_:${text}`).digest("base64url");
  }

  /** A token for `pathId`; uppercase hex like Zulip's, so it is one safe path segment. */
  issue(pathId: string): string {
    const text = `${pathId}:${Math.floor(this.#now() / 1000)}`;
    return Buffer.from(`${text}:${this.#sign(text)}`)
      .toString("hex")
      .toUpperCase();
  }

  /** The path_id a valid, unexpired token signs, else null. */
  verify(token: string): string | null {
    if (!/^(?:[0-9A-F]{2}){1,1024}$/.test(token)) return null;
    const decoded = Buffer.from(token, "hex").toString("utf8");
    const cut = decoded.lastIndexOf(":");
    if (cut < 0) return null;
    const text = decoded.slice(0, cut);
    const given = Buffer.from(decoded.slice(cut + 1));
    const expected = Buffer.from(this.#sign(text));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const at = text.lastIndexOf(":");
    const issued = Number(text.slice(at + 1));
    if (!Number.isSafeInteger(issued) || Math.floor(this.#now() / 1000) - issued > this.#validity) return null;
    return text.slice(0, at);
  }
}
