/**
 * @module actions/users
 * Users and bots: creation, role and name changes, deactivation and reactivation.
 * Deactivation closes the user's receive intervals (Zulip sends nothing to inactive
 * users); reactivation reopens them for the channels still subscribed.
 */
import { changedFields } from "../events/change-set.js";
import { deleteDeviceInTxn } from "./devices.js";
import { defaultChannelGroupsOf } from "../queries/default-channel-groups.js";
import { randomBytes } from "node:crypto";
import { isPasswordRecord, type PasswordRecord } from "../accounts/password.js";
import { endWebSessionsInTxn } from "./web-sessions.js";
import { canSeeChannel, canSeeSubscribers, isAdmin, isGroupMember } from "../access.js";
import { activeSubscriberIds } from "../queries/listings.js";
import {
  botManagersAudience,
  excluding,
  realmAudience,
  subscriberViewersAudience,
  userAudience,
  userViewersAudience,
  usersWhere,
} from "../events/audience.js";
import type { Audience, RealmUserChange } from "../events/types.js";
import { emitOwnAccessChange, guestsSharingOnlyChannels } from "./guest-access-events.js";
import type { UserSettingsRecord } from "../settings/defaults.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { exceedsCodePoints } from "../limits.js";
import { checkNewEmail, writeEmailChange } from "./user-email.js";
import { applyProfileValues, type CheckedProfileValue } from "./profile-data.js";
import { checkEmailAddress, isValidEmail, requireActiveUser, requireUser } from "./lookups.js";

export { checkEmailAddress, isValidEmail, requireActiveUser, requireUser };
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import type { BotConfig, BotType, Channel, Realm, Role, Subscription, User } from "../types.js";
import { ROLE, ROLES } from "../types.js";

export interface CreateUserInput {
  readonly realmId: number;
  readonly email: string;
  readonly fullName: string;
  readonly role?: Role;
  readonly bot?: { readonly type: BotType; readonly ownerId: number | null; readonly config?: BotConfig };
  readonly timezone?: string;
  /** Fixed API key (tests, imports); a random one otherwise. */
  readonly apiKey?: string;
  /** An already hashed password (accounts/password.ts hashPassword); none means API-key login only. */
  readonly password?: PasswordRecord;
}

/** Zulip's UserProfile.MAX_NAME_LENGTH and MIN_NAME_LENGTH. */
const MAX_NAME_LENGTH = 100;
const MIN_NAME_LENGTH = 2;

