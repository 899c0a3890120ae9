/**
 * @module http/endpoints/push/devices
 * Client devices — https://zulip.com/api/register-client-device and
 * https://zulip.com/api/remove-client-device (feature levels 468 and 470): a logged-in
 * client gets a device ID, on which it can then configure E2EE push
 * (POST /mobile_push/register), and removes it when it logs out.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export const registerClientDeviceEndpoint = defineEndpoint({
  method: "POST",
  path: "/register_client_device",
  auth: "user",
  params: {},
  handler(ctx) {
    return { device_id: ctx.store.registerClientDevice(ctx.user.id) };
  },
});

export const removeClientDeviceEndpoint = defineEndpoint({
  method: "POST",
  path: "/remove_client_device",
  auth: "user",
  params: { device_id: ref(p.int(), "device") },
  handler(ctx, input) {
    ctx.store.removeClientDevice(ctx.user.id, input.device_id);
    return {};
  },
});
