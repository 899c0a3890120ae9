/**
 * @module wire/avatar
 * Avatar URLs: Gravatar by email (we host no uploaded avatars), or null when the
 * client computes Gravatar itself (client_gravatar) and may see the real email.
 */
import { createHash } from "node:crypto";
import type { User } from "../engine/index.js";

export function avatarUrl(user: User, clientGravatar: boolean): string | null {
  if (clientGravatar) return null;
  const hash = createHash("md5").update(user.deliveryEmail.trim().toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${user.avatarVersion}`;
}
