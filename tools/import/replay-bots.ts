/**
 * @module import/replay-bots
 * Bots beyond their accounts: the outgoing webhook (zerver_service, with its token, so
 * the bot's server still recognises the calls) and the configuration
 * (zerver_botconfigdata) go in as the bot is created; its default channels
 * (zerver_userprofile's default_sending_stream, default_events_register_stream and
 * default_all_public_streams) once the channels exist, through PATCH /bots' action as
 * the owner; its storage (zerver_botstoragedata) as the bot itself, through
 * PUT /bot_storage's, before deactivations.
 */
import type { BotConfig } from "../../src/engine/index.js";
import { attempt, type SettingsReplay } from "./settings-replay.js";
import type { ZulipExport, ZulipUser } from "./zulip-export.js";

/** A bot's service and configuration data, set at creation (default channels come later). */
export function botConfigAtCreation(data: ZulipExport, bot: ZulipUser): BotConfig {
  const service = data.services.find((s) => s.user_profile === bot.id);
  const configData: Record<string, string> = {};
  for (const row of data.botConfigData) if (row.bot_profile === bot.id) configData[row.key] = row.value;
  return {
    defaultSendingChannelId: null,
    defaultEventsRegisterChannelId: null,
    defaultAllPublicChannels: (bot as Record<string, unknown>).default_all_public_streams === true,
    service:
      service === undefined
        ? null
        : {
            name: service.name,
            baseUrl: service.base_url,
            // Zulip's Service.GENERIC (1) unless it says SLACK (2).
            interface: service.interface === 2 ? 2 : 1,
            token: service.token,
          },
    configData,
  };
}

/** Default channels by name, as the realm owner (who may change any bot), while no channel is archived yet. */
export function replayBotDefaultChannels(c: SettingsReplay): void {
  const nameOf = (value: unknown): string | undefined => {
    const channel = typeof value === "number" ? c.channels.get(value) : undefined;
    return channel === undefined ? undefined : c.store.getChannel(channel)?.name;
  };
  for (const u of c.data.users) {
    const botId = c.users.get(u.id);
    if (u.is_bot !== true || botId === undefined) continue;
    const row = u as Record<string, unknown>;
    const sending = nameOf(row.default_sending_stream);
    const events = nameOf(row.default_events_register_stream);
    if (sending === undefined && events === undefined) continue;
    attempt(c, "bot default channels", u.email, () =>
      c.store.updateBot(c.ownerId, botId, {
        ...(sending !== undefined ? { defaultSendingChannel: sending } : {}),
        ...(events !== undefined ? { defaultEventsRegisterChannel: events } : {}),
      }),
    );
  }
}

/** Each bot's stored keys, written as the bot (one request per bot: all or nothing, as PUT /bot_storage). */
export function replayBotStorage(c: SettingsReplay): void {
  const byBot = new Map<number, Record<string, string>>();
  for (const row of c.data.botStorage) {
    const botId = c.users.get(row.bot_profile);
    if (botId === undefined) continue;
    (byBot.get(botId) ?? byBot.set(botId, {}).get(botId)!)[row.key] = row.value;
  }
  for (const [botId, entries] of byBot)
    if (attempt(c, "bot storage", `parley bot ${botId}`, () => c.store.setBotStorage(botId, entries)))
      c.count("bot storage keys", Object.keys(entries).length);
}
