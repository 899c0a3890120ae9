/**
 * @module tools/import/replay-settings
 * The parts of an import beyond messages (tools/import/replay.ts calls these in its
 * order): the realm's settings (custom profile fields and values, linkifiers, email
 * domains, channel folders, custom emoji with their images, uploaded files with their
 * bytes) before the messages, so that sends render linkifiers and emoji and claim
 * uploads as they did; then channels that never had a subscriber or a message, each
 * channel's folder and permission groups, archiving, and each person's alert words,
 * muted users, status, drafts and scheduled messages. Everything goes through the
 * engine's actions as the owner or the user concerned; refusals are counted with the
 * engine's reason. Files are copied from the unpacked export into the data directory
 * at the places the server reads them from.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  CHANNEL_GROUP_SETTINGS,
  PROFILE_FIELD_TYPE,
  type ChannelGroupField,
  type DraftType,
  type GroupSettingValue,
} from "../../src/engine/index.js";
import { emojiFilePath, newEmojiFileName } from "../../src/emoji/images.js";
import { UploadFiles } from "../../src/uploads/files.js";
import { replayBotDefaultChannels } from "./replay-bots.js";
import { addressee, anonymousGroups, attempt, groupValue, reason, type SettingsReplay } from "./settings-replay.js";
import { replayScheduledMessages } from "./replay-scheduled.js";
import { replayDefaultChannels, replayPersonalSettings, replayRealmSettingColumns } from "./replay-realm.js";
import {
  replayDefaultChannelGroups,
  replayPlaygrounds,
  replayRealmUserDefaults,
  replaySnippetsAndViews,
} from "./replay-realm-extras.js";

/** Image formats parley serves emoji in, by file extension. */
const EMOJI_EXTENSIONS: Readonly<Record<string, string>> = {
  png: "png",
  gif: "gif",
  jpg: "jpeg",
  jpeg: "jpeg",
  webp: "webp",
};

/** Custom profile fields in their order, then every user's values (as the owner, who may set anyone's). */
function importProfileFields(c: SettingsReplay): void {
  const fields = new Map<number, { id: number; type: number }>();
  for (const f of [...c.data.profileFields].sort((a, b) => (a.order ?? a.id) - (b.order ?? b.id) || a.id - b.id)) {
    let fieldData: Record<string, string | Record<string, string>> | undefined;
    try {
      fieldData = f.field_data ? (JSON.parse(f.field_data) as typeof fieldData) : undefined;
    } catch {
      c.skip("custom profile field with unreadable field_data", f.name);
      continue;
    }
    attempt(c, "custom profile fields", f.name, () => {
      const field = c.store.createProfileField(c.ownerId, f.field_type, {
        name: f.name,
        hint: f.hint ?? "",
        ...(fieldData !== undefined ? { fieldData } : {}),
        displayInProfileSummary: f.display_in_profile_summary === true,
        required: f.required === true,
        editableByUser: f.editable_by_user !== false,
        useForUserMatching: f.use_for_user_matching === true,
      });
      fields.set(f.id, { id: field.id, type: f.field_type });
    });
  }
  const byUser = new Map<number, { id: number; value: string | number[] }[]>();
  for (const v of c.data.profileValues) {
    const user = c.users.get(v.user_profile);
    const field = fields.get(v.field);
    if (user === undefined || field === undefined) continue;
    let value: string | number[] = v.value;
    if (field.type === PROFILE_FIELD_TYPE.USER) {
      try {
        const listed = JSON.parse(v.value) as unknown;
        value = (Array.isArray(listed) ? listed : [])
          .map((id) => c.users.get(Number(id)))
          .filter((id): id is number => id !== undefined);
      } catch {
        c.skip("custom profile value with unreadable user IDs", `user ${v.user_profile} field ${v.field}`);
        continue;
      }
    }
    (byUser.get(user) ?? byUser.set(user, []).get(user)!).push({ id: field.id, value });
  }
  for (const [user, items] of byUser) {
    try {
      c.store.updateUser(c.ownerId, user, { profileData: items });
      c.count("custom profile values", items.length);
    } catch (error) {
      c.skip(`custom profile values refused: ${reason(error)}`, `parley user ${user}`);
    }
  }
}

