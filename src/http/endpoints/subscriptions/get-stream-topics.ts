/**
 * @module http/endpoints/subscriptions/get-stream-topics
 * GET /users/me/{stream_id}/topics — https://zulip.com/api/get-stream-topics
 * `topics`: `{name, max_id}` per topic the caller may read messages of, newest first
 * (rules and the index behind them: engine/queries/channel-topics.ts). Without
 * `allow_empty_topic_name` the empty topic is named by the realm's empty-topic display
 * name, as Zulip does. Spectators (no credentials) are not served: 401 as elsewhere.
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "GET",
  path: "/users/me/:stream_id/topics",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: {
    allow_empty_topic_name: p.bool().default(false),
  },
  handler(ctx, input) {
    const raw = ctx.pathParams["stream_id"] ?? "";
    // Zulip's route takes digits only; anything else names no channel.
    if (!/^\d{1,10}$/.test(raw)) throw new BadRequestError("Invalid channel ID");
    const empty = input.allow_empty_topic_name ? "" : ctx.realm.emptyTopicDisplayName;
    const topics = ctx.store
      .channelTopics(ctx.user.id, Number(raw))
      .map((t) => ({ name: t.name === "" ? empty : t.name, max_id: t.maxId }));
    return { topics };
  },
});
