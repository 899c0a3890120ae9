/**
 * @module http/endpoints/push
 * Client devices and E2EE mobile push; Zulip's legacy push token endpoints (stored; only their
 * test notification goes to the bouncer).
 */
import type { Endpoint } from "../../endpoint.js";
import { registerClientDeviceEndpoint, removeClientDeviceEndpoint } from "./devices.js";
import e2eeTestNotification from "./e2ee-test-notification.js";
import legacyTestNotification from "./test-notification.js";
import registerPushDevice from "./register-push-device.js";
import { LEGACY_PUSH_TOKEN_ENDPOINTS } from "./legacy-tokens.js";

export const PUSH_ENDPOINTS: readonly Endpoint[] = [
  registerClientDeviceEndpoint,
  removeClientDeviceEndpoint,
  registerPushDevice,
  e2eeTestNotification,
  legacyTestNotification,
  ...LEGACY_PUSH_TOKEN_ENDPOINTS,
];
