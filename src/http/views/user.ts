/**
 * @module http/views/user
 * Zulip's User object from engine records (GET /users, /users/me, /users/{id},
 * /register realm_users). Keep in step with the User object of the API spec.
 *
 * Deviations: the engine has no email-visibility setting and no custom profile field
 * definitions, so `email` is the API email, `delivery_email` is always the real one,
 * and profile_data values carry no rendered_value.
 */
import type { Store } from "../../engine/index.js";
import type { User } from "../../engine/types.js";
import { ROLE } from "../../engine/types.js";
import { avatarUrl } from "./avatar.js";

export interface UserViewOptions {
  /** Zulip's client_gravatar: avatar_url null for Gravatar avatars. */
  readonly clientGravatar: boolean;
  /** Adds profile_data (humans only). */
  readonly includeCustomProfileFields: boolean;
}

/** Python's datetime.isoformat() of a UTC time in whole seconds: "2024-05-01T10:00:00+00:00". */
export function isoDate(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

/** profile_data: field ID -> {value}; list values (user fields) are JSON text, as Zulip stores them. */
export function profileDataToWire(user: User): Record<string, { value: string }> {
  const out: Record<string, { value: string }> = {};
  for (const [id, value] of Object.entries(user.profileData)) out[id] = { value: typeof value === "string" ? value : JSON.stringify(value) };
  return out;
}

export function userToWire(user: User, options: UserViewOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {
    user_id: user.id,
    email: user.email,
    delivery_email: user.deliveryEmail,
    full_name: user.fullName,
    date_joined: isoDate(user.dateJoined),
    is_active: user.isActive,
    is_owner: user.role === ROLE.OWNER,
    is_admin: user.role <= ROLE.ADMINISTRATOR,
    is_guest: user.role === ROLE.GUEST,
    is_bot: user.isBot,
    bot_type: user.isBot ? user.botType : null,
    role: user.role,
    timezone: user.timezone,
    // Bots' real email is always visible, so the client_gravatar rule applies to all.
    avatar_url: avatarUrl(user, options.clientGravatar),
    avatar_version: user.avatarVersion,
    is_imported_stub: user.isImportedStub,
  };
  if (user.isBot) out["bot_owner_id"] = user.botOwnerId;
  else if (options.includeCustomProfileFields) out["profile_data"] = profileDataToWire(user);
  return out;
}

/** Every user of the realm (active and deactivated), by ascending ID. */
export function realmUsers(store: Store, realmId: number): User[] {
  const out: User[] = [];
  for (const user of store.state.users.values()) if (user.realmId === realmId) out.push(user);
  return out.sort((a, b) => a.id - b.id);
}

/**
 * Zulip's max_message_id_for_user: the newest message the user has a row for, or -1.
 * The engine's GET /messages over the empty narrow (the user's personal history).
 */
export function maxMessageIdFor(store: Store, userId: number): number {
  const result = store.getMessages(userId, { narrow: [], anchor: "newest", numBefore: 1, numAfter: 0 });
  const last = result.messages[result.messages.length - 1];
  return last ? last.message.id : -1;
}
