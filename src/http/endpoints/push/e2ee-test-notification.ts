/**
 * @module http/endpoints/push/e2ee-test-notification
 * POST /mobile_push/e2ee/test_notification — https://zulip.com/api/e2ee-test-notify:
 * an encrypted test notification to one of the caller's devices or all of them, sent
 * while the client waits, so the bouncer's trouble is the client's answer:
 * NO_ACTIVE_PUSH_DEVICE (400), ADMIN_ACTION_REQUIRED (403), FAILED_TO_CONNECT_BOUNCER
 * and INTERNAL_SERVER_ERROR_ON_BOUNCER (502).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";
import { sendTestNotification } from "../../../push/deliver.js";

export default defineEndpoint({
  method: "POST",
  path: "/mobile_push/e2ee/test_notification",
  auth: "user",
  params: { device_id: ref(p.int(), "device").optional() },
  async handler(ctx, input) {
    await sendTestNotification(ctx.store, ctx.server.bouncer, ctx.user.id, input.device_id ?? null, ctx.server.baseUrl);
    return {};
  },
});
