/**
 * @module http/endpoints/realm/list-emoji
 * GET /realm/emoji — https://zulip.com/api/get-custom-emoji
 * Every custom emoji of the realm, deactivated ones too, by ID (public to the realm).
 */
import { defineEndpoint } from "../../endpoint.js";
import { realmEmojiMapToWire } from "../../../wire/realm-emoji.js";

export default defineEndpoint({
  method: "GET",
  path: "/realm/emoji",
  auth: "user",
  params: {},
  handler(ctx) {
    return { emoji: realmEmojiMapToWire(ctx.store.realmEmoji(ctx.realm.id)) };
  },
});
