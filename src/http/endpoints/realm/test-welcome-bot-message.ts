/**
 * @module http/endpoints/realm/test-welcome-bot-message
 * POST /realm/test_welcome_bot_custom_message — https://zulip.com/api/test-welcome-bot-custom-message
 * Administrators: the Welcome Bot sends the caller, as a direct message, the custom
 * welcome text new users would get with their invitation; answers its message_id.
 */
import { MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/realm/test_welcome_bot_custom_message",
  auth: "user",
  params: { welcome_message_custom_text: p.str({ maxLength: MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH }) },
  handler(ctx, input) {
    const { id } = ctx.store.sendTestWelcomeBotCustomMessage(ctx.user.id, input.welcome_message_custom_text);
    return { message_id: id };
  },
});
