/**
 * @module http/endpoints/bot-storage
 * A bot's key-value storage (Zulip's zerver/views/storage.py; not in its OpenAPI
 * description before feature level 494): GET /bot_storage (`keys`, default every
 * key) answers `storage`; PUT /bot_storage sets the `storage` dict's entries; DELETE
 * /bot_storage removes `keys` (default every key). For the calling bot only; the
 * rules and the size limit are the engine's (actions/bot-storage).
 */
import { z } from "zod";
import { defineEndpoint, type Endpoint } from "../../endpoint.js";
import { j, p } from "../../params.js";

const keysParam = () => p.json(j.stringList()).optional();

const getBotStorage = defineEndpoint({
  method: "GET",
  path: "/bot_storage",
  auth: "user",
  params: { keys: keysParam() },
  handler(ctx, input) {
    return { storage: ctx.store.botStorage(ctx.user.id, input.keys) };
  },
});

const updateBotStorage = defineEndpoint({
  method: "PUT",
  path: "/bot_storage",
  auth: "user",
  params: { storage: p.json(z.record(z.string(), z.string())) },
  testing: { worst: { valid: { storage: "{}" } } },
  handler(ctx, input) {
    ctx.store.setBotStorage(ctx.user.id, input.storage);
    return {};
  },
});

const removeBotStorage = defineEndpoint({
  method: "DELETE",
  path: "/bot_storage",
  auth: "user",
  params: { keys: keysParam() },
  handler(ctx, input) {
    ctx.store.removeBotStorage(ctx.user.id, input.keys);
    return {};
  },
});

export const BOT_STORAGE_ENDPOINTS: Endpoint[] = [getBotStorage, updateBotStorage, removeBotStorage];
