/**
 * @module http/views/presence
 * Presence in Zulip's wire shapes (zerver/lib/presence.py): the modern one by user ID
 * ({active_timestamp, idle_timestamp}) and the legacy one by email (the "website"
 * client and an "aggregated" copy; FL 178 stopped tracking clients).
 */
import { LEGACY_ACTIVITY_OFFSET_SECS, type PresenceListing, type PresenceRecord, type User } from "../../engine/index.js";

export interface PresenceTimestamps {
  readonly active_timestamp: number;
  readonly idle_timestamp: number;
}

/** Modern format; a user never active reads as active when they joined, as Zulip. */
export function presenceTimestamps(user: User, presence: PresenceRecord): PresenceTimestamps {
  return { active_timestamp: presence.lastActive ?? user.dateJoined, idle_timestamp: presence.lastConnected };
}

/** Zulip's format_legacy_presence_dict: active when last active within 70 s of last connected. */
export function legacyClientPresence(t: PresenceTimestamps): { client: "website"; status: "active" | "idle"; timestamp: number; pushable: false } {
  const active = t.active_timestamp + LEGACY_ACTIVITY_OFFSET_SECS >= t.idle_timestamp;
  return { client: "website", status: active ? "active" : "idle", timestamp: active ? t.active_timestamp : t.idle_timestamp, pushable: false };
}

export function legacyPresence(t: PresenceTimestamps): Record<string, unknown> {
  const website = legacyClientPresence(t);
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}

/** The `presences` dict: by user ID (slim/modern) or by email (legacy). */
export function presencesToWire(listing: PresenceListing, slim: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { user, presence } of listing.rows) {
    const t = presenceTimestamps(user, presence);
    if (slim) out[String(user.id)] = t;
    else out[user.email] = legacyPresence(t);
  }
  return out;
}
