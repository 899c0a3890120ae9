/**
 * @module http/endpoints/server/server-settings
 * GET /server_settings (no authentication): what a client needs before logging in.
 * Login: email and password (POST /fetch_api_key) and, where JWT_AUTH_KEYS has the
 * realm, JWT (which Zulip does not list here either). No external auth methods.
 */
import { defineEndpoint } from "../../endpoint.js";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../../../wire/version.js";

export default defineEndpoint({
  method: "GET",
  path: "/server_settings",
  auth: "none",
  params: {},
  // Takes no parameters and needs no login: no reason to read more than a little.
  maxBodyBytes: 16 * 1024,
  handler(ctx) {
    const realm = ctx.realm;
    return {
      authentication_methods: {
        password: true,
        dev: false,
        email: true,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        "openid connect": false,
      },
      external_authentication_methods: [],
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: ZULIP_MERGE_BASE,
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: true,
      require_email_format_usernames: true,
      realm_uri: ctx.server.baseUrl,
      realm_url: ctx.server.baseUrl,
      ...(realm
        ? {
            realm_name: realm.name,
            realm_icon: "",
            realm_description: "",
            realm_web_public_access_enabled: realm.enableSpectatorAccess,
          }
        : {}),
    };
  },
});