/** A fresh 32-character alphanumeric API key. */
export function generateApiKey(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(32);
  let out = "";
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

/**
 * Zulip's check_full_name: stripped; 2 to 100 characters; no control or other
 * unprintable characters, none of * ` \ > " @ (they would break mention syntax); not
 * ending in |digits (read as a mention's user ID). Organizations cannot require
 * unique names here, so that check does not exist.
 */
export function checkFullName(name: string): string {
  const trimmed = name.trim();
  if (exceedsCodePoints(trimmed, MAX_NAME_LENGTH)) throw new BadRequestError("Name too long!");
  if ([...trimmed].length < MIN_NAME_LENGTH) throw new BadRequestError("Name too short!");
  if (/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}*`\\>"@]/u.test(trimmed))
    throw new BadRequestError("Invalid characters in name!");
  if (/\|\d+$/.test(name)) throw new BadRequestError("Invalid format!");
  return trimmed;
}

/** How Zulip compares names under require_unique_names: NFKC, then case-folded. */
function nameKey(name: string): string {
  return name.normalize("NFKC").toLowerCase();
}

/**
 * Zulip's check_full_name for a name a person or an administrator chooses (forms,
 * POST /users, settings, bots): with the realm's require_unique_names, no other account
 * of the realm (deactivated ones and bots included) may have it. `userId`: the account
 * being renamed, whose own name does not count.
 */
export function checkChosenFullName(state: StoreState, realmId: number, raw: string, userId: number | null): string {
  const name = checkFullName(raw);
  if (state.realms.get(realmId)?.properties?.requireUniqueNames !== true) return name;
  const wanted = nameKey(name);
  for (const id of state.usersOfRealm(realmId)) {
    if (id === userId) continue;
    const other = state.users.get(id);
    if (other && nameKey(other.fullName) === wanted)
      throw new BadRequestError("Unique names required in this organization.");
  }
  return name;
}

export function createUser(state: StoreState, input: CreateUserInput): User {
  const realm = state.realms.get(input.realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  return state.write((ctx) => createUserInTxn(state, ctx, input, realm));
}

/** Creates a user inside an open write (used by realm creation too). */

export function createUserInTxn(state: StoreState, ctx: WriteContext, input: CreateUserInput, realm: Realm): User {
  const email = checkEmailAddress(input.email);
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
    ...(input.bot?.config !== undefined ? { botConfig: input.bot.config } : {}),
  };
  state.tables.users.putSync(user.id, user);
  if (input.password !== undefined) {
    state.tables.passwords.putSync(user.id, input.password);
    ctx.changed({ kind: "password", id: user.id, op: "added" });
  }
  ctx.afterCommit(() => state.indexUser(user));
  // New users start from the organization's defaults; later default changes never touch them.
  const defaults = state.realmSettingDefaults.get(realm.id);
  if (defaults && Object.keys(defaults.values).length > 0) {
    const settings: UserSettingsRecord = { userId: user.id, values: { ...defaults.values }, editedByUser: [] };
    state.tables.userSettings.putSync(user.id, settings);
    ctx.afterCommit(() => state.userSettings.set(user.id, settings));
    ctx.changed({ kind: "userSettings", id: user.id, op: "added" });
  }
  ctx.emit({ type: "realm_user", op: "add", person: user }, () => realmAudience(state, realm.id));
  // Administrators and the bot's owner manage it (register's realm_bots).
  if (user.isBot) ctx.emit({ type: "realm_bot", op: "add", bot: user }, () => botManagersAudience(state, user));
  emitSystemGroupChanges(state, ctx, null, user);
  return user;
}

/**
 * System groups derive their members from roles and activity: a user created,
 * re-roled, deactivated or reactivated joins or leaves them (user_group events).
 */
function emitSystemGroupChanges(state: StoreState, ctx: WriteContext, before: User | null, after: User): void {
  for (const group of state.groups.values()) {
    if (group.realmId !== after.realmId || group.systemRole === null) continue;
    const was = before !== null && isGroupMember(state, group.id, before);
    const is = isGroupMember(state, group.id, after);
    if (was === is) continue;
    ctx.emit(
      { type: "user_group", op: is ? "add_members" : "remove_members", groupId: group.id, userIds: [after.id] },
      () => realmAudience(state, after.realmId),
    );
  }
}

/**
 * A role change can show or hide channels (administrators see private channels'
 * metadata; guests see only their own channels): the user hears of each as stream
 * create or delete. Runs inside the write, on the state before it, with both records.
 */
export function emitVisibilityChanges(state: StoreState, ctx: WriteContext, before: User, after: User): void {
  if (before.role === after.role) return;
  const shown: Channel[] = [];
  const hidden: Channel[] = [];
  for (const channel of state.channels.values()) {
    if (channel.realmId !== after.realmId) continue;
    const was = canSeeChannel(state, before, channel);
    const is = canSeeChannel(state, after, channel);
    if (is && !was) shown.push(channel);
    else if (was && !is) hidden.push(channel);
  }
  if (shown.length > 0) ctx.emit({ type: "stream", op: "create", channels: shown }, () => userAudience(after.id));
  // Zulip's stream create carries no subscribers: who is in a newly visible channel
  // follows as peer_add (since feature level 205 for role changes).
  for (const channel of shown) {
    const userIds = [...activeSubscriberIds(state, channel.id)];
    if (userIds.length > 0 && canSeeSubscribers(state, after, channel)) {
      ctx.emit({ type: "subscription", op: "peer_add", channelIds: [channel.id], userIds }, () =>
        userAudience(after.id),
      );
    }
  }
  if (hidden.length > 0) ctx.emit({ type: "stream", op: "delete", channels: hidden }, () => userAudience(after.id));
  if ((before.role === ROLE.GUEST) !== (after.role === ROLE.GUEST)) emitGuestLineCrossed(state, ctx, after);
  // Administrators manage every bot; others only their own (register's realm_bots).
  if (isAdmin(before) !== isAdmin(after)) {
    for (const id of state.usersOfRealm(after.realmId)) {
      const bot = state.users.get(id);
      if (!bot?.isBot || bot.botOwnerId === after.id) continue;
      if (isAdmin(after)) ctx.emit({ type: "realm_bot", op: "add", bot }, () => userAudience(after.id));
      else ctx.emit({ type: "realm_bot", op: "delete", botId: bot.id }, () => userAudience(after.id));
    }
  }
}

/**
 * Register lists the realm's default channels and default channel groups to non-guests
 * only: a user who becomes or stops being a guest hears the lists they now have.
 */
function emitGuestLineCrossed(state: StoreState, ctx: WriteContext, after: User): void {
  const realm = state.realms.get(after.realmId);
  if (!realm) return;
  const guest = after.role === ROLE.GUEST;
  const channelIds: number[] = [];
  if (!guest)
    for (const c of state.channels.values())
      if (c.realmId === realm.id && c.isDefault && !c.isArchived) channelIds.push(c.id);
  channelIds.sort((a, b) => a - b);
  ctx.emit({ type: "default_streams", realmId: realm.id, channelIds }, () => userAudience(after.id));
  ctx.emit(
    { type: "default_stream_groups", realmId: realm.id, groups: guest ? [] : defaultChannelGroupsOf(realm) },
    () => userAudience(after.id),
  );
}

/** realm_user updates for custom profile values: removed ones first, then set or changed ones. */
function profileValueChanges(before: User, after: User): RealmUserChange[] {
  const out: RealmUserChange[] = [];
  const wire = (value: string | number[]) => (typeof value === "string" ? value : JSON.stringify(value));
  for (const key of Object.keys(before.profileData))
    if (!Object.hasOwn(after.profileData, key))
      out.push({ customProfileField: { id: Number(key), value: null, renderedValue: null } });
  for (const [key, value] of Object.entries(after.profileData)) {
    const old = before.profileData[key];
    if (old !== undefined && wire(old) === wire(value)) continue;
    const renderedValue = after.profileRendered?.[key] ?? null;
    out.push({ customProfileField: { id: Number(key), value: wire(value), renderedValue } });
  }
  return out;
}

/**
 * realm_user update events, one per changed property group (Zulip's shape), to
 * everyone who may see the user unless `audience` says otherwise.
 */
export function emitUserUpdates(
  state: StoreState,
  ctx: WriteContext,
  before: User,
  after: User,
  audience: () => Audience = () => userViewersAudience(state, after),
): void {
  // Every field, the ones no event names too (clients hear only of some).
  ctx.changed({ kind: "user", id: after.id, fields: changedFields(before, after) });
  const changes: RealmUserChange[] = [];
  if (before.fullName !== after.fullName) changes.push({ fullName: after.fullName });
  if (before.role !== after.role) changes.push({ role: after.role });
  if (before.isActive !== after.isActive) changes.push({ isActive: after.isActive });
  if (before.timezone !== after.timezone) changes.push({ timezone: after.timezone });
  changes.push(...profileValueChanges(before, after));
  if (before.botOwnerId !== after.botOwnerId && after.botOwnerId !== null)
    changes.push({ botOwnerId: after.botOwnerId });
  for (const change of changes)
    ctx.emit({ type: "realm_user", op: "update", userId: after.id, changes: change }, audience);
  // No realm_bot update: since feature level 474 a bot's name and activity are only on
  // its User object, which the realm_user updates above carry.
  emitSystemGroupChanges(state, ctx, before, after);
}

export interface UpdateUserInput {
  readonly fullName?: string;
  readonly role?: Role;
  readonly profileData?: readonly { readonly id: number; readonly value: string | readonly number[] | null }[];
  /** profileData checked and rendered (actions/profile-fields' checkProfileDataOf): what updateUser stores. */
  readonly profileValues?: readonly CheckedProfileValue[];
  /**
   * The user's new email address: an owner with the operator-granted
   * can_change_user_emails permission only (the seed's rule for PATCH /users/{id}).
   */
  readonly newEmail?: string;
}

/**
 * An administrator changes another user's name, role or profile data, and an owner
 * with can_change_user_emails their email (PATCH /users/{id}). All of it is checked
 * first and written in one transaction.
 */
export function updateUser(state: StoreState, actorId: number, targetId: number, input: UpdateUserInput): User {
  const actor = requireActiveUser(state, actorId);
  const target = state.users.get(targetId);
  if (!target || target.realmId !== actor.realmId) throw new BadRequestError("No such user");
  if (!isAdmin(actor)) throw new PermissionDeniedError("Insufficient permission");
  // Zulip changes nothing when the address is the current one.
  const newEmail = input.newEmail !== undefined && input.newEmail !== target.deliveryEmail ? input.newEmail : undefined;
  if (newEmail !== undefined) {
    if (actor.role !== ROLE.OWNER)
      throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
    if (actor.canChangeUserEmails !== true)
      throw new PermissionDeniedError("User not authorized to change user emails");
    // Deviation: Zulip lets this reach bots, whose realm_bots entries then keep the old
    // address (no realm_bot event carries an email); their addresses are generated anyway.
    if (target.isBot) throw new BadRequestError("A bot's email address cannot be changed");
  }
  const email = newEmail === undefined ? undefined : checkNewEmail(state, target, newEmail);
  const next: User = { ...target };
  if (input.fullName !== undefined)
    next.fullName = checkChosenFullName(state, target.realmId, input.fullName, target.id);
  if (input.role !== undefined) {
    if (!ROLES.includes(input.role)) throw new BadRequestError("Invalid role");
    const touchesOwner = input.role === ROLE.OWNER || target.role === ROLE.OWNER;
    if (touchesOwner && actor.role !== ROLE.OWNER)
      throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
    // Zulip's check_last_owner counts human owners only: a bot owner can always be demoted.
    if (
      target.role === ROLE.OWNER &&
      !target.isBot &&
      input.role !== ROLE.OWNER &&
      countOwners(state, target.realmId) === 1
    ) {
      throw new BadRequestError("The owner permission cannot be removed from the only organization owner.");
    }
    next.role = input.role;
  }
  applyProfileValues(next, input.profileValues ?? []);
  return state.write((ctx) => {
    state.tables.users.putSync(next.id, next);
    ctx.afterCommit(() => state.indexUser(next));
    emitUserUpdates(state, ctx, target, next);
    emitVisibilityChanges(state, ctx, target, next);
    emitOwnAccessChange(state, ctx, target, next);
    return email === undefined ? next : writeEmailChange(state, ctx, next, email);
  });
}

/** Active human owners of the realm (Zulip's get_human_owner_users: a bot owner never counts). */
export function countOwners(state: StoreState, realmId: number): number {
  let n = 0;
  for (const u of state.users.values())
    if (u.realmId === realmId && u.isActive && u.role === ROLE.OWNER && !u.isBot) n++;
  return n;
}

/**
 * Deactivates or reactivates a user, closing or reopening their receive intervals
 * (the engine's own operation, for tools and imports: no permission checks; the API's
 * rules are in actions/user-lifecycle). The only human owner is never deactivated.
 */
export function setUserActive(state: StoreState, userId: number, active: boolean): User {
  const user = requireUser(state, userId);
  if (user.isActive === active) return user;
  if (!active && user.role === ROLE.OWNER && !user.isBot && countOwners(state, user.realmId) === 1) {
    throw new BadRequestError("Cannot deactivate the only organization owner");
  }
  return state.write((ctx) => writeUserActiveInTxn(state, ctx, user, active));
}

/**
 * Inside an open write: stores `user` (as read before the write) with isActive set,
 * closes or reopens its receive intervals, removes a deactivated user's devices, and
 * emits the realm_user update, system group changes and peer_add/peer_remove.
 */
export function writeUserActiveInTxn(state: StoreState, ctx: WriteContext, user: User, active: boolean): User {
  const userId = user.id;
  const next: User = { ...user, isActive: active };
  // Read before the write: the limited guests who see the user through channels only.
  const channelOnlyGuests = guestsSharingOnlyChannels(state, user);
  const isActiveId = (id: number) => state.users.get(id)?.isActive === true;
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
  state.tables.users.putSync(userId, next);
  for (const sub of subs) {
    state.tables.subscriptions.putSync([sub.userId, sub.channelId], sub);
    ctx.changed({ kind: "subscription", userId: sub.userId, channelId: sub.channelId });
  }
  // Zulip logs a deactivated user out everywhere: their devices (and push registrations) go.
  if (!active) {
    for (const id of state.devicesByUser.get(userId) ?? []) deleteDeviceInTxn(state, ctx, state.devices.get(id)!);
    endWebSessionsInTxn(state, ctx, userId);
  }
  ctx.afterCommit(() => {
    state.indexUser(next);
    for (const sub of subs) state.indexSubscription(sub);
  });
  // Deviation: Zulip sends those guests no add on reactivation, which leaves them the
  // "Unknown user" its remove put in place while their register lists the user again.
  if (active && channelOnlyGuests.length > 0)
    ctx.emit({ type: "realm_user", op: "add", person: next }, () => usersWhere(channelOnlyGuests, isActiveId));
  emitUserUpdates(state, ctx, user, next);
  // Subscriber lists show active users only: the user leaves or rejoins them.
  for (const sub of subs) {
    const channel = state.channels.get(sub.channelId);
    if (!channel) continue;
    ctx.emit(
      { type: "subscription", op: active ? "peer_add" : "peer_remove", channelIds: [channel.id], userIds: [userId] },
      () => excluding(subscriberViewersAudience(state, channel), [userId]),
    );
  }
  if (!active && channelOnlyGuests.length > 0)
    ctx.emit({ type: "realm_user", op: "remove", userId }, () => usersWhere(channelOnlyGuests, isActiveId));
  return next;
}

/** An active user acting on their own behalf; a deactivated one is refused. */

/** Sets (or replaces) a user's password hash; the caller hashed it off the event loop. */
export function setPassword(state: StoreState, userId: number, password: PasswordRecord): void {
  requireUser(state, userId);
  state.write((ctx) => {
    state.tables.passwords.putSync(userId, password);
    ctx.changed({ kind: "password", id: userId });
  });
}

/** The stored password hash of a user, or undefined when they have none. */
export function passwordOf(state: StoreState, userId: number): PasswordRecord | undefined {
  const value: unknown = state.tables.passwords.get(userId);
  return isPasswordRecord(value) ? value : undefined;
}
