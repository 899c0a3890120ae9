/**
 * @module http/endpoints/realm/delete-emoji
 * DELETE /realm/emoji/{emoji_name} — https://zulip.com/api/deactivate-custom-emoji
 * Deactivates the active custom emoji of that name (the author or an administrator;
 * 404 when there is none). Its image stays: old messages and reactions show it.
 */
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/realm/emoji/:emoji_name",
  auth: "user",
  params: {},
  testing: {
    notRefs: {
      emoji_name:
        "custom emoji are named per realm: another realm's name is free here, and one never used answers alike " +
        "(test/http/realm-emoji.test.ts)",
    },
  },
  handler(ctx) {
    ctx.store.removeRealmEmoji(ctx.user.id, ctx.pathParams["emoji_name"] ?? "");
    return {};
  },
});
