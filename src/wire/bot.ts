/**
 * @module wire/bot
 * Zulip's Bot object (register's realm_bots, realm_bot add events) as of feature
 * level 474: the bot's user ID and its bot-only settings. Its name, email, avatar,
 * type, owner and activity are on its User object (realm_users, realm_user events);
 * its API key only through the key endpoints.
 */
import type { User } from "../engine/index.js";

export function botToWire(bot: User): Record<string, unknown> {
  return {
    user_id: bot.id,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    services: [],
  };
}
