/**
 * @module wire/bot
 * A bot as its managers see it (register's realm_bots, realm_bot add events): Zulip
 * shows a bot's API key to whoever may manage it.
 */
import type { User } from "../engine/index.js";
import { avatarUrl } from "./avatar.js";

export function botToWire(bot: User, clientGravatar: boolean): Record<string, unknown> {
  return {
    user_id: bot.id,
    email: bot.email,
    full_name: bot.fullName,
    bot_type: bot.botType,
    is_active: bot.isActive,
    api_key: bot.apiKey,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    avatar_url: avatarUrl(bot, clientGravatar),
    owner_id: bot.botOwnerId,
    services: [],
  };
}
