/**
 * @module http/endpoints/push/legacy-tokens
 * Zulip's legacy push token endpoints, still called by older mobile apps:
 * POST/DELETE /users/me/apns_device_token (https://zulip.com/api/add-apns-token,
 * remove-apns-token) and /users/me/android_gcm_reg_id (add-fcm-token, remove-fcm-token).
 * Human users only; Zulip's token checks ("Empty or invalid length token", "Invalid APNS
 * token": hex), "Invalid app ID" for an APNs app ID. The token is stored, never sent to
 * (the engine's actions/legacy-push-tokens); removing an unknown one is answered as Zulip
 * answers on a server with (success) or without ("Token does not exist") the bouncer.
 */
import type { LegacyTokenKind } from "../../../engine/index.js";
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint, type Endpoint } from "../../endpoint.js";
import type { WorstCase } from "../../endpoint-testing.js";
import { p } from "../../params.js";

/** Zulip's check_app_id (the ApnsAppId parameter type). */
const APP_ID = /^[.a-zA-Z0-9-]+$/;

const notRefs = { token: "the device's own push token, stored as given: it names no object here" };

function longToken(extra: Readonly<Record<string, string>>): WorstCase {
  return {
    label: "a token of 200,000 characters",
    params: () => ({ ...extra, token: "ab".repeat(100_000) }),
    status: 400,
    code: "BAD_REQUEST",
    msg: "Empty or invalid length token",
  };
}

function addEndpoint(path: string, kind: LegacyTokenKind): Endpoint {
  if (kind === "apns")
    return defineEndpoint({
      method: "POST",
      path,
      auth: "user",
      params: { token: p.str(), appid: p.str() },
      testing: { notRefs, worst: { extra: [longToken({ appid: "org.zulip.Zulip" })] } },
      handler(ctx, input) {
        if (!APP_ID.test(input.appid)) throw new BadRequestError("Invalid app ID");
        ctx.store.addLegacyPushToken(ctx.user.id, kind, input.token, input.appid);
        return {};
      },
    });
  return defineEndpoint({
    method: "POST",
    path,
    auth: "user",
    params: { token: p.str() },
    testing: { notRefs, worst: { extra: [longToken({})] } },
    handler(ctx, input) {
      ctx.store.addLegacyPushToken(ctx.user.id, kind, input.token, null);
      return {};
    },
  });
}

function removeEndpoint(path: string, kind: LegacyTokenKind): Endpoint {
  return defineEndpoint({
    method: "DELETE",
    path,
    auth: "user",
    params: { token: p.str() },
    testing: { notRefs, worst: { extra: [longToken({})] } },
    handler(ctx, input) {
      ctx.store.removeLegacyPushToken(ctx.user.id, kind, input.token, ctx.server.bouncer !== null);
      return {};
    },
  });
}

export const LEGACY_PUSH_TOKEN_ENDPOINTS: readonly Endpoint[] = [
  addEndpoint("/users/me/apns_device_token", "apns"),
  removeEndpoint("/users/me/apns_device_token", "apns"),
  addEndpoint("/users/me/android_gcm_reg_id", "gcm"),
  removeEndpoint("/users/me/android_gcm_reg_id", "gcm"),
];
