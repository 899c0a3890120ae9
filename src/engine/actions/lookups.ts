/**
 * @module actions/lookups
 * Checks and lookups that several actions share (users, devices, email changes,
 * channels, the render context): a leaf below them, so none of them imports another
 * for these.
 */
import { BadRequestError, clip } from "../errors.js";
import { MAX_LOOKUP_LENGTH } from "../limits.js";
import { channelKey, type StoreState } from "../state.js";
import type { Channel, User } from "../types.js";
import { ROLE } from "../types.js";

const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;

/** The address syntax accepted for accounts (and invitations). */
export function isValidEmail(email: string): boolean {
  return EMAIL.test(email) && email.length <= 254;
}

/** A well-formed email address of at most 254 characters, trimmed; else "Invalid email '...'". */
export function checkEmailAddress(raw: string): string {
  const email = raw.trim();
  if (!EMAIL.test(email) || email.length > 254) throw new BadRequestError(`Invalid email '${clip(raw)}'`);
  return email;
}

/** The user, or a BadRequestError("Invalid user ID N"). */
export function requireUser(state: StoreState, userId: number): User {
  const user = state.users.get(userId);
  if (!user) throw new BadRequestError(`Invalid user ID ${userId}`);
  return user;
}

export function requireActiveUser(state: StoreState, userId: number): User {
  const user = requireUser(state, userId);
  if (!user.isActive) throw new BadRequestError("Account is deactivated");
  return user;
}

/** Zulip's require_member_or_admin: an active user who is neither a bot nor a guest. */
export function requireMemberOrAdmin(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (actor.isBot) throw new BadRequestError("This endpoint does not accept bot requests.");
  if (actor.role === ROLE.GUEST) throw new BadRequestError("Not allowed for guest users");
  return actor;
}

/** The channel by name in a realm, if any (case-insensitive). */
export function findChannelByName(state: StoreState, realmId: number, name: string): Channel | undefined {
  if (name.length > MAX_LOOKUP_LENGTH) return undefined;
  const id = state.channelByName.get(channelKey(realmId, name));
  return id === undefined ? undefined : state.channels.get(id);
}
