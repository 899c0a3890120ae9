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
import { ROLE } from "../engine/index.js";
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