/** Where to copy a file, its directory made. */
function destination(path: string): string {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return path;
}

/** Custom emoji with their images, in ID order (a deactivated one's name may be reused by a later one). */
function importRealmEmoji(c: SettingsReplay): void {
  for (const e of [...c.data.realmEmoji].sort((a, b) => a.id - b.id)) {
    const zulipName = e.file_name ?? "";
    const source = c.data.emojiFiles.get(`${c.data.realm.id}/emoji/images/${zulipName}`);
    // Zulip names the file after the emoji's ID (3.gif); parley's names are unguessable: a fresh one, same format.
    const extension = EMOJI_EXTENSIONS[/\.([a-z]+)$/i.exec(zulipName)?.[1]?.toLowerCase() ?? ""];
    const fileName = /^[0-9a-f]{16}\.(png|gif|jpeg|webp)$/.test(zulipName)
      ? zulipName
      : extension === undefined
        ? null
        : newEmojiFileName(extension);
    const target =
      c.dataDir === undefined || fileName === null ? null : emojiFilePath(c.dataDir, c.realmId, fileName, false);
    if (source === undefined || fileName === null || target === null) {
      c.skip(
        source === undefined ? "custom emoji without its image in the export" : "custom emoji of an unknown format",
        `:${e.name}:`,
      );
      continue;
    }
    const author = e.author === null || e.author === undefined ? undefined : c.users.get(e.author);
    try {
      copyFileSync(source, destination(target));
      const still = c.data.emojiFiles.get(
        `${c.data.realm.id}/emoji/images/still/${zulipName.replace(/\.[a-z]+$/i, ".png")}`,
      );
      const stillTarget = emojiFilePath(c.dataDir!, c.realmId, fileName.replace(/\.[a-z]+$/, ".png"), true);
      if (e.is_animated === true && still !== undefined && stillTarget !== null)
        copyFileSync(still, destination(stillTarget));
      const input = { name: e.name, fileName, isAnimated: e.is_animated === true };
      let added;
      try {
        added = c.store.addRealmEmoji(author ?? c.ownerId, input);
      } catch {
        // The author may no longer be allowed to add emoji: the owner is.
        added = c.store.addRealmEmoji(c.ownerId, input);
      }
      c.emoji.set(e.id, added.id);
      if (e.deactivated === true) c.store.removeRealmEmoji(c.ownerId, added.name);
      c.count("custom emoji");
    } catch (error) {
      c.skip(`custom emoji refused: ${reason(error)}`, `:${e.name}:`);
    }
  }
}

/**
 * Uploaded files: the bytes copied under the new realm's path_id (Zulip's begin with the
 * realm ID) and recorded for their owner, before the messages that link them are sent,
 * so each send claims its uploads. Returns old path_id -> new, for the messages' links.
 */
