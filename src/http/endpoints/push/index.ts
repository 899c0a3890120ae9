/**
 * @module http/endpoints/push
 * Client devices and E2EE mobile push.
 */
import type { Endpoint } from "../../endpoint.js";
import { registerClientDeviceEndpoint, removeClientDeviceEndpoint } from "./devices.js";
import e2eeTestNotification from "./e2ee-test-notification.js";
import registerPushDevice from "./register-push-device.js";

export const PUSH_ENDPOINTS: readonly Endpoint[] = [
  registerClientDeviceEndpoint,
  removeClientDeviceEndpoint,
  registerPushDevice,
  e2eeTestNotification,
];
