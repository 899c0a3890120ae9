/**
 * @module actions/realm-emoji
 * Custom emoji (POST/DELETE /realm/emoji/{name}), with Zulip's rules and its order of
 * checks (zerver/views/realm_emoji.py, zerver/lib/emoji.py):
 * - guests never add one; others need the realm's can_add_custom_emoji_group
 *   (role:members by default);
 * - names: a-z, 0-9, `-`, `_` (spaces count as `_`), ending in a letter or digit;
 *   an active custom emoji's name is taken; only administrators may shadow a
 *   built-in unicode name;
 * - removing deactivates: the author or an administrator may; messages and reactions
 *   keep showing it, and the name is free again.
 * The image itself is the HTTP layer's (decoded and stored before addRealmEmoji
 * records it), so checkAddRealmEmoji runs the same checks first, before any work.
 */
import { isAdmin, isAllowedBy } from "../access.js";
import { BadRequestError, NotFoundError, PermissionDeniedError } from "../errors.js";
import { realmAudience } from "../events/audience.js";
import type { StoreState } from "../state.js";
import { ROLE, type GroupSettingValue, type RealmEmoji, type User } from "../types.js";
import { systemGroupId } from "./realms.js";
import { requireActiveUser } from "./users.js";
import { unicodeEmojiCode } from "../../emoji/unicode.js";

/** The realm's custom emoji (deactivated ones too), by ID. */
export function realmEmojiOf(state: StoreState, realmId: number): RealmEmoji[] {
  return [...state.realmEmoji.values()].filter((e) => e.realmId === realmId).sort((a, b) => a.id - b.id);
}

/** The realm's active custom emoji of this name. */
export function activeRealmEmoji(state: StoreState, realmId: number, name: string): RealmEmoji | undefined {
  for (const emoji of state.realmEmoji.values())
    if (emoji.realmId === realmId && !emoji.deactivated && emoji.name === name) return emoji;
  return undefined;
}

/** The realm's can_add_custom_emoji_group (Zulip's default: role:members). */
export function canAddCustomEmojiGroup(state: StoreState, realmId: number): GroupSettingValue {
  return state.realms.get(realmId)?.canAddCustomEmojiGroup ?? systemGroupId(state, realmId, "role:members");
}

/** Zulip's upload_emoji name handling: trimmed, spaces to `_`, then check_valid_emoji_name. */
export function normalizeEmojiName(raw: string): string {
  const name = raw.trim().replaceAll(" ", "_");
  if (name === "") throw new BadRequestError("Emoji name is missing");
  if (/^[0-9a-z\-_]+$/.test(name)) {
    if (/[-_]$/.test(name)) throw new BadRequestError("Emoji names must end with either a letter or digit.");
    return name;
  }
  throw new BadRequestError(
    "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
  );
}

/**
 * Every check of Zulip's upload_emoji that does not need the image, in its order;
 * returns the normalized name. `fileCount`: how many files the request carried.
 */
export function checkAddRealmEmoji(state: StoreState, actorId: number, rawName: string, fileCount: number): string {
  const actor = requireActiveUser(state, actorId);
  if (actor.role === ROLE.GUEST) throw new BadRequestError("Not allowed for guest users");
  const name = normalizeEmojiName(rawName);
  if (!isAllowedBy(state, canAddCustomEmojiGroup(state, actor.realmId), actor))
    throw new BadRequestError("Insufficient permission");
  if (activeRealmEmoji(state, actor.realmId, name))
    throw new BadRequestError("A custom emoji with this name already exists.");
  if (fileCount !== 1) throw new BadRequestError("You must upload exactly one file.");
  if (unicodeEmojiCode(name) !== undefined && !isAdmin(actor))
    throw new BadRequestError("Only administrators can override default emoji.");
  return name;
}

export interface AddRealmEmojiInput {
  readonly name: string;
  /** The stored image's file name (see RealmEmoji.fileName). */
  readonly fileName: string;
  readonly isAnimated: boolean;
}

/** Records a custom emoji whose image is already stored; the checks run again (the image work was async). */
export function addRealmEmoji(state: StoreState, actorId: number, input: AddRealmEmojiInput): RealmEmoji {
  const name = checkAddRealmEmoji(state, actorId, input.name, 1);
  if (!/^[0-9a-f]{16}\.(png|gif|jpeg|webp)$/.test(input.fileName)) throw new BadRequestError("Invalid emoji file name");
  const actor = requireActiveUser(state, actorId);
  return state.write((ctx) => {
    const emoji: RealmEmoji = {
      id: state.allocate("nextRealmEmojiId"),
      realmId: actor.realmId,
      name,
      authorId: actor.id,
      fileName: input.fileName,
      isAnimated: input.isAnimated,
      deactivated: false,
      dateCreated: state.now(),
    };
    state.tables.realmEmoji.putSync(emoji.id, emoji);
    ctx.afterCommit(() => state.realmEmoji.set(emoji.id, emoji));
    const all = [...realmEmojiOf(state, actor.realmId), emoji];
    ctx.emit({ type: "realm_emoji", op: "add", realmId: actor.realmId, emoji, all }, () =>
      realmAudience(state, actor.realmId),
    );
    return emoji;
  });
}

/** Zulip's DELETE /realm/emoji/{name}: deactivates the active emoji of that name. */
export function removeRealmEmoji(state: StoreState, actorId: number, name: string): void {
  const actor = requireActiveUser(state, actorId);
  const emoji = activeRealmEmoji(state, actor.realmId, name);
  if (!emoji) throw new NotFoundError(`Emoji '${name}' does not exist`);
  if (!isAdmin(actor) && emoji.authorId !== actor.id)
    throw new BadRequestError("Must be an organization administrator or emoji author");
  const next: RealmEmoji = { ...emoji, deactivated: true };
  state.write((ctx) => {
    state.tables.realmEmoji.putSync(next.id, next);
    ctx.afterCommit(() => state.realmEmoji.set(next.id, next));
    const all = realmEmojiOf(state, actor.realmId).map((e) => (e.id === next.id ? next : e));
    ctx.emit({ type: "realm_emoji", op: "update_one", realmId: actor.realmId, emoji: next, all }, () =>
      realmAudience(state, actor.realmId),
    );
  });
}

/**
 * Sets the realm's can_add_custom_emoji_group (administrators; a group of the realm,
 * or users and groups of the realm). parley has no PATCH /realm yet: this is the
 * engine's way in (embedders, tests), and sends no realm update event.
 */
export function setCanAddCustomEmojiGroup(state: StoreState, actorId: number, value: GroupSettingValue): void {
  const actor: User = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  const groupIds = typeof value === "number" ? [value] : value.directSubgroups;
  const userIds = typeof value === "number" ? [] : value.directMembers;
  for (const id of groupIds)
    if (state.groups.get(id)?.realmId !== actor.realmId) throw new BadRequestError("Invalid user group");
  for (const id of userIds)
    if (state.users.get(id)?.realmId !== actor.realmId) throw new BadRequestError("Invalid user ID");
  const realm = state.realms.get(actor.realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  const next = { ...realm, canAddCustomEmojiGroup: value };
  state.write((ctx) => {
    state.tables.realms.putSync(realm.id, next);
    ctx.afterCommit(() => state.indexRealm(next));
    ctx.changed({ kind: "realm", id: realm.id, fields: ["canAddCustomEmojiGroup"] });
  });
}
