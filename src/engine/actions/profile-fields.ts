/**
 * @module actions/profile-fields
 * Custom profile fields (Zulip's CustomProfileField): administrators create, change,
 * reorder and delete the realm's fields (/realm/profile_fields); users set and clear
 * their own values (/users/me/profile_data) where the field is editable_by_user.
 * Checks and messages follow Zulip's views/custom_profile_fields.py in its order.
 * Every change to the fields sends the realm's whole list (`custom_profile_fields`);
 * value changes go out as realm_user updates (actions/users' emitUserUpdates).
 */
import { isAdmin } from "../access.js";
import { realmAudience } from "../events/audience.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { exceedsCodePoints } from "../limits.js";
import type { StoreState, WriteContext } from "../state.js";
import { PROFILE_FIELD_TYPE, type ProfileField, type User } from "../types.js";
import { requireActiveUser } from "./lookups.js";
import {
  applyProfileValues,
  checkMayEdit,
  checkProfileValue,
  isRenderable,
  isUrl,
  profileFieldOf,
  type CheckedProfileValue,
  type ProfileDataItem,
} from "./profile-data.js";
import { renderContextFor } from "./render-context.js";
import { emitUserUpdates } from "./users.js";

/** Zulip's CustomProfileField.NAME_MAX_LENGTH, HINT_MAX_LENGTH and MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS. */
export const MAX_PROFILE_FIELD_NAME_LENGTH = 40;
export const MAX_PROFILE_FIELD_HINT_LENGTH = 80;
export const MAX_PROFILE_SUMMARY_FIELDS = 2;

/** Zulip's DEFAULT_EXTERNAL_ACCOUNTS (zerver/lib/external_accounts.py): register's realm_default_external_accounts. */
export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<
  Record<string, { readonly text: string; readonly url_pattern: string; readonly name: string; readonly hint: string }>
> = Object.fromEntries(
  (
    [
      ["behance", "Behance", "https://www.behance.net/%(username)s", "Behance username"],
      ["bitbucket", "Bitbucket", "https://bitbucket.org/%(username)s", "Bitbucket username"],
      ["bluesky", "Bluesky", "https://bsky.app/profile/%(username)s", "Bluesky handle"],
      ["codeberg", "Codeberg", "https://codeberg.org/%(username)s", "Codeberg username"],
      ["discord", "Discord", "", "Discord tag"],
      ["dribbble", "Dribbble", "https://dribbble.com/%(username)s", "Dribbble username"],
      ["facebook", "Facebook", "https://www.facebook.com/%(username)s", "Facebook username"],
      ["github", "GitHub", "https://github.com/%(username)s", "GitHub username"],
      ["gitlab", "GitLab", "https://gitlab.com/%(username)s", "GitLab username"],
      ["instagram", "Instagram", "https://www.instagram.com/%(username)s", "Instagram username"],
      ["linkedin", "LinkedIn", "https://www.linkedin.com/in/%(username)s", "LinkedIn profile name"],
      ["mastodon", "Mastodon", "%(username)s", "Mastodon profile", "The full URL to your profile"],
      ["medium", "Medium", "https://%(username)s.medium.com", "Medium username"],
      ["pinterest", "Pinterest", "https://www.pinterest.com/%(username)s", "Pinterest username"],
      ["reddit", "Reddit", "https://www.reddit.com/user/%(username)s", "Reddit username"],
      ["snapchat", "Snapchat", "https://www.snapchat.com/@%(username)s", "Snapchat username"],
      ["threads", "Threads", "https://www.threads.com/@%(username)s", "Threads username"],
      ["tiktok", "TikTok", "https://www.tiktok.com/@%(username)s", "TikTok username"],
      ["twitch", "Twitch", "https://www.twitch.tv/%(username)s", "Twitch username"],
      ["x", "X", "https://x.com/%(username)s", "X username"],
      ["youtube", "YouTube", "https://www.youtube.com/%(username)s", "YouTube handle"],
    ] as const
  ).map(([subtype, text, url_pattern, name, hint]) => [subtype, { text, url_pattern, name, hint: hint ?? "" }]),
);

