/**
 * @module wire/presence
 * Presence in Zulip's wire shapes (zerver/lib/presence.py): the modern one by user ID
 * ({active_timestamp, idle_timestamp}) and the legacy one by email (the "website"
 * client and an "aggregated" copy; FL 178 stopped tracking clients).
 */
import { LEGACY_ACTIVITY_OFFSET_SECS, type PresenceListing, type PresenceRecord, type User } from "../engine/index.js";
import { RawJson } from "./raw-json.js";

export interface PresenceTimestamps {
  readonly active_timestamp: number;
  readonly idle_timestamp: number;
}

/** Modern format; a user never active reads as active when they joined, as Zulip. */
export function presenceTimestamps(user: User, presence: PresenceRecord): PresenceTimestamps {
  return { active_timestamp: presence.lastActive ?? user.dateJoined, idle_timestamp: presence.lastConnected };
}

/** Zulip's format_legacy_presence_dict: active when last active within 70 s of last connected. */
export function legacyClientPresence(t: PresenceTimestamps): {
  client: "website";
  status: "active" | "idle";
  timestamp: number;
  pushable: false;
} {
  const active = t.active_timestamp + LEGACY_ACTIVITY_OFFSET_SECS >= t.idle_timestamp;
  return {
    client: "website",
    status: active ? "active" : "idle",
    timestamp: active ? t.active_timestamp : t.idle_timestamp,
    pushable: false,
  };
}

export function legacyPresence(t: PresenceTimestamps): Record<string, unknown> {
  const website = legacyClientPresence(t);
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}

/**
 * Each record's JSON member (`"key":{...}`) as bytes, per format. Records are replaced
 * (never changed in place) when presence changes, so a record's bytes stay valid for
 * its lifetime; the legacy member also names the email it was built with.
 */
const slimMember = new WeakMap<PresenceRecord, Buffer>();
const legacyMember = new WeakMap<PresenceRecord, { readonly email: string; readonly bytes: Buffer }>();

function member(user: User, presence: PresenceRecord, slim: boolean): Buffer {
  if (slim) {
    let bytes = slimMember.get(presence);
    if (bytes === undefined)
      slimMember.set(
        presence,
        (bytes = Buffer.from(`"${user.id}":${JSON.stringify(presenceTimestamps(user, presence))}`)),
      );
    return bytes;
  }
  const cached = legacyMember.get(presence);
  if (cached !== undefined && cached.email === user.email) return cached.bytes;
  const bytes = Buffer.from(
    `${JSON.stringify(user.email)}:${JSON.stringify(legacyPresence(presenceTimestamps(user, presence)))}`,
  );
  legacyMember.set(presence, { email: user.email, bytes });
  return bytes;
}

/**
 * The `presences` dict as ready JSON: by user ID (slim/modern) or by email (legacy).
 * A full answer for a large realm is mostly unchanged members, so it is their cached
 * bytes copied into one buffer, not a tree to encode.
 */
export function presencesToWire(listing: PresenceListing, slim: boolean): RawJson {
  const members = listing.rows.map(({ user, presence }) => member(user, presence, slim));
  let length = 2 + Math.max(0, members.length - 1);
  for (const m of members) length += m.length;
  const out = Buffer.allocUnsafe(length);
  out[0] = 0x7b; // {
  let at = 1;
  for (let i = 0; i < members.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    const m = members[i]!;
    out.set(m, at);
    at += m.length;
  }
  out[at] = 0x7d; // }
  return new RawJson([out]);
}
