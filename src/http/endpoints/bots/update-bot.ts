/**
 * @module http/endpoints/bots/update-bot
 * PATCH /bots/{bot_id} (Zulip's patch_bot_backend; not in its OpenAPI description): a
 * bot's name, role, owner, default channels (a name, or "" for none),
 * default_all_public_streams, an outgoing webhook's URL and interface, and its
 * config_data. Its owner or an administrator; the rules are the engine's
 * (actions/bots). Answers Zulip's summary of the bot.
 *
 * Deviation: no avatar upload (bots get Gravatars).
 */
import { z } from "zod";
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";
import { avatarUrl } from "../../../wire/avatar.js";
import { botFieldToWire } from "../../../wire/bot.js";
import { botIdParam, CHANNEL_NAME_PROBES, channelNameParam, checkUrl, jsonString } from "./params.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/bots/:bot_id",
  pathRefs: { bot_id: "user" },
  auth: "user",
  params: {
    full_name: p.str().optional(),
    role: p.int().optional(),
    bot_owner_id: ref(p.int(), "user").optional(),
    config_data: p.json(z.record(z.string(), z.string()), { maxItems: 100 }).optional(),
    service_payload_url: jsonString().optional(),
    service_interface: p.int().default(1),
    default_sending_stream: channelNameParam().optional(),
    default_events_register_stream: channelNameParam().optional(),
    default_all_public_streams: p.bool().optional(),
  },
  testing: {
    probes: { default_sending_stream: CHANNEL_NAME_PROBES, default_events_register_stream: CHANNEL_NAME_PROBES },
    sweepBases: [
      { params: {}, for: ["bot_id"] },
      {
        params: { bot_id: (f) => String(f.ownBot) },
        for: ["bot_owner_id", "default_sending_stream", "default_events_register_stream"],
      },
    ],
  },
  handler(ctx, input) {
    const payloadUrl =
      input.service_payload_url === undefined ? undefined : checkUrl(input.service_payload_url, "service_payload_url");
    const bot = ctx.store.updateBot(ctx.user.id, botIdParam(ctx.pathParams), {
      ...(input.full_name !== undefined ? { fullName: input.full_name } : {}),
      ...(input.role !== undefined ? { role: input.role } : {}),
      ...(input.bot_owner_id !== undefined ? { botOwnerId: input.bot_owner_id } : {}),
      ...(input.config_data !== undefined ? { configData: input.config_data } : {}),
      ...(payloadUrl !== undefined ? { servicePayloadUrl: payloadUrl, serviceInterface: input.service_interface } : {}),
      ...(input.default_sending_stream !== undefined ? { defaultSendingChannel: input.default_sending_stream } : {}),
      ...(input.default_events_register_stream !== undefined
        ? { defaultEventsRegisterChannel: input.default_events_register_stream }
        : {}),
      ...(input.default_all_public_streams !== undefined
        ? { defaultAllPublicChannels: input.default_all_public_streams }
        : {}),
    });
    const owner = bot.botOwnerId === null ? undefined : ctx.store.findUser(bot.botOwnerId);
    return {
      full_name: bot.fullName,
      avatar_url: avatarUrl(bot, false),
      service_interface: input.service_interface,
      service_payload_url: payloadUrl ?? null,
      config_data: input.config_data ?? null,
      default_sending_stream: botFieldToWire(ctx.store, bot, "default_sending_stream"),
      default_events_register_stream: botFieldToWire(ctx.store, bot, "default_events_register_stream"),
      default_all_public_streams: botFieldToWire(ctx.store, bot, "default_all_public_streams"),
      ...(owner !== undefined ? { bot_owner: owner.email } : {}),
    };
  },
});
