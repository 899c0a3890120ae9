/**
 * @module export/zulip-bot-tables
 * What a bot is beyond its account, as Zulip's export writes it: the default channels
 * on its zerver_userprofile row, its outgoing webhook (zerver_service: name, base_url,
 * interface, token), its configuration (zerver_botconfigdata) and its key-value storage
 * (zerver_botstoragedata), each key/value row with the bot as bot_profile. Zulip exports
 * these tables in every export type; so does this. The service token is a secret the
 * bot's server checks: it goes in as Zulip's export carries it, so the imported bot
 * keeps working with the same server.
 */
import { botConfigOf } from "../actions/bots.js";
import type { StoreState } from "../state.js";
import type { User } from "../types.js";

type Row = Record<string, unknown>;

/** A bot's columns of zerver_userprofile (a person's are Zulip's defaults: no channels). */
export function botProfileColumns(user: User): Row {
  const config = user.isBot ? botConfigOf(user) : null;
  return {
    default_sending_stream: config?.defaultSendingChannelId ?? null,
    default_events_register_stream: config?.defaultEventsRegisterChannelId ?? null,
    default_all_public_streams: config?.defaultAllPublicChannels ?? false,
  };
}

/** zerver_service, zerver_botconfigdata and zerver_botstoragedata of the realm's bots (`userIds`, ascending). */
export function botTables(state: StoreState, userIds: readonly number[]): Record<string, Row[]> {
  const services: Row[] = [];
  const configData: Row[] = [];
  const storage: Row[] = [];
  for (const id of userIds) {
    const bot = state.users.get(id);
    if (bot === undefined || !bot.isBot) continue;
    const config = botConfigOf(bot);
    if (config.service !== null)
      services.push({
        id: services.length + 1,
        user_profile: bot.id,
        name: config.service.name,
        base_url: config.service.baseUrl,
        interface: config.service.interface,
        token: config.service.token,
      });
    for (const [key, value] of Object.entries(config.configData))
      configData.push({ id: configData.length + 1, bot_profile: bot.id, key, value });
    for (const { key, value } of state.tables.botStorage.getRange({ start: [bot.id], end: [bot.id + 1] }))
      storage.push({ id: storage.length + 1, bot_profile: bot.id, key: key[1], value });
  }
  return { zerver_service: services, zerver_botconfigdata: configData, zerver_botstoragedata: storage };
}
