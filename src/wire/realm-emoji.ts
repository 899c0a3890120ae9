/**
 * @module wire/realm-emoji
 * A custom emoji on the wire (Zulip's RealmEmoji dict: string ID, image URLs relative
 * to the server, still_url only for animated ones), and the realm's map of them by ID.
 */
import type { RealmEmoji } from "../engine/index.js";
import { realmEmojiStillUrl, realmEmojiUrl } from "../emoji/realm.js";

export function realmEmojiToWire(e: RealmEmoji): Record<string, unknown> {
  return {
    id: String(e.id),
    name: e.name,
    source_url: realmEmojiUrl(e.realmId, e.fileName),
    still_url: e.isAnimated ? realmEmojiStillUrl(e.realmId, e.fileName) : null,
    deactivated: e.deactivated,
    author_id: e.authorId,
  };
}

/** `{id: RealmEmoji}` for register's realm_emoji, GET /realm/emoji and the legacy update event. */
export function realmEmojiMapToWire(all: readonly RealmEmoji[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(all.map((e) => [String(e.id), realmEmojiToWire(e)]));
}
