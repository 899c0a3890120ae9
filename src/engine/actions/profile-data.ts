/**
 * @module actions/profile-data
 * Users' custom profile field values: Zulip's validate_user_custom_profile_data checks
 * (per field type, messages naming the field) and applying checked values to a user
 * record. A leaf below actions/users and actions/profile-fields, which both write
 * values (profile-fields renders text values first: rendering reaches users.ts).
 */
import { isAdmin } from "../access.js";
import { BadRequestError } from "../errors.js";
import { codePointPrefix, exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import { PROFILE_FIELD_TYPE, type ProfileField, type User } from "../types.js";

/** Zulip's check_short_string and check_long_string limits. */
export const MAX_SHORT_PROFILE_VALUE_LENGTH = 50;
export const MAX_LONG_PROFILE_VALUE_LENGTH = 500;

/** One requested value: a string, or user IDs for a user field; null (PATCH /users/{id} only) removes it. */
export interface ProfileDataItem {
  readonly id: number;
  readonly value: string | readonly number[] | null;
}

export function profileFieldOf(state: StoreState, realmId: number, fieldId: number): ProfileField {
  const field = state.profileFields.get(fieldId);
  if (field === undefined || field.realmId !== realmId)
    throw new BadRequestError(`Field id ${codePointPrefix(String(fieldId), 20)} not found.`);
  return field;
}

/** Zulip's validate_user_custom_profile_data permission rule. */
export function checkMayEdit(actor: User, field: ProfileField): void {
  if (!isAdmin(actor) && !field.editableByUser)
    throw new BadRequestError("You are not allowed to change this field. Contact an administrator to update it.");
}

/** Django's URLValidator, approximated: http(s)/ftp(s), a host with a top-level domain, localhost or an IP. */
const URL_PATTERN =
  /^(?:https?|ftps?):\/\/(?:[^\s:@/]+(?::[^\s@/]*)?@)?(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\]|(?:[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?\.)+[a-z\u00a1-\uffff][a-z0-9\u00a1-\uffff-]{1,62}\.?)(?::\d{1,5})?(?:[/?#]\S*)?$/iu;

export function isUrl(text: string): boolean {
  return text.length <= 2048 && URL_PATTERN.test(text);
}

/** Python's date.fromisoformat(s).isoformat() == s: a real calendar day written YYYY-MM-DD. */
function isIsoDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

function checkUserIds(state: StoreState, realmId: number, value: string | readonly number[]): void {
  if (typeof value === "string") throw new BadRequestError("User IDs is not a list");
  for (const id of value) {
    const user = state.users.get(id);
    if (user === undefined || user.realmId !== realmId) throw new BadRequestError(`Invalid user ID: ${id}`);
  }
  for (const id of value) {
    const user = state.users.get(id)!;
    if (!user.isActive) throw new BadRequestError(`User with ID ${id} is deactivated`);
    if (user.isBot) throw new BadRequestError(`User with ID ${id} is a bot`);
  }
}

/** Zulip's validate_user_custom_profile_field, messages naming the field as Zulip's var_name. */
export function checkProfileValue(state: StoreState, field: ProfileField, value: string | readonly number[]): void {
  const name = field.name;
  if (field.type === PROFILE_FIELD_TYPE.USER) return checkUserIds(state, field.realmId, value);
  if (typeof value !== "string") throw new BadRequestError(`${name} is not a string`);
  switch (field.type) {
    case PROFILE_FIELD_TYPE.SHORT_TEXT:
    case PROFILE_FIELD_TYPE.EXTERNAL_ACCOUNT:
    case PROFILE_FIELD_TYPE.PRONOUNS:
    case PROFILE_FIELD_TYPE.LONG_TEXT: {
      const max =
        field.type === PROFILE_FIELD_TYPE.LONG_TEXT ? MAX_LONG_PROFILE_VALUE_LENGTH : MAX_SHORT_PROFILE_VALUE_LENGTH;
      if (exceedsCodePoints(value, max)) throw new BadRequestError(`${name} is too long (limit: ${max} characters)`);
      return;
    }
    case PROFILE_FIELD_TYPE.DATE:
      if (!isIsoDate(value)) throw new BadRequestError(`${name} is not a date`);
      return;
    case PROFILE_FIELD_TYPE.URL:
      if (!isUrl(value)) throw new BadRequestError(`${name} is not a URL`);
      return;
    case PROFILE_FIELD_TYPE.SELECT: {
      const options = JSON.parse(field.fieldData === "" ? "{}" : field.fieldData) as Record<string, unknown>;
      if (!Object.hasOwn(options, value))
        throw new BadRequestError(`'${codePointPrefix(value, 100)}' is not a valid choice for '${name}'.`);
      return;
    }
    default:
      throw new BadRequestError("Invalid field type.");
  }
}

/** Zulip's CustomProfileField.is_renderable: text values carry a rendered_value. */
export function isRenderable(field: ProfileField): boolean {
  return field.type === PROFILE_FIELD_TYPE.SHORT_TEXT || field.type === PROFILE_FIELD_TYPE.LONG_TEXT;
}

/** A checked value: null removes it; `rendered` is the Markdown rendering of a text field's value. */
export interface CheckedProfileValue {
  readonly field: ProfileField;
  readonly value: string | readonly number[] | null;
  readonly rendered: string | null;
}

/** Sets (or, for null, removes) checked values on `next`, a copy of the user being changed. */
export function applyProfileValues(next: User, items: readonly CheckedProfileValue[]): void {
  const data = { ...next.profileData };
  const rendered = { ...next.profileRendered };
  for (const { field, value, rendered: html } of items) {
    const key = String(field.id);
    delete rendered[key];
    if (value === null) delete data[key];
    else {
      data[key] = typeof value === "string" ? value : [...value];
      if (html !== null) rendered[key] = html;
    }
  }
  next.profileData = data;
  // Records that never held a rendered value keep none (no spurious field change).
  if (next.profileRendered !== undefined || Object.keys(rendered).length > 0) next.profileRendered = rendered;
}
