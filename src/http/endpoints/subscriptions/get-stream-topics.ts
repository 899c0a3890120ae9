/**
 * @module http/endpoints/subscriptions/get-stream-topics
 * GET /users/me/{stream_id}/topics — https://zulip.com/api/get-stream-topics
 * `topics`: `{name, max_id}` per topic the caller may read messages of, newest first
 * (rules and the index behind them: engine/queries/channel-topics.ts). Without
 * `allow_empty_topic_name` the empty topic is named by the realm's empty-topic display
 * name, as Zulip does. Spectators (no credentials) are not served: 401 as elsewhere.
 */
import { BadRequestError, type ChannelTopic } from "../../../engine/index.js";
import { RawJson } from "../../respond.js";
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
  async handler(ctx, input) {
    const raw = ctx.pathParams["stream_id"] ?? "";
    // Zulip's route takes digits only; anything else names no channel.
    if (!/^\d{1,10}$/.test(raw)) throw new BadRequestError("Invalid channel ID");
    const empty = input.allow_empty_topic_name ? "" : ctx.realm.emptyTopicDisplayName;
    const topics = await ctx.store.channelTopicsAsync(ctx.user.id, Number(raw));
    return { topics: await topicsJson(topics, empty) };
  },
});

/** Topics encoded per turn of the event loop: 100,000 of them took ~40 ms to encode at once. */
const TOPICS_PER_TURN = 10_000;

/** The `topics` array's JSON, encoded a slice per turn. */
async function topicsJson(topics: readonly ChannelTopic[], emptyName: string): Promise<RawJson> {
  const parts: Buffer[] = [Buffer.from("[")];
  for (let from = 0; from < topics.length; from += TOPICS_PER_TURN) {
    if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const slice = topics
      .slice(from, from + TOPICS_PER_TURN)
      .map((t) => ({ name: t.name === "" ? emptyName : t.name, max_id: t.maxId }));
    parts.push(Buffer.from(`${from > 0 ? "," : ""}${JSON.stringify(slice).slice(1, -1)}`));
  }
  parts.push(Buffer.from("]"));
  return new RawJson(parts);
}
