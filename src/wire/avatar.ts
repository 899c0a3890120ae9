/**
 * @module wire/avatar
 * Avatar URLs: an uploaded avatar at Zulip's local path (/user_avatars/{realm}/{file}),
 * else Gravatar by email, or null when the client computes Gravatar itself
 * (client_gravatar) and may see the real email. `?version=` changes with every change.
 */
import { createHash } from "node:crypto";
import type { User } from "../engine/index.js";

export function avatarUrl(user: User, clientGravatar: boolean): string | null {
  if (user.avatarFile !== undefined)
    return `/user_avatars/${user.realmId}/${user.avatarFile}?version=${user.avatarVersion}`;
  if (clientGravatar) return null;
  const hash = createHash("md5").update(user.deliveryEmail.trim().toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${user.avatarVersion}`;
}

/** Zulip's avatar_source: "U" uploaded, "G" Gravatar. */
export function avatarSource(user: User): "U" | "G" {
  return user.avatarFile === undefined ? "G" : "U";
}