/** Zulip's ProfileFieldData: select options ({key: {text, order}}) or an external account's type. */
export type ProfileFieldData = Readonly<Record<string, string | Readonly<Record<string, string>>>>;

export interface ProfileFieldSettings {
  readonly name?: string;
  readonly hint?: string;
  readonly fieldData?: ProfileFieldData;
  readonly displayInProfileSummary?: boolean;
  readonly required?: boolean;
  readonly editableByUser?: boolean;
  readonly useForUserMatching?: boolean;
}

const FIELD_TYPES: ReadonlySet<number> = new Set(Object.values(PROFILE_FIELD_TYPE));

/** The realm's fields in Zulip's order (`order`, then ID). */
export function realmProfileFields(state: StoreState, realmId: number): ProfileField[] {
  return [...state.profileFields.values()]
    .filter((f) => f.realmId === realmId)
    .sort((a, b) => a.order - b.order || a.id - b.id);
}

function requireAdmin(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  return actor;
}

/** Zulip's human_users_only. */
function requireHuman(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (actor.isBot) throw new BadRequestError("This endpoint does not accept bot requests.");
  return actor;
}

/** check_required_string: a string that is not blank. */
function requiredString(value: unknown, name: string): string {
  if (typeof value !== "string") throw new BadRequestError(`${name} is not a string`);
  if (value.trim() === "") throw new BadRequestError(`${name} cannot be blank.`);
  return value;
}

/** check_dict_only: exactly these keys (those in `optional` may be left out). */
function onlyKeys(value: object, required: readonly string[], optional: readonly string[] = []): void {
  for (const key of required)
    if (!Object.hasOwn(value, key)) throw new BadRequestError(`${key} key is missing from field_data`);
  const extra = Object.keys(value).filter((k) => !required.includes(k) && !optional.includes(k));
  if (extra.length > 0) throw new BadRequestError(`Unexpected arguments: ${extra.join(", ")}`);
}

/** Zulip's validate_custom_field_data: select options, or an external account's type. */
function checkFieldData(type: number, data: ProfileFieldData): void {
  if (type === PROFILE_FIELD_TYPE.SELECT) {
    const entries = Object.entries(data);
    if (entries.length < 1) throw new BadRequestError("Field must have at least one choice.");
    const texts = new Set<string>();
    for (const [key, option] of entries) {
      if (key.trim() === "") throw new BadRequestError("'value' cannot be blank.");
      if (typeof option !== "object") throw new BadRequestError("field_data is not a dict");
      onlyKeys(option, ["text", "order"]);
      texts.add(requiredString(option["text"], 'field_data["text"]'));
      requiredString(option["order"], 'field_data["order"]');
    }
    if (texts.size !== entries.length) throw new BadRequestError("Field must not have duplicate choices.");
  } else if (type === PROFILE_FIELD_TYPE.EXTERNAL_ACCOUNT) {
    onlyKeys(data, ["subtype"], ["url_pattern"]);
    const subtype = requiredString(data["subtype"], 'field_data["subtype"]');
    const pattern = data["url_pattern"];
    if (pattern !== undefined) {
      if (typeof pattern !== "string") throw new BadRequestError('field_data["url_pattern"] is not a string');
      if (pattern.split("%(username)s").length !== 2)
        throw new BadRequestError("URL pattern must contain '%(username)s'.");
      if (!isUrl(pattern.replace("%(username)s", "username")))
        throw new BadRequestError('field_data["url_pattern"] is not a URL');
    }
    if (!Object.hasOwn(DEFAULT_EXTERNAL_ACCOUNTS, subtype) && subtype !== "custom")
      throw new BadRequestError("Invalid external account type");
  }
}

function isDefaultExternalAccount(type: number, data: ProfileFieldData): boolean {
  return type === PROFILE_FIELD_TYPE.EXTERNAL_ACCOUNT && data["subtype"] !== "custom";
}

