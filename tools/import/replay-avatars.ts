/**
 * @module import/replay-avatars
 * Uploaded avatars (zerver_userprofile's avatar_source "U", the image from
 * avatars/records.json): copied under a new name into the data directory where the
 * server serves them, and set through the avatar action as the person, right after the
 * accounts exist (before the realm's avatar_changes_disabled is replayed). The image is
 * taken as the export has it: a parley export's is already the 100×100 PNG parley
 * keeps, a Zulip export's full-size <hash>.png is too (Zulip's default avatar size).
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { newEmojiFileName } from "../../src/emoji/images.js";
import { avatarFilePath } from "../../src/http/avatar-images.js";
import { attempt, type SettingsReplay } from "./settings-replay.js";

export function replayAvatars(c: SettingsReplay): void {
  for (const u of c.data.users) {
    const userId = c.users.get(u.id);
    if (userId === undefined || (u as Record<string, unknown>).avatar_source !== "U") continue;
    const source = c.data.avatarFiles.get(u.id);
    if (source === undefined || c.dataDir === undefined) {
      c.skip("uploaded avatar without its image in the export", u.email);
      continue;
    }
    const fileName = newEmojiFileName("png");
    const target = avatarFilePath(c.dataDir, c.realmId, fileName)!;
    attempt(c, "avatars", u.email, () => {
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      copyFileSync(source, target);
      c.store.setAvatar(userId, fileName);
    });
  }
}
