/**
 * @module http/endpoints/presence/realm-presence
 * GET /realm/presence — https://zulip.com/api/get-presence
 * Everyone's presence in the legacy format (by email), without presence_last_update_id.
 */
import { defineEndpoint } from "../../endpoint.js";
import { presencesToWire } from "../../../wire/presence.js";

export default defineEndpoint({
  method: "GET",
  path: "/realm/presence",
  auth: "user",
  answeredByWriter: "presence pings change the writer's memory only until its flush (every 2 s)",
  params: {},
  handler(ctx) {
    return {
      presences: presencesToWire(ctx.store.realmPresence(ctx.user.id), false),
      server_timestamp: Date.now() / 1000,
    };
  },
});