/** Zulip's validate_custom_profile_field, in its order. */
function checkField(type: number, name: string, hint: string, data: ProfileFieldData, inSummary: boolean): void {
  checkFieldData(type, data);
  if (!isDefaultExternalAccount(type, data)) {
    if (name.trim() === "") throw new BadRequestError("Label cannot be blank.");
    if (exceedsCodePoints(hint, MAX_PROFILE_FIELD_HINT_LENGTH))
      throw new BadRequestError(`hint is too long (limit: ${MAX_PROFILE_FIELD_HINT_LENGTH} characters)`);
    if (exceedsCodePoints(name, MAX_PROFILE_FIELD_NAME_LENGTH))
      throw new BadRequestError(`name is too long (limit: ${MAX_PROFILE_FIELD_NAME_LENGTH} characters)`);
  }
  if (!FIELD_TYPES.has(type)) throw new BadRequestError("Invalid field type.");
  if (inSummary && (type === PROFILE_FIELD_TYPE.LONG_TEXT || type === PROFILE_FIELD_TYPE.USER))
    throw new BadRequestError("Field type not supported for display in profile summary.");
}

function checkSummaryLimit(state: StoreState, realmId: number, exceptId: number | null): void {
  const shown = realmProfileFields(state, realmId).filter((f) => f.displayInProfileSummary && f.id !== exceptId);
  if (shown.length >= MAX_PROFILE_SUMMARY_FIELDS)
    throw new BadRequestError(
      `Only ${MAX_PROFILE_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`,
    );
}

function checkNameFree(state: StoreState, realmId: number, name: string, exceptId: number | null): void {
  for (const f of state.profileFields.values())
    if (f.realmId === realmId && f.id !== exceptId && f.name === name)
      throw new BadRequestError("A field with that label already exists.");
}

function emitFields(state: StoreState, ctx: WriteContext, realmId: number, fields: readonly ProfileField[]): void {
  ctx.emit({ type: "custom_profile_fields", realmId, fields }, () => realmAudience(state, realmId));
}

function putField(state: StoreState, ctx: WriteContext, field: ProfileField): void {
  state.tables.profileFields.putSync(field.id, field);
  ctx.afterCommit(() => state.profileFields.set(field.id, field));
}

function dataOf(field: ProfileField): ProfileFieldData {
  return field.fieldData === "" ? {} : (JSON.parse(field.fieldData) as ProfileFieldData);
}

/** POST /realm/profile_fields: a new field at the end of the list (Zulip's order = its ID). */
export function createProfileField(
  state: StoreState,
  actorId: number,
  type: number,
  settings: ProfileFieldSettings,
): ProfileField {
  const actor = requireAdmin(state, actorId);
  const inSummary = settings.displayInProfileSummary ?? false;
  if (inSummary) checkSummaryLimit(state, actor.realmId, null);
  const data = settings.fieldData ?? {};
  let name = (settings.name ?? "").trim();
  let hint = settings.hint ?? "";
  checkField(type, name, hint, data, inSummary);
  let fieldData = "";
  if (isDefaultExternalAccount(type, data)) {
    const account = DEFAULT_EXTERNAL_ACCOUNTS[String(data["subtype"])]!;
    [name, hint, fieldData] = [account.name, account.hint, JSON.stringify({ subtype: data["subtype"] })];
  } else if (type === PROFILE_FIELD_TYPE.SELECT || type === PROFILE_FIELD_TYPE.EXTERNAL_ACCOUNT) {
    fieldData = JSON.stringify(data);
  }
  checkNameFree(state, actor.realmId, name, null);
  return state.write((ctx) => {
    const id = state.allocate("nextProfileFieldId");
    const field: ProfileField = {
      id,
      realmId: actor.realmId,
      name,
      hint,
      type,
      fieldData,
      order: id,
      displayInProfileSummary: inSummary,
      required: settings.required ?? false,
      editableByUser: settings.editableByUser ?? true,
      useForUserMatching: settings.useForUserMatching ?? false,
    };
    putField(state, ctx, field);
    emitFields(state, ctx, actor.realmId, [...realmProfileFields(state, actor.realmId), field]);
    return field;
  });
}

