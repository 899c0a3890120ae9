/**
 * @module http/endpoints/messages/render-message
 * POST /messages/render — https://zulip.com/api/render-message
 * Compose preview: `rendered` is the HTML a send of `content` would store (same renderer, mentions, channel links,
 * emoji and upload previews the caller may see). Content over the message length is cut as a send cuts it; an empty
 * draft renders to "".
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/messages/render",
  auth: "user",
  params: {
    content: p.str(),
  },
  handler(ctx, input) {
    return { rendered: ctx.store.renderPreview(ctx.user.id, input.content) };
  },
});
