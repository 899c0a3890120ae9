/**
 * @module http/endpoints/bots/create-bot
 * POST /bots (Zulip's add_bot_backend; not in its OpenAPI description): a generic (1),
 * incoming webhook (2) or outgoing webhook (3) bot owned by the caller, at
 * `<short_name>-bot@<the realm's bot domain>` (register's realm_bot_domain). Who may
 * create which bot, and every check, are the engine's (actions/bots). Answers the
 * bot's ID, API key, avatar URL and default channel settings.
 *
 * Deviations: no avatar upload (bots get Gravatars); an incoming webhook bot may name
 * only the integrations served here (`service_name`: src/http/webhooks/registry); at
 * most 100 `config_data` keys (Zulip: no limit).
 */
import { z } from "zod";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { avatarUrl } from "../../../wire/avatar.js";
import { botFieldToWire } from "../../../wire/bot.js";
import { WEBHOOK_INTEGRATIONS } from "../../webhooks/registry.js";
import { CHANNEL_NAME_PROBES, channelNameParam, checkUrl, jsonString } from "./params.js";

export default defineEndpoint({
  method: "POST",
  path: "/bots",
  auth: "user",
  params: {
    full_name: p.str(),
    short_name: p.str(),
    bot_type: p.int().optional(),
    payload_url: jsonString().optional(),
    service_name: p.str().optional(),
    config_data: p.json(z.record(z.string(), z.string()), { maxItems: 100 }).optional(),
    interface_type: p.int().optional(),
    default_sending_stream: channelNameParam().optional(),
    default_events_register_stream: channelNameParam().optional(),
    default_all_public_streams: p.bool().optional(),
  },
  testing: {
    probes: { default_sending_stream: CHANNEL_NAME_PROBES, default_events_register_stream: CHANNEL_NAME_PROBES },
    sweepBases: [{ params: { full_name: (f) => f.fresh("Bot"), short_name: (f) => f.fresh("bot") } }],
  },
  handler(ctx, input) {
    const bot = ctx.store.createBot(ctx.user.id, {
      fullName: input.full_name,
      shortName: input.short_name,
      botDomain: new URL(ctx.server.baseUrl).hostname,
      ...(input.bot_type !== undefined ? { botType: input.bot_type } : {}),
      ...(input.payload_url !== undefined ? { payloadUrl: checkUrl(input.payload_url, "payload_url") } : {}),
      ...(input.service_name !== undefined ? { serviceName: input.service_name } : {}),
      integrations: WEBHOOK_INTEGRATIONS.map((integration) => integration.name),
      ...(input.config_data !== undefined ? { configData: input.config_data } : {}),
      ...(input.interface_type !== undefined ? { interfaceType: input.interface_type } : {}),
      ...(input.default_sending_stream !== undefined ? { defaultSendingChannel: input.default_sending_stream } : {}),
      ...(input.default_events_register_stream !== undefined
        ? { defaultEventsRegisterChannel: input.default_events_register_stream }
        : {}),
      ...(input.default_all_public_streams !== undefined
        ? { defaultAllPublicChannels: input.default_all_public_streams }
        : {}),
    });
    return {
      user_id: bot.id,
      api_key: bot.apiKey,
      avatar_url: avatarUrl(bot, false),
      default_sending_stream: botFieldToWire(ctx.store, bot, "default_sending_stream"),
      default_events_register_stream: botFieldToWire(ctx.store, bot, "default_events_register_stream"),
      default_all_public_streams: botFieldToWire(ctx.store, bot, "default_all_public_streams"),
    };
  },
});
