/**
 * @module actions/accounts
 * Logging in and the credentials that go with an account: password login (Zulip's
 * EmailAuthBackend), login by a verified email (its dummy backend, behind JWT),
 * password changes, API key regeneration, and the operator-granted special permission
 * to change other users' emails. Hashing runs on libuv's thread pool (accounts/password),
 * so the checks that need it are async; writes stay single synchronous transactions.
 */
import { hashPassword, verifyPassword, SCRYPT_COST, type PasswordRecord } from "../accounts/password.js";
import { isStrongPassword } from "../accounts/password-strength.js";
import { BadRequestError, LoginError, WrongPasswordError } from "../errors.js";
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import type { User } from "../types.js";
import { generateApiKey, passwordOf, requireActiveUser, requireUser } from "./users.js";

/** scrypt's parameters: production uses SCRYPT_COST; tests may pass a cheaper one. */
export type ScryptCost = { readonly N: number; readonly r: number; readonly p: number };

/**
 * A verified password change, only made by preparePasswordChange: updateSettings
 * accepts no new hash that did not pass the old-password and strength checks.
 */
export interface PreparedPasswordChange {
  readonly userId: number;
  readonly record: PasswordRecord;
  readonly [verified]: true;
}
declare const verified: unique symbol;

/**
 * Compared against when the account does not exist or has no password, so that a
 * refusal takes as long as a wrong password and does not tell which accounts exist.
 */
const decoys = new Map<string, Promise<PasswordRecord>>();
function decoy(cost: ScryptCost): Promise<PasswordRecord> {
  const key = `${cost.N}:${cost.r}:${cost.p}`;
  let record = decoys.get(key);
  if (!record) {
    record = hashPassword("parley decoy password", cost);
    decoys.set(key, record);
    // A refused hash (the pool was full) must not stay cached: the next login makes it again.
    record.catch(() => decoys.delete(key));
  }
  return record;
}

/** The realm's user whose real email is `email` (case-insensitive), bots and deactivated users included. */
function userByDeliveryEmail(state: StoreState, realmId: number, email: string): User | undefined {
  const id = state.userByEmail.get(emailKey(realmId, email));
  const user = id === undefined ? undefined : state.users.get(id);
  return user && user.deliveryEmail.toLowerCase() === email.trim().toLowerCase() ? user : undefined;
}

/** Zulip's is_user_active after a successful credential check: the realm first, then the user. */
function requireLoginAllowed(state: StoreState, user: User): User {
  if (state.realms.get(user.realmId)?.deactivated !== false) throw new LoginError("realm_deactivated");
  if (!user.isActive) throw new LoginError("user_deactivated");
  return user;
}

/**
 * POST /fetch_api_key: the user whose real email and password these are.
 * Deviation (deliberate): the password is checked before the account's state, so
 * "Account is deactivated" and "This organization has been deactivated" are told only
 * to someone who knows the password (Zulip tells anyone who names the email); a user
 * of another realm is "incorrect" like an unknown one (Zulip answers "Invalid subdomain").
 */
export async function loginWithPassword(
  state: StoreState,
  realmId: number,
  username: string,
  password: string,
  cost: ScryptCost = SCRYPT_COST,
): Promise<User> {
  const user = userByDeliveryEmail(state, realmId, username);
  const record = user ? passwordOf(state, user.id) : undefined;
  // Zulip's EmailAuthBackend refuses an empty password before looking anything up.
  if (password === "" || !user || !record) {
    await verifyPassword(await decoy(cost), password);
    throw new LoginError("failed");
  }
  if (!(await verifyPassword(record, password))) throw new LoginError("failed");
  // The state may have changed while the hash ran: judge the current record.
  return requireLoginAllowed(state, requireUser(state, user.id));
}

/**
 * Zulip's dummy backend: a login for an email someone else has verified (a signed
 * JWT). An unknown email is "incorrect", like a failed password login.
 */
export function loginByEmail(state: StoreState, realmId: number, email: string): User {
  const user = userByDeliveryEmail(state, realmId, email);
  if (!user) throw new LoginError("failed");
  return requireLoginAllowed(state, user);
}

