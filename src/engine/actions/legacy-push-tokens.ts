/**
 * @module actions/legacy-push-tokens
 * Zulip's legacy (non-E2EE) push token endpoints, which older mobile apps still call:
 * POST/DELETE /users/me/apns_device_token and /users/me/android_gcm_reg_id (Zulip's
 * views/push_notifications.py and lib/push_notifications.py add_push_device_token /
 * remove_push_device_token). Zulip stores the token whatever the server's push setup,
 * so parley does too, to answer its removal as Zulip does. parley's push sender speaks
 * the E2EE protocol (POST /mobile_push/register) for notifications: no message is sent
 * to a legacy token, nor is it registered with the bouncer. Only POST
 * /mobile_push/test_notification names them to the bouncer, as Zulip's does.
 */
import { createHash } from "node:crypto";
import { BadRequestError, InvalidPushDeviceTokenError } from "../errors.js";
import type { StoreState } from "../state.js";
import { requireHuman } from "./devices.js";

/** Zulip's PushDeviceToken kinds. */
export const LEGACY_TOKEN_KIND = { apns: 1, gcm: 2 } as const;
export type LegacyTokenKind = keyof typeof LEGACY_TOKEN_KIND;

/** Zulip's limit on a token (in characters, counted as Python does). */
const MAX_TOKEN_LENGTH = 4096;
/** What Python's bytes.fromhex accepts: hex pairs, with whitespace between pairs. */
const HEX_BYTES = /^\s*(?:[0-9a-fA-F]{2}\s*)*$/;

export interface LegacyPushToken {
  readonly token: string;
  readonly iosAppId: string | null;
  /** UNIX seconds. */
  readonly createdAt: number;
}

/** Zulip's validate_token: not empty, at most 4096 characters, and hex for APNs. */
function validateToken(token: string, kind: LegacyTokenKind): void {
  if (token === "" || [...token].length > MAX_TOKEN_LENGTH) throw new BadRequestError("Empty or invalid length token");
  if (kind === "apns" && !HEX_BYTES.test(token)) throw new BadRequestError("Invalid APNS token");
}

/**
 * A token's key: its SHA-256 rather than the token, since a token of 4096 characters
 * (16 KiB in UTF-8) is past LMDB's key size.
 */
function tokenKey(userId: number, kind: LegacyTokenKind, token: string): [number, number, string] {
  return [userId, LEGACY_TOKEN_KIND[kind], createHash("sha256").update(token).digest("base64")];
}

/** POST /users/me/apns_device_token and /users/me/android_gcm_reg_id: a token already stored stays as it was. */
export function addLegacyPushToken(
  state: StoreState,
  userId: number,
  kind: LegacyTokenKind,
  token: string,
  iosAppId: string | null,
): void {
  const user = requireHuman(state, userId);
  validateToken(token, kind);
  const key = tokenKey(user.id, kind, token);
  if (state.tables.legacyPushTokens.get(key) !== undefined) return;
  state.write((ctx) => {
    const record: LegacyPushToken = { token, iosAppId, createdAt: state.now() };
    state.tables.legacyPushTokens.putSync(key, record);
    ctx.changed({ kind: "legacyPushTokens", id: user.id });
  });
}

/**
 * DELETE /users/me/apns_device_token and /users/me/android_gcm_reg_id: the caller's own
 * token. An unknown one is Zulip's "Token does not exist", except on a server with the
 * bouncer configured, where Zulip answers success (it asks the bouncer to forget it).
 */
export function removeLegacyPushToken(
  state: StoreState,
  userId: number,
  kind: LegacyTokenKind,
  token: string,
  usesBouncer: boolean,
): void {
  const user = requireHuman(state, userId);
  validateToken(token, kind);
  const key = tokenKey(user.id, kind, token);
  if (state.tables.legacyPushTokens.get(key) === undefined) {
    if (usesBouncer) return;
    throw new BadRequestError("Token does not exist");
  }
  state.write((ctx) => {
    state.tables.legacyPushTokens.removeSync(key);
    ctx.changed({ kind: "legacyPushTokens", id: user.id });
  });
}

/** The user's legacy tokens of one kind (for tests and tools). */
export function legacyPushTokens(state: StoreState, userId: number, kind: LegacyTokenKind): string[] {
  const k = LEGACY_TOKEN_KIND[kind];
  const out: string[] = [];
  for (const { value } of state.tables.legacyPushTokens.getRange({ start: [userId, k], end: [userId, k + 1] }))
    out.push((value as LegacyPushToken).token);
  return out.sort();
}

/** One legacy token a test notification goes to; `kind` is Zulip's PushDeviceToken.kind (1 APNs, 2 FCM). */
export interface LegacyTestTarget {
  readonly token: string;
  readonly kind: number;
}

/**
 * POST /mobile_push/test_notification (Zulip's send_test_push_notification_api): the
 * caller's legacy tokens, or the one named ("Device not recognized" if it is not theirs).
 */
export function legacyTestTargets(state: StoreState, userId: number, token: string | null): LegacyTestTarget[] {
  const user = requireHuman(state, userId);
  const targets: LegacyTestTarget[] = [];
  for (const { key, value } of state.tables.legacyPushTokens.getRange({ start: [user.id], end: [user.id + 1] })) {
    const record = value as LegacyPushToken;
    if (token === null || record.token === token) targets.push({ token: record.token, kind: key[1] });
  }
  if (token !== null && targets.length === 0) throw new InvalidPushDeviceTokenError();
  return targets;
}
