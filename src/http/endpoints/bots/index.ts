/**
 * @module http/endpoints/bots
 * Bot administration: create, change, deactivate, and the bot's API key.
 */
import type { Endpoint } from "../../endpoint.js";
import { deactivateBot, getBotApiKey, regenerateBotApiKey } from "./bot-actions.js";
import createBot from "./create-bot.js";
import updateBot from "./update-bot.js";

export const BOT_ENDPOINTS: Endpoint[] = [createBot, updateBot, deactivateBot, getBotApiKey, regenerateBotApiKey];