/**
 * PATCH /settings old_password/new_password: checks the old password ("Wrong
 * password!" when it does not match or the account has none) and the new one's
 * strength, and hashes it. Nothing is written: updateSettings stores the result with
 * the request's other changes in one write.
 */
export async function preparePasswordChange(
  state: StoreState,
  userId: number,
  oldPassword: string,
  newPassword: string,
  cost: ScryptCost = SCRYPT_COST,
): Promise<PreparedPasswordChange> {
  const user = requireActiveUser(state, userId);
  const record = passwordOf(state, user.id);
  if (oldPassword === "" || !record || !(await verifyPassword(record, oldPassword))) throw new WrongPasswordError();
  if (!isStrongPassword(newPassword, { email: user.deliveryEmail, fullName: user.fullName }))
    throw new BadRequestError("New password is too weak!");
  return { userId, record: await hashPassword(newPassword, cost) } as PreparedPasswordChange;
}

/** The hash of a new account's password (CLI, invitations), after Zulip's strength rule. */
export async function hashNewPassword(
  password: string,
  owner: { readonly email: string; readonly fullName: string },
  cost: ScryptCost = SCRYPT_COST,
): Promise<PasswordRecord> {
  if (!isStrongPassword(password, owner)) throw new BadRequestError("The password is too weak.");
  return hashPassword(password, cost);
}

/**
 * POST /users/me/api_key/regenerate: a fresh key; the old one stops working when this
 * returns (the key index changes with the commit). No event: Zulip sends one only for
 * bots' keys, and stopped doing that at feature level 474.
 */
export function regenerateApiKey(state: StoreState, userId: number): string {
  const user = requireActiveUser(state, userId);
  return state.write((ctx) => writeNewApiKeyInTxn(state, ctx, user));
}

/**
 * Gives a user the API key they had on another server (`parley realm move`), so that clients and bots keep
 * working after their realm moves. A key another user holds here is refused (keys are unique per server).
 */
export function restoreApiKey(state: StoreState, userId: number, apiKey: string): void {
  const user = requireUser(state, userId);
  if (user.apiKey === apiKey) return;
  const holder = state.userByApiKey.get(apiKey);
  if (holder !== undefined && holder !== userId) throw new BadRequestError("This API key belongs to another user.");
  state.write((ctx) => {
    const next: User = { ...user, apiKey };
    state.tables.users.putSync(next.id, next);
    ctx.afterCommit(() => state.indexUser(next));
    ctx.changed({ kind: "user", id: next.id, fields: ["apiKey"] });
  });
}

/** Inside an open write: gives `user` a fresh API key (the old one fails from the commit on). */
export function writeNewApiKeyInTxn(state: StoreState, ctx: WriteContext, user: User): string {
  const next: User = { ...user, apiKey: generateApiKey() };
  state.tables.users.putSync(next.id, next);
  ctx.afterCommit(() => state.indexUser(next));
  ctx.changed({ kind: "user", id: next.id, fields: ["apiKey"] });
  return next.apiKey;
}

/** Grants or revokes can_change_user_emails (Zulip: manage.py change_user_role ... can_change_user_emails). */
export function setCanChangeUserEmails(state: StoreState, userId: number, value: boolean): User {
  const user = requireUser(state, userId);
  if ((user.canChangeUserEmails === true) === value) return user;
  const next: User = { ...user, canChangeUserEmails: value };
  state.write((ctx) => {
    state.tables.users.putSync(next.id, next);
    ctx.afterCommit(() => state.indexUser(next));
    ctx.changed({ kind: "user", id: next.id, fields: ["canChangeUserEmails"] });
  });
  return next;
}

/**
 * Grants or revokes can_create_users (Zulip: manage.py change_user_role ... can_create_users),
 * which POST /users needs besides the administrator role.
 */
export function setCanCreateUsers(state: StoreState, userId: number, value: boolean): User {
  const user = requireUser(state, userId);
  if ((user.canCreateUsers === true) === value) return user;
  const next: User = { ...user, canCreateUsers: value };
  state.write((ctx) => {
    state.tables.users.putSync(next.id, next);
    ctx.afterCommit(() => state.indexUser(next));
    ctx.changed({ kind: "user", id: next.id, fields: ["canCreateUsers"] });
  });
  return next;
}