/**
 * PATCH /realm/profile_fields/{id}. A default external account field only changes its
 * summary display (and required/editable flags); new select options drop the values
 * of removed ones, each with its realm_user update, as Zulip does.
 */
export function updateProfileField(
  state: StoreState,
  actorId: number,
  fieldId: number,
  settings: ProfileFieldSettings,
): void {
  const actor = requireAdmin(state, actorId);
  const field = profileFieldOf(state, actor.realmId, fieldId);
  const name = settings.name?.trim();
  if (settings.displayInProfileSummary === true) checkSummaryLimit(state, actor.realmId, field.id);
  const stored = dataOf(field);
  if (
    isDefaultExternalAccount(field.type, stored) &&
    ((name !== undefined && name !== field.name) ||
      (settings.hint !== undefined && settings.hint !== field.hint) ||
      (settings.fieldData !== undefined && JSON.stringify(settings.fieldData) !== JSON.stringify(stored)))
  ) {
    throw new BadRequestError("Default custom field cannot be updated.");
  }
  const inSummary = settings.displayInProfileSummary ?? field.displayInProfileSummary;
  checkField(field.type, name ?? field.name, settings.hint ?? field.hint, settings.fieldData ?? stored, inSummary);
  if (name !== undefined) checkNameFree(state, actor.realmId, name, field.id);
  const next: ProfileField = {
    ...field,
    name: name ?? field.name,
    hint: settings.hint ?? field.hint,
    displayInProfileSummary: inSummary,
    required: settings.required ?? field.required,
    editableByUser: settings.editableByUser ?? field.editableByUser,
    useForUserMatching: settings.useForUserMatching ?? field.useForUserMatching,
  };
  const typed = field.type === PROFILE_FIELD_TYPE.SELECT || field.type === PROFILE_FIELD_TYPE.EXTERNAL_ACCOUNT;
  if (typed && settings.fieldData !== undefined) next.fieldData = JSON.stringify(settings.fieldData);
  const removedOptions =
    field.type === PROFILE_FIELD_TYPE.SELECT && settings.fieldData !== undefined
      ? new Set(Object.keys(stored).filter((k) => !Object.hasOwn(settings.fieldData!, k)))
      : new Set<string>();
  state.write((ctx) => {
    putField(state, ctx, next);
    if (removedOptions.size > 0) {
      for (const userId of state.usersOfRealm(actor.realmId)) {
        const user = state.users.get(userId);
        const value = user?.profileData[String(field.id)];
        if (user === undefined || typeof value !== "string" || !removedOptions.has(value)) continue;
        writeValues(state, ctx, user, [{ field: next, value: null, rendered: null }]);
      }
    }
    emitFields(
      state,
      ctx,
      actor.realmId,
      realmProfileFields(state, actor.realmId).map((f) => (f.id === next.id ? next : f)),
    );
  });
}

/** DELETE /realm/profile_fields/{id}: the field and every user's value for it (no realm_user events, as Zulip). */
export function deleteProfileField(state: StoreState, actorId: number, fieldId: number): void {
  const actor = requireAdmin(state, actorId);
  const field = profileFieldOf(state, actor.realmId, fieldId);
  const key = String(field.id);
  state.write((ctx) => {
    state.tables.profileFields.removeSync(field.id);
    ctx.afterCommit(() => state.profileFields.delete(field.id));
    for (const userId of state.usersOfRealm(actor.realmId)) {
      const user = state.users.get(userId);
      if (user === undefined || !Object.hasOwn(user.profileData, key)) continue;
      const next: User = { ...user };
      applyProfileValues(next, [{ field, value: null, rendered: null }]);
      state.tables.users.putSync(next.id, next);
      ctx.afterCommit(() => state.indexUser(next));
      ctx.changed({ kind: "user", id: next.id, fields: ["profileData", "profileRendered"] });
    }
    emitFields(
      state,
      ctx,
      actor.realmId,
      realmProfileFields(state, actor.realmId).filter((f) => f.id !== field.id),
    );
  });
}

