/**
 * @module wire/profile-field
 * Zulip's custom profile field object (CustomProfileField.as_dict: GET
 * /realm/profile_fields, register's custom_profile_fields, custom_profile_fields events).
 */
import type { ProfileField } from "../engine/index.js";

/** Zulip's custom profile field types (CustomProfileField.ALL_FIELD_TYPES), keyed by name. */
export const CUSTOM_PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: 1, name: "Text (short)" },
  LONG_TEXT: { id: 2, name: "Text (long)" },
  SELECT: { id: 3, name: "List of options" },
  DATE: { id: 4, name: "Date picker" },
  URL: { id: 5, name: "Link" },
  USER: { id: 6, name: "Users" },
  EXTERNAL_ACCOUNT: { id: 7, name: "External account" },
  PRONOUNS: { id: 8, name: "Pronouns" },
};

export function profileFieldToWire(f: ProfileField): Record<string, unknown> {
  return {
    id: f.id,
    name: f.name,
    type: f.type,
    hint: f.hint,
    field_data: f.fieldData,
    order: f.order,
    required: f.required,
    editable_by_user: f.editableByUser,
    use_for_user_matching: f.useForUserMatching,
    // Zulip sends it only when set.
    ...(f.displayInProfileSummary ? { display_in_profile_summary: true } : {}),
  };
}
