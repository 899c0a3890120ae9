/**
 * @module http/endpoints/messages/message-history
 * GET /messages/{message_id}/history — https://zulip.com/api/get-message-history
 * The message after each change, oldest first (the original first), under the realm's
 * message_edit_history_visibility_policy. Each content change carries `content_html_diff`,
 * the new rendering with the changed words highlighted (markdown/html-diff).
 */
import { BadRequestError, type HistorySnapshot, type Realm } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { highlightHtmlDifferences } from "../../../markdown/html-diff.js";

function snapshotToWire(s: HistorySnapshot, topic: (name: string) => string): Record<string, unknown> {
  return {
    topic: topic(s.topic),
    content: s.content,
    rendered_content: s.renderedContent,
    timestamp: s.timestamp,
    user_id: s.userId,
    ...(s.prevTopic !== undefined ? { prev_topic: topic(s.prevTopic) } : {}),
    ...(s.prevContent !== undefined ? { prev_content: s.prevContent } : {}),
    ...(s.prevRenderedContent !== undefined
      ? {
          prev_rendered_content: s.prevRenderedContent,
          content_html_diff: highlightHtmlDifferences(s.prevRenderedContent, s.renderedContent),
        }
      : {}),
    ...(s.prevStream !== undefined ? { prev_stream: s.prevStream } : {}),
    ...(s.stream !== undefined ? { stream: s.stream } : {}),
    ...(s.historyDeletedBy !== undefined ? { history_deleted_by: s.historyDeletedBy } : {}),
  };
}

export default defineEndpoint({
  method: "GET",
  path: "/messages/:message_id/history",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {
    allow_empty_topic_name: p.bool().default(false),
  },
  handler(ctx, input) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    const id = Number(raw);
    const history = ctx.store.messageEditHistory(ctx.user.id, id);
    const isChannel = ctx.store.findMessageRecord(id)?.recipient.type === "channel";
    const realm: Realm = ctx.realm;
    // A channel message's empty topic is "general chat" to clients that do not know it.
    const topic = (name: string) =>
      name === "" && isChannel && !input.allow_empty_topic_name ? realm.emptyTopicDisplayName : name;
    return { message_history: history.map((s) => snapshotToWire(s, topic)) };
  },
});
