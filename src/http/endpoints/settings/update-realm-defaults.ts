/**
 * @module http/endpoints/settings/update-realm-defaults
 * PATCH /realm/user_settings_defaults — https://zulip.com/api/update-realm-user-settings-defaults
 * Administrators set what users created later start with; existing users keep theirs.
 */
import { REALM_DEFAULT_SETTING_NAMES } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { namedSettings, SETTING_NOT_REFS, settingParams } from "./update-settings.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/realm/user_settings_defaults",
  auth: "user",
  params: settingParams(REALM_DEFAULT_SETTING_NAMES),
  testing: { notRefs: SETTING_NOT_REFS },
  handler(ctx, input) {
    ctx.store.updateRealmSettingDefaults(
      ctx.user.id,
      namedSettings(REALM_DEFAULT_SETTING_NAMES, input as Readonly<Record<string, unknown>>),
    );
    return {};
  },
});
