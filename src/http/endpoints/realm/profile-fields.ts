/**
 * @module http/endpoints/realm/profile-fields
 * Custom profile fields — https://zulip.com/api/get-custom-profile-fields and siblings:
 * GET /realm/profile_fields (everyone), POST /realm/profile_fields, PATCH (reorder),
 * PATCH and DELETE /realm/profile_fields/{field_id} (administrators). Zulip's checks
 * and messages live in the engine (actions/profile-fields.ts).
 */
import { z } from "zod";
import { BadRequestError, type ProfileFieldSettings } from "../../../engine/index.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { profileFieldToWire } from "../../../wire/profile-field.js";

/** Fields one reorder names at most: far above any realm's field count. */
const MAX_FIELDS_IN_ORDER = 1000;

/** Zulip's ProfileFieldData: {key: string or {text, order}}; the engine checks the shape per field type. */
const fieldData = () =>
  p.json(z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())])), { maxItems: 1000 });

// Names and hints are bounded by the engine (40 and 80 characters after Zulip's strip).
const settingsParams = {
  name: p.str({ maxLength: 1000 }).optional(),
  hint: p.str({ maxLength: 1000 }).optional(),
  field_data: fieldData().optional(),
  display_in_profile_summary: p.bool().optional(),
  required: p.bool().optional(),
  editable_by_user: p.bool().optional(),
  use_for_user_matching: p.bool().optional(),
};

function settingsOf(input: {
  name?: string | undefined;
  hint?: string | undefined;
  field_data?: Readonly<Record<string, string | Readonly<Record<string, string>>>> | undefined;
  display_in_profile_summary?: boolean | undefined;
  required?: boolean | undefined;
  editable_by_user?: boolean | undefined;
  use_for_user_matching?: boolean | undefined;
}): ProfileFieldSettings {
  return {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.hint !== undefined ? { hint: input.hint } : {}),
    ...(input.field_data !== undefined ? { fieldData: input.field_data } : {}),
    ...(input.display_in_profile_summary !== undefined
      ? { displayInProfileSummary: input.display_in_profile_summary }
      : {}),
    ...(input.required !== undefined ? { required: input.required } : {}),
    ...(input.editable_by_user !== undefined ? { editableByUser: input.editable_by_user } : {}),
    ...(input.use_for_user_matching !== undefined ? { useForUserMatching: input.use_for_user_matching } : {}),
  };
}

function fieldIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["field_id"] ?? "";
  // Zulip's path converter takes digits only; anything else names no field.
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError(`Field id ${raw.slice(0, 20)} not found.`);
  return Number(raw);
}

export const listProfileFields = defineEndpoint({
  method: "GET",
  path: "/realm/profile_fields",
  auth: "user",
  params: {},
  handler(ctx) {
    return { custom_fields: ctx.store.profileFields(ctx.user.id).map(profileFieldToWire) };
  },
});

export const createProfileField = defineEndpoint({
  method: "POST",
  path: "/realm/profile_fields",
  auth: "user",
  params: { field_type: p.int(), ...settingsParams },
  testing: { notRefs: { field_type: "one of Zulip's eight field type numbers, not an object" } },
  handler(ctx, input) {
    const field = ctx.store.createProfileField(ctx.user.id, input.field_type, settingsOf(input));
    return { id: field.id };
  },
});

export const reorderProfileFields = defineEndpoint({
  method: "PATCH",
  path: "/realm/profile_fields",
  auth: "user",
  params: { order: ref(p.json(j.intList(), { maxItems: MAX_FIELDS_IN_ORDER }), "profileField") },
  testing: {
    probes: { order: [{ names: "profileField", label: "ID list", encode: (id) => JSON.stringify([id]) }] },
  },
  handler(ctx, input) {
    ctx.store.reorderProfileFields(ctx.user.id, input.order);
    return {};
  },
});

export const updateProfileField = defineEndpoint({
  method: "PATCH",
  path: "/realm/profile_fields/:field_id",
  pathRefs: { field_id: "profileField" },
  auth: "user",
  params: settingsParams,
  testing: { sweepBases: [{ params: { required: "true" } }] },
  handler(ctx, input) {
    ctx.store.updateProfileField(ctx.user.id, fieldIdParam(ctx), settingsOf(input));
    return {};
  },
});

export const deleteProfileField = defineEndpoint({
  method: "DELETE",
  path: "/realm/profile_fields/:field_id",
  pathRefs: { field_id: "profileField" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.deleteProfileField(ctx.user.id, fieldIdParam(ctx));
    return {};
  },
});
