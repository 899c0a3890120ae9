/**
 * @module actions/bot-storage
 * A bot's key-value storage (Zulip's zerver/lib/bot_storage.py, /bot_storage): string
 * keys and values, for the calling bot only (people are refused since Zulip's feature
 * level 494). A bot stores at most USER_STATE_SIZE_LIMIT characters, counting every
 * key and value (code points, as Python's len); a request that would go past it
 * changes nothing. Reading or deleting keys that are not all stored changes nothing
 * and says "Key does not exist."; no keys means every key.
 *
 * Records are read from LMDB per request (table bot_storage, [botId, key] -> value),
 * not kept in memory: a bot may hold millions of characters.
 */
import { BadRequestError, BotRequiredError } from "../errors.js";
import type { StoreState } from "../state.js";
import type { User } from "../types.js";
import { requireActiveUser } from "./users.js";

/** Zulip's USER_STATE_SIZE_LIMIT (zproject/default_settings.py): characters per bot. */
export const USER_STATE_SIZE_LIMIT = 10_000_000;
const NO_SUCH_KEY = "Key does not exist.";

/** Python's len: code points, surrogate pairs counted once. */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function requireBot(state: StoreState, userId: number): User {
  const user = requireActiveUser(state, userId);
  if (!user.isBot) throw new BotRequiredError();
  return user;
}

/** Every stored entry of the bot, in key order. */
function entriesOf(state: StoreState, botId: number): Map<string, string> {
  const entries = new Map<string, string>();
  for (const { key, value } of state.tables.botStorage.getRange({ start: [botId], end: [botId + 1] }))
    entries.set(key[1], value as string);
  return entries;
}

/** GET /bot_storage: the values of `keys` (every key when none are given). */
export function getBotStorage(state: StoreState, userId: number, keys: readonly string[] = []): Record<string, string> {
  const bot = requireBot(state, userId);
  const out: Record<string, string> = {};
  if (keys.length === 0) {
    for (const [key, value] of entriesOf(state, bot.id)) out[key] = value;
    return out;
  }
  for (const key of keys) {
    const value = state.tables.botStorage.get([bot.id, key]);
    if (typeof value !== "string") throw new BadRequestError(NO_SUCH_KEY);
    out[key] = value;
  }
  return out;
}

/** PUT /bot_storage: sets every entry of `storage`, or none when the bot would go past its limit. */
export function setBotStorage(state: StoreState, userId: number, storage: Readonly<Record<string, string>>): void {
  const bot = requireBot(state, userId);
  const stored = entriesOf(state, bot.id);
  let size = 0;
  for (const [key, value] of stored) size += codePoints(key) + codePoints(value);
  for (const [key, value] of Object.entries(storage)) {
    const previous = stored.get(key);
    size += codePoints(key) + codePoints(value) - (previous === undefined ? 0 : codePoints(key) + codePoints(previous));
  }
  if (size > USER_STATE_SIZE_LIMIT)
    throw new BadRequestError(
      `Request exceeds storage limit by ${size - USER_STATE_SIZE_LIMIT} characters. ` +
        `The limit is ${USER_STATE_SIZE_LIMIT} characters.`,
    );
  const changes = Object.entries(storage);
  if (changes.length === 0) return;
  state.write((ctx) => {
    for (const [key, value] of changes) state.tables.botStorage.putSync([bot.id, key], value);
    ctx.changed({ kind: "botStorage", id: bot.id });
  });
}

/** DELETE /bot_storage: removes `keys` (every key when none are given), or nothing when one is not stored. */
export function removeBotStorage(state: StoreState, userId: number, keys: readonly string[] = []): void {
  const bot = requireBot(state, userId);
  const stored = entriesOf(state, bot.id);
  const targets = keys.length === 0 ? [...stored.keys()] : [...new Set(keys)];
  // Zulip compares the rows found with the keys asked for: a key named twice is one row short.
  if (targets.filter((key) => stored.has(key)).length < (keys.length === 0 ? targets.length : keys.length))
    throw new BadRequestError(NO_SUCH_KEY);
  if (targets.length === 0) return;
  state.write((ctx) => {
    for (const key of targets) state.tables.botStorage.removeSync([bot.id, key]);
    ctx.changed({ kind: "botStorage", id: bot.id });
  });
}
