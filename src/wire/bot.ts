/**
 * @module wire/bot
 * Zulip's Bot object (register's realm_bots, realm_bot add and update events) as of
 * feature level 474: the bot's user ID and its bot-only settings. Its name, email,
 * avatar, type, owner and activity are on its User object (realm_users, realm_user
 * events); its API key only through the key endpoints (GET /bots/{id}/api_key).
 */
import type { RealmBotField, Store, User } from "../engine/index.js";

/** The Bot object's fields besides user_id. */
type BotWireField =
  "default_sending_stream" | "default_events_register_stream" | "default_all_public_streams" | "services";

/** The Bot object field each engine bot setting is shown as. */
export const BOT_WIRE_FIELD: Readonly<Record<RealmBotField, BotWireField>> = {
  defaultSendingChannelId: "default_sending_stream",
  defaultEventsRegisterChannelId: "default_events_register_stream",
  defaultAllPublicChannels: "default_all_public_streams",
  service: "services",
};

/** A channel's current name for a bot's default channel setting (Zulip sends names, not IDs). */
function channelName(store: Store, channelId: number | null): string | null {
  if (channelId === null) return null;
  return store.getChannel(channelId)?.name ?? null;
}

/** One field of the Bot object. */
export function botFieldToWire(store: Store, bot: User, field: BotWireField): unknown {
  const config = bot.botConfig;
  switch (field) {
    case "default_sending_stream":
      return channelName(store, config?.defaultSendingChannelId ?? null);
    case "default_events_register_stream":
      return channelName(store, config?.defaultEventsRegisterChannelId ?? null);
    case "default_all_public_streams":
      return config?.defaultAllPublicChannels ?? false;
    case "services": {
      // Zulip lists an outgoing webhook's service; other bots (embedded ones aside, which
      // parley does not offer) have none.
      const service = config?.service;
      return service ? [{ base_url: service.baseUrl, interface: service.interface, token: service.token }] : [];
    }
  }
}

export function botToWire(store: Store, bot: User): Record<string, unknown> {
  return {
    user_id: bot.id,
    default_sending_stream: botFieldToWire(store, bot, "default_sending_stream"),
    default_events_register_stream: botFieldToWire(store, bot, "default_events_register_stream"),
    default_all_public_streams: botFieldToWire(store, bot, "default_all_public_streams"),
    services: botFieldToWire(store, bot, "services"),
  };
}
