/**
 * @module actions/users
 * Users and bots: creation, role and name changes, deactivation and reactivation.
 * Deactivation closes the user's receive intervals (Zulip sends nothing to inactive
 * users); reactivation reopens them for the channels still subscribed.
 */
import { randomBytes } from "node:crypto";
import { isAdmin } from "../access.js";
import { BadRequestError, clip, PermissionDeniedError } from "../errors.js";
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import type { BotType, Realm, Role, Subscription, User } from "../types.js";
import { ROLE, ROLES } from "../types.js";

export interface CreateUserInput {
  readonly realmId: number;
  readonly email: string;
  readonly fullName: string;
  readonly role?: Role;
  readonly bot?: { readonly type: BotType; readonly ownerId: number | null };
  readonly timezone?: string;
  /** Fixed API key (tests, imports); a random one otherwise. */
  readonly apiKey?: string;
}

const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const MAX_NAME_LENGTH = 60;

/** A fresh 32-character alphanumeric API key. */
export function generateApiKey(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(32);
  let out = "";
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

export function checkFullName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw new BadRequestError("Name too short!");
  if (trimmed.length > MAX_NAME_LENGTH) throw new BadRequestError(`Name too long!`);
  if (/[\x00-\x1f*`\\>"@]/.test(trimmed)) throw new BadRequestError("Invalid characters in name!");
  return trimmed;
}

export function createUser(state: StoreState, input: CreateUserInput): User {
  const realm = state.realms.get(input.realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  return state.write((ctx) => createUserInTxn(state, ctx, input, realm));
}

/** Creates a user inside an open write (used by realm creation too). */
export function createUserInTxn(state: StoreState, ctx: WriteContext, input: CreateUserInput, realm: Realm): User {
  const email = input.email.trim();
  if (!EMAIL.test(email) || email.length > 254) throw new BadRequestError(`Invalid email '${clip(input.email)}'`);
  if (state.userByEmail.has(emailKey(realm.id, email))) throw new BadRequestError(`Email '${email}' already in use`);
  const role = input.role ?? ROLE.MEMBER;
  if (!ROLES.includes(role)) throw new BadRequestError("Invalid role");
  if (input.bot?.ownerId != null) {
    const owner = state.users.get(input.bot.ownerId);
    if (!owner || owner.realmId !== realm.id || !owner.isActive) throw new BadRequestError("Invalid bot owner");
  }
  const user: User = {
    id: state.allocate("nextUserId"),
    realmId: realm.id,
    email,
    deliveryEmail: email,
    fullName: checkFullName(input.fullName),
    role,
    isBot: input.bot !== undefined,
    botType: input.bot?.type ?? null,
    botOwnerId: input.bot?.ownerId ?? null,
    isActive: true,
    apiKey: input.apiKey ?? generateApiKey(),
    dateJoined: state.now(),
    timezone: input.timezone ?? "",
    avatarVersion: 1,
    isImportedStub: false,
    profileData: {},
  };
  state.tables.users.putSync(user.id, user);
  ctx.afterCommit(() => state.indexUser(user));
  return user;
}

export interface UpdateUserInput {
  readonly fullName?: string;
  readonly role?: Role;
  readonly profileData?: readonly { readonly id: number; readonly value: string | number[] | null }[];
}

/** An administrator changes another user's name, role or profile data (PATCH /users/{id}). */
export function updateUser(state: StoreState, actorId: number, targetId: number, input: UpdateUserInput): User {
  const actor = requireActiveUser(state, actorId);
  const target = state.users.get(targetId);
  if (!target || target.realmId !== actor.realmId) throw new BadRequestError("No such user");
  if (!isAdmin(actor)) throw new PermissionDeniedError("Insufficient permission");
  const next: User = { ...target, profileData: { ...target.profileData } };
  if (input.fullName !== undefined) next.fullName = checkFullName(input.fullName);
  if (input.role !== undefined) {
    if (!ROLES.includes(input.role)) throw new BadRequestError("Invalid role");
    const touchesOwner = input.role === ROLE.OWNER || target.role === ROLE.OWNER;
    if (touchesOwner && actor.role !== ROLE.OWNER) throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
    if (target.role === ROLE.OWNER && input.role !== ROLE.OWNER && countOwners(state, target.realmId) === 1) {
      throw new BadRequestError("The owner permission cannot be removed from the only organization owner.");
    }
    next.role = input.role;
  }
  for (const item of input.profileData ?? []) {
    if (item.value === null || item.value === "") delete next.profileData[String(item.id)];
    else next.profileData[String(item.id)] = item.value;
  }
  state.write((ctx) => {
    state.tables.users.putSync(next.id, next);
    ctx.afterCommit(() => state.indexUser(next, target));
  });
  return next;
}

function countOwners(state: StoreState, realmId: number): number {
  let n = 0;
  for (const u of state.users.values()) if (u.realmId === realmId && u.isActive && u.role === ROLE.OWNER && !u.isBot) n++;
  return n;
}

/** Deactivates or reactivates a user, closing or reopening their receive intervals. */
export function setUserActive(state: StoreState, userId: number, active: boolean): User {
  const user = requireUser(state, userId);
  if (user.isActive === active) return user;
  if (!active && user.role === ROLE.OWNER && !user.isBot && countOwners(state, user.realmId) === 1) {
    throw new BadRequestError("Cannot deactivate the only organization owner");
  }
  const next: User = { ...user, isActive: active };
  const boundary = state.counters.nextMessageId;
  const subs: Subscription[] = [];
  for (const sub of state.subsByUser.get(userId)?.values() ?? []) {
    if (!sub.active) continue;
    const intervals = sub.intervals.slice();
    const last = intervals[intervals.length - 1];
    if (!active && last && last.to === null) intervals[intervals.length - 1] = { from: last.from, to: boundary };
    else if (active && (!last || last.to !== null)) intervals.push({ from: boundary, to: null });
    else continue;
    subs.push({ ...sub, intervals });
  }
  state.write((ctx) => {
    state.tables.users.putSync(userId, next);
    for (const sub of subs) state.tables.subscriptions.putSync([sub.userId, sub.channelId], sub);
    ctx.afterCommit(() => {
      state.indexUser(next, user);
      for (const sub of subs) state.indexSubscription(sub);
    });
  });
  return next;
}

/** An active user acting on their own behalf; a deactivated one is refused. */
export function requireActiveUser(state: StoreState, userId: number): User {
  const user = requireUser(state, userId);
  if (!user.isActive) throw new BadRequestError("Account is deactivated");
  return user;
}

/** The user, or a BadRequestError("Invalid user ID N"). */
export function requireUser(state: StoreState, userId: number): User {
  const user = state.users.get(userId);
  if (!user) throw new BadRequestError(`Invalid user ID ${userId}`);
  return user;
}