function importUploads(c: SettingsReplay): Map<string, string> {
  const paths = new Map<string, string>();
  const files = c.dataDir === undefined ? null : new UploadFiles(join(c.dataDir, "uploads"));
  for (const a of c.data.attachments) {
    const owner = c.users.get(a.owner);
    const source = c.data.uploadFiles.get(a.path_id);
    if (owner === undefined) continue;
    if (source === undefined || files === null) {
      c.skip("upload without its file in the export", a.path_id);
      continue;
    }
    const pathId = a.path_id.replace(/^\d+\//, `${c.realmId}/`);
    try {
      copyFileSync(source, destination(files.pathOf(pathId)));
      c.store.createAttachment(
        {
          ownerId: owner,
          pathId,
          name: a.file_name,
          size: a.size,
          contentType: a.content_type ?? "application/octet-stream",
          image: c.data.uploadImages.get(a.path_id) ?? null,
        },
        null,
      );
      paths.set(a.path_id, pathId);
      c.count("uploads");
    } catch (error) {
      c.skip(`upload refused: ${reason(error)}`, a.path_id);
    }
  }
  return paths;
}

/** Before the messages: what sends render with or claim. Returns the upload path mapping. */
export function replayRealmSettings(c: SettingsReplay): Map<string, string> {
  importProfileFields(c);
  const linkifiers = [...c.data.linkifiers].sort((a, b) => (a.order ?? 0) - (b.order ?? 0) || a.id - b.id);
  for (const l of linkifiers)
    attempt(c, "linkifiers", l.pattern, () => {
      c.store.addLinkifier(c.ownerId, { pattern: l.pattern, urlTemplate: l.url_template ?? l.url_format_string ?? "" });
    });
  for (const d of c.data.realmDomains)
    attempt(c, "realm domains", d.domain, () => {
      c.store.addRealmDomain(c.ownerId, d.domain, d.allow_subdomains === true);
    });
  importRealmEmoji(c);
  return importUploads(c);
}

/** Channels nobody ever joined or wrote in: created empty, as the export lists them. */
function createEmptyChannels(c: SettingsReplay): void {
  for (const s of c.data.streams) {
    if (c.channels.has(s.id)) continue;
    attempt(c, "channels", s.name, () => {
      // subscribe without creation messages: the Notification Bot's notice would be a message the export lacks.
      const result = c.store.subscribe(c.ownerId, {
        channels: [{ name: s.name, ...(s.description !== undefined ? { description: s.description } : {}) }],
        principals: [],
        newChannel: {
          inviteOnly: s.invite_only === true,
          historyPublicToSubscribers: s.history_public_to_subscribers ?? s.invite_only !== true,
          isWebPublic: s.is_web_public === true,
        },
      });
      const id = result.createdChannelIds[0];
      if (id === undefined) throw new Error("not created");
      c.channels.set(s.id, id);
    });
  }
}

/** Folders, then each channel's folder and permission groups; the folders' new IDs. */
function replayChannelSettings(c: SettingsReplay): Map<number, number> {
  const folders = new Map<number, number>();
  for (const f of [...c.data.channelFolders].sort((a, b) => (a.order ?? 0) - (b.order ?? 0) || a.id - b.id))
    attempt(c, "channel folders", f.name, () => {
      folders.set(f.id, c.store.createChannelFolder(c.ownerId, { name: f.name, description: f.description ?? "" }).id);
    });
  const anonymous = anonymousGroups(c);
  const wireToField = new Map<string, ChannelGroupField>(CHANNEL_GROUP_SETTINGS.map((s) => [s.wire, s.field]));
  for (const s of c.data.streams) {
    const channel = c.channels.get(s.id);
    if (channel === undefined) continue;
    const permissions: Partial<Record<ChannelGroupField, { new: GroupSettingValue }>> = {};
    try {
      for (const [wire, field] of wireToField) {
        const value = (s as Record<string, unknown>)[wire];
        if (typeof value === "number") permissions[field] = { new: groupValue(c, value, anonymous) };
      }
    } catch (error) {
      c.skip(`channel permission groups refused: ${reason(error)}`, s.name);
      continue;
    }
    const folderId = s.folder === null || s.folder === undefined ? undefined : folders.get(s.folder);
    if (Object.keys(permissions).length > 0 || folderId !== undefined)
      attempt(c, "channel settings", s.name, () => {
        c.store.updateChannel(c.ownerId, channel, { permissions, ...(folderId !== undefined ? { folderId } : {}) });
      });
  }
  return folders;
}

/** Archiving last: drafts and scheduled messages to an archived channel were made while it was active. */
function archive(c: SettingsReplay, folders: Map<number, number>): void {
  for (const s of c.data.streams) {
    const channel = c.channels.get(s.id);
    if (s.deactivated === true && channel !== undefined)
      attempt(c, "archived channels", s.name, () =>
        // The export holds the archiving's notice among its messages.
        c.store.archiveChannel(c.ownerId, channel, { notice: false }),
      );
  }
  for (const f of c.data.channelFolders) {
    const folder = folders.get(f.id);
    if (f.is_archived === true && folder !== undefined)
      attempt(c, "archived channel folders", f.name, () =>
        c.store.updateChannelFolder(c.ownerId, folder, { isArchived: true }),
      );
  }
}

/** Each person's own data: alert words, muted users, status, drafts. */
function replayPersonalData(c: SettingsReplay, membersOfRecipient: Map<number, number[]>): void {
  const words = new Map<number, string[]>();
  for (const w of c.data.alertWords) {
    const user = c.users.get(w.user_profile);
    if (user !== undefined) (words.get(user) ?? words.set(user, []).get(user)!).push(w.word);
  }
  for (const [user, list] of words)
    try {
      c.store.addAlertWords(user, list);
      c.count("alert words", list.length);
    } catch (error) {
      c.skip(`alert words refused: ${reason(error)}`, `parley user ${user}`);
    }
  const now = c.store.now();
  for (const m of [...c.data.mutedUsers].sort((a, b) => (a.date_muted ?? 0) - (b.date_muted ?? 0))) {
    const user = c.users.get(m.user_profile);
    const muted = c.users.get(m.muted_user);
    if (user === undefined || muted === undefined) continue;
    if (m.date_muted !== undefined) c.setClock(Math.floor(m.date_muted));
    attempt(c, "muted users", `user ${m.user_profile} mutes ${m.muted_user}`, () => c.store.muteUser(user, muted));
  }
  for (const s of c.data.userStatuses) {
    const user = c.users.get(s.user_profile);
    if (user === undefined || (!s.status_text && !s.emoji_name)) continue;
    if (s.timestamp !== undefined) c.setClock(Math.floor(s.timestamp));
    const realmEmoji = s.reaction_type === "realm_emoji";
    const emojiCode = realmEmoji ? String(c.emoji.get(Number(s.emoji_code)) ?? "") : (s.emoji_code ?? "");
    attempt(c, "user statuses", `user ${s.user_profile}`, () =>
      c.store.updateOwnStatus(user, {
        statusText: s.status_text ?? "",
        emojiName: s.emoji_name ?? "",
        ...(s.emoji_name ? { emojiCode, reactionType: s.reaction_type ?? "unicode_emoji" } : {}),
      }),
    );
  }
  c.setClock(now);
  for (const d of c.data.drafts) {
    const user = c.users.get(d.user_profile);
    if (user === undefined) continue;
    const to =
      d.recipient === null || d.recipient === undefined ? null : addressee(c, user, d.recipient, membersOfRecipient);
    if (d.recipient !== null && d.recipient !== undefined && to === null) {
      c.skip("draft to a recipient that was not imported", `user ${d.user_profile}`);
      continue;
    }
    const type: DraftType = to === null ? "" : to.type === "channel" ? "stream" : "private";
    attempt(c, "drafts", `user ${d.user_profile}`, () =>
      c.store.createDrafts(user, [
        {
          type,
          to: to === null ? [] : to.type === "channel" ? [to.channelId] : to.userIds,
          topic: type === "stream" ? (d.topic ?? "") : "",
          content: c.rewriteContent(d.content),
          ...(d.last_edit_time !== undefined ? { timestamp: d.last_edit_time } : {}),
        },
      ]),
    );
  }
}

/** After the messages, flags, groups and subscriptions, before deactivations. */
export function replayChannelsAndPersonalData(c: SettingsReplay, membersOfRecipient: Map<number, number[]>): void {
  createEmptyChannels(c);
  const folders = replayChannelSettings(c);
  replayPersonalData(c, membersOfRecipient);
  replayScheduledMessages(c, membersOfRecipient);
  // Last but archiving: a send or move the realm's rules would refuse today was allowed then.
  replayRealmSettingColumns(c);
  // Groups first: a channel that is already a default one cannot join a group (it may become one after).
  replayDefaultChannelGroups(c);
  replayDefaultChannels(c);
  replayRealmUserDefaults(c);
  replayPlaygrounds(c);
  replaySnippetsAndViews(c);
  replayPersonalSettings(c);
  replayBotDefaultChannels(c);
  archive(c, folders);
}
