/**
 * @module wire/user
 * Zulip's User object from engine records (GET /users, /users/me, /users/{id},
 * /register realm_users). Keep in step with the User object of the API spec.
 *
 * Deviation: the engine has no email-visibility setting, so `email` is the API email and
 * `delivery_email` is always the real one.
 */
import type {} from "../engine/index.js";
import type { User } from "../engine/index.js";
import { INACCESSIBLE_USER_NAME, ROLE } from "../engine/index.js";
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

/**
 * profile_data: field ID -> {value, rendered_value for text fields}; list values (user
 * fields) are JSON text, as Zulip stores them.
 */
export function profileDataToWire(user: User): Record<string, { value: string; rendered_value?: string }> {
  const out: Record<string, { value: string; rendered_value?: string }> = {};
  for (const [id, value] of Object.entries(user.profileData)) {
    const rendered = user.profileRendered?.[id];
    const text = typeof value === "string" ? value : JSON.stringify(value);
    out[id] = rendered === undefined ? { value: text } : { value: text, rendered_value: rendered };
  }
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

/** Zulip's get_avatar_for_inaccessible_user: a static image, the same for everyone hidden. */
export const INACCESSIBLE_USER_AVATAR = "/static/images/unknown-user-avatar.png";

/**
 * Zulip's get_data_for_inaccessible_user: what a limited guest is told of a user they may
 * not see (an "Unknown user" member with a dummy email, joined at the epoch).
 */
export function inaccessibleUserToWire(userId: number, emailDomain: string): Record<string, unknown> {
  return {
    email: `user${userId}@${emailDomain}`,
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    role: ROLE.MEMBER,
    is_bot: false,
    full_name: INACCESSIBLE_USER_NAME,
    timezone: "",
    is_active: true,
    date_joined: isoDate(0),
    delivery_email: null,
    avatar_url: INACCESSIBLE_USER_AVATAR,
    profile_data: {},
    is_imported_stub: false,
  };
}