/** PATCH /realm/profile_fields: every field of the realm must be in `order` (extra IDs are ignored, as Zulip). */
export function reorderProfileFields(state: StoreState, actorId: number, order: readonly number[]): void {
  const actor = requireAdmin(state, actorId);
  const position = new Map<number, number>();
  order.forEach((id, index) => position.set(id, index));
  const fields = realmProfileFields(state, actor.realmId);
  if (fields.some((f) => !position.has(f.id))) throw new BadRequestError("Invalid order mapping.");
  state.write((ctx) => {
    const next = fields.map((f) => ({ ...f, order: position.get(f.id)! }));
    for (const f of next) putField(state, ctx, f);
    emitFields(
      state,
      ctx,
      actor.realmId,
      next.sort((a, b) => a.order - b.order || a.id - b.id),
    );
  });
}

/** A value as stored: text fields rendered as Markdown with the user's realm (Zulip's render_stream_description). */
function checkedValue(
  state: StoreState,
  user: User,
  field: ProfileField,
  value: string | readonly number[] | null,
): CheckedProfileValue {
  const renders = value !== null && typeof value === "string" && isRenderable(field);
  const rendered = !renders ? null : value === "" ? "" : state.renderer(value, renderContextFor(state, user)).html;
  return { field, value, rendered };
}

/**
 * PATCH /users/{id} profile_data, checked for actions/users' updateUser (Zulip's
 * update_user_backend: an empty value, null, "" or [], removes the field's value). An
 * actor who may not change the target gets nothing here: updateUser refuses them.
 */
export function checkProfileDataOf(
  state: StoreState,
  actorId: number,
  targetId: number,
  items: readonly ProfileDataItem[],
): CheckedProfileValue[] {
  const actor = requireActiveUser(state, actorId);
  const target = state.users.get(targetId);
  if (target === undefined || target.realmId !== actor.realmId || !isAdmin(actor)) return [];
  return items.map((item) => {
    const field = profileFieldOf(state, actor.realmId, item.id);
    const empty = item.value === null || item.value.length === 0;
    if (!empty) checkProfileValue(state, field, item.value!);
    return checkedValue(state, target, field, empty ? null : item.value);
  });
}

/** Stores a user's changed values and sends a realm_user update per changed field. */
function writeValues(state: StoreState, ctx: WriteContext, user: User, items: readonly CheckedProfileValue[]): void {
  const next: User = { ...user };
  applyProfileValues(next, items);
  state.tables.users.putSync(next.id, next);
  ctx.afterCommit(() => state.indexUser(next));
  emitUserUpdates(state, ctx, user, next);
}

/**
 * PATCH /users/me/profile_data (human users): every item checked first (the field, who
 * may edit it, the value), then stored in one write; unchanged values send nothing.
 */
export function updateOwnProfileData(state: StoreState, actorId: number, items: readonly ProfileDataItem[]): void {
  const actor = requireHuman(state, actorId);
  const checked = items.map((item) => {
    const field = profileFieldOf(state, actor.realmId, item.id);
    checkMayEdit(actor, field);
    if (item.value === null) throw new BadRequestError("data is not a list of id/value objects");
    checkProfileValue(state, field, item.value);
    return checkedValue(state, actor, field, item.value);
  });
  if (checked.length === 0) return;
  state.write((ctx) => writeValues(state, ctx, actor, checked));
}

/** DELETE /users/me/profile_data: the values of these fields (a field without one is skipped, as Zulip). */
export function removeOwnProfileData(state: StoreState, actorId: number, fieldIds: readonly number[]): void {
  const actor = requireHuman(state, actorId);
  const fields = fieldIds.map((id) => {
    const field = profileFieldOf(state, actor.realmId, id);
    checkMayEdit(actor, field);
    return field;
  });
  const present = fields.filter((f) => Object.hasOwn(actor.profileData, String(f.id)));
  if (present.length === 0) return;
  state.write((ctx) =>
    writeValues(
      state,
      ctx,
      actor,
      present.map((field) => ({ field, value: null, rendered: null })),
    ),
  );
}
