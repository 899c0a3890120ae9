/**
 * @module http/endpoints/push/test-notification
 * POST /mobile_push/test_notification — https://zulip.com/api/test-notify (deprecated
 * for the E2EE form): a test notification to the caller's legacy push token `token`
 * ("Device not recognized" if it is not theirs) or to all of them, through the
 * bouncer while the client waits (push/deliver sendLegacyTestNotification).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { sendLegacyTestNotification } from "../../../push/deliver.js";

export default defineEndpoint({
  method: "POST",
  path: "/mobile_push/test_notification",
  auth: "user",
  // Zulip's token limit is 4096 characters; a longer one matches none of the caller's.
  params: { token: p.str({ maxLength: 16_384 }).optional() },
  testing: { notRefs: { token: "the device's own push token, matched among the caller's: it names no object here" } },
  async handler(ctx, input) {
    await sendLegacyTestNotification(
      ctx.store,
      ctx.server.bouncer,
      ctx.user.id,
      input.token ?? null,
      ctx.server.baseUrl,
    );
    return {};
  },
});
