/**
 * @module actions/web-sessions
 * Browser sessions of the web client (Zulip's Django sessions behind its `sessionid`
 * cookie). A session token is "<userId>.<secret>"; only the secret's SHA-256 is
 * stored, under [userId, hash], so a copy of the store logs nobody in and a user's
 * sessions are one key range (ended together on deactivation).
 *
 * A session ends when it is logged out, when it expires (two weeks after the login,
 * Django's SESSION_COOKIE_AGE), when its user is deactivated (Zulip's
 * delete_user_sessions, done in the deactivation's write), or when the user's password
 * or API key changes: each session holds a stamp of both taken at login, and one that
 * no longer matches is refused (as Django's session auth hash does for passwords).
 * Reading a session never writes, so reader workers answer cookie requests too.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { isPasswordRecord } from "../accounts/password.js";
import type { StoreState, WriteContext } from "../state.js";
import type { User } from "../types.js";
import { requireActiveUser } from "./lookups.js";

/** Django's SESSION_COOKIE_AGE, which Zulip keeps: two weeks. */
export const WEB_SESSION_SECONDS = 14 * 24 * 60 * 60;
/** Sessions one user may hold; a login beyond it ends their oldest (bounds what login spam can store). */
export const MAX_WEB_SESSIONS_PER_USER = 50;

export interface WebSessionRecord {
  readonly realmId: number;
  /** UNIX seconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
  /** stampOf(user) at login. */
  readonly stamp: string;
}

type SessionKey = [number, string];

const TOKEN = /^([1-9]\d{0,9})\.([A-Za-z0-9_-]{43})$/;

function hashOf(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}

/** What a session must still match: the user's API key and password hash. */
function stampOf(state: StoreState, user: User): string {
  const stored: unknown = state.tables.passwords.get(user.id);
  const password = isPasswordRecord(stored) ? stored : undefined;
  const material = `${user.apiKey}\0${password ? `${password.salt}:${password.hash}` : ""}`;
  return createHash("sha256").update(material).digest("base64url");
}

function keyOf(token: string): SessionKey | null {
  const match = TOKEN.exec(token);
  return match ? [Number(match[1]), hashOf(match[2]!)] : null;
}

function isRecord(value: unknown): value is WebSessionRecord {
  return typeof value === "object" && value !== null && typeof (value as WebSessionRecord).stamp === "string";
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function sessionsOf(state: StoreState, userId: number): { key: SessionKey; value: WebSessionRecord }[] {
  const out: { key: SessionKey; value: WebSessionRecord }[] = [];
  for (const { key, value } of state.tables.webSessions.getRange({ start: [userId], end: [userId + 1] }))
    if (isRecord(value)) out.push({ key: key as SessionKey, value });
  return out;
}

/**
 * A new session for an active user who just proved who they are (password or API
 * key, checked by the caller): its token, for the cookie. The user's expired sessions,
 * and the oldest beyond MAX_WEB_SESSIONS_PER_USER, are removed in the same write.
 */
export function createWebSession(state: StoreState, userId: number): string {
  const user = requireActiveUser(state, userId);
  const secret = randomBytes(32).toString("base64url");
  const now = state.now();
  const record: WebSessionRecord = {
    realmId: user.realmId,
    createdAt: now,
    expiresAt: now + WEB_SESSION_SECONDS,
    stamp: stampOf(state, user),
  };
  const live = sessionsOf(state, user.id).sort((a, b) => a.value.createdAt - b.value.createdAt);
  const stale = live.filter((s) => s.value.expiresAt <= now || s.value.stamp !== record.stamp);
  const kept = live.filter((s) => !stale.includes(s));
  const over = kept.slice(0, Math.max(0, kept.length - (MAX_WEB_SESSIONS_PER_USER - 1)));
  state.write((ctx) => {
    for (const s of [...stale, ...over]) state.tables.webSessions.removeSync(s.key);
    state.tables.webSessions.putSync([user.id, hashOf(secret)], record);
    ctx.changed({ kind: "webSession", id: user.id });
  });
  return `${user.id}.${secret}`;
}

/**
 * The user a session token logs in, or null when it is malformed, unknown, expired or
 * outdated (password or API key changed). The caller still checks the user and realm
 * are active and that the realm is the request's.
 */
export function webSessionUser(state: StoreState, token: string): User | null {
  const key = keyOf(token);
  if (key === null) return null;
  const value: unknown = state.tables.webSessions.get(key);
  if (!isRecord(value) || value.expiresAt <= state.now()) return null;
  const user = state.users.get(key[0]);
  if (!user || user.realmId !== value.realmId || !sameText(stampOf(state, user), value.stamp)) return null;
  return user;
}

/** Logout: the session ends for every tab that shares it. An unknown token changes nothing. */
export function endWebSession(state: StoreState, token: string): void {
  const key = keyOf(token);
  if (key === null || state.tables.webSessions.get(key) === undefined) return;
  state.write((ctx) => {
    state.tables.webSessions.removeSync(key);
    ctx.changed({ kind: "webSession", id: key[0] });
  });
}

/** Inside an open write: ends every session of the user (deactivation). */
export function endWebSessionsInTxn(state: StoreState, ctx: WriteContext, userId: number): void {
  const sessions = sessionsOf(state, userId);
  if (sessions.length === 0) return;
  for (const s of sessions) state.tables.webSessions.removeSync(s.key);
  ctx.changed({ kind: "webSession", id: userId });
}

/** How many sessions the user holds, expired or not (for tests and tools). */
export function webSessionCount(state: StoreState, userId: number): number {
  return sessionsOf(state, userId).length;
}
