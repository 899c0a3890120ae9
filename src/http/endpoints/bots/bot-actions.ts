/**
 * @module http/endpoints/bots/bot-actions
 * DELETE /bots/{bot_id} (deactivates it; Zulip's deactivate_bot_backend),
 * GET /bots/{bot_id}/api_key — https://zulip.com/api/get-bot-api-key (feature level 463),
 * POST /bots/{bot_id}/api_key/regenerate — https://zulip.com/api/regenerate-bot-api-key:
 * the bot's owner or an administrator (actions/bots, actions/user-lifecycle). A new
 * key is answered once and the old one is refused from the next request on; no event
 * (feature level 474).
 */
import { defineEndpoint } from "../../endpoint.js";
import { botIdParam } from "./params.js";

export const deactivateBot = defineEndpoint({
  method: "DELETE",
  path: "/bots/:bot_id",
  pathRefs: { bot_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.deactivateBot(ctx.user.id, botIdParam(ctx.pathParams));
    return {};
  },
});

export const getBotApiKey = defineEndpoint({
  method: "GET",
  path: "/bots/:bot_id/api_key",
  pathRefs: { bot_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    return { api_key: ctx.store.botApiKey(ctx.user.id, botIdParam(ctx.pathParams)) };
  },
});

export const regenerateBotApiKey = defineEndpoint({
  method: "POST",
  path: "/bots/:bot_id/api_key/regenerate",
  pathRefs: { bot_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    return { api_key: ctx.store.regenerateBotApiKey(ctx.user.id, botIdParam(ctx.pathParams)) };
  },
});
