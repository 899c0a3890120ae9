/**
 * @module http/endpoints/messages/reactions
 * POST and DELETE /messages/{message_id}/reactions — https://zulip.com/api/add-reaction
 * The name/code/type rules are the engine's (Zulip's check_add_reaction and
 * remove_reaction): adding needs emoji_name, and takes the code and type from it when
 * they are omitted; removing needs emoji_name or emoji_code, with reaction_type
 * defaulting to unicode_emoji.
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { p } from "../../params.js";

const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] as const;

function messageId(ctx: AuthedContext): number {
  const raw = ctx.pathParams["message_id"] ?? "";
  if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
  return Number(raw);
}

export const addReactionEndpoint = defineEndpoint({
  method: "POST",
  path: "/messages/:message_id/reactions",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {
    emoji_name: p.str({ maxLength: 80 }),
    emoji_code: p.str({ maxLength: 80 }).optional(),
    reaction_type: p.oneOf(REACTION_TYPES).optional(),
  },
  testing: { sweepBases: [{ params: { emoji_name: "octopus" } }] },
  // Concurrent reactions share one fsync (group commit); the answer waits for it.
  async handler(ctx, input) {
    await ctx.store.addReactionGrouped(ctx.user.id, messageId(ctx), {
      emojiName: input.emoji_name,
      emojiCode: input.emoji_code,
      reactionType: input.reaction_type,
    });
    return {};
  },
});

export const removeReactionEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/messages/:message_id/reactions",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {
    emoji_name: p.str({ maxLength: 80 }).optional(),
    emoji_code: p.str({ maxLength: 80 }).optional(),
    reaction_type: p.oneOf(REACTION_TYPES).default("unicode_emoji"),
  },
  testing: { sweepBases: [{ params: { emoji_name: "octopus" } }] },
  async handler(ctx, input) {
    await ctx.store.removeReactionGrouped(ctx.user.id, messageId(ctx), {
      emojiName: input.emoji_name,
      emojiCode: input.emoji_code,
      reactionType: input.reaction_type,
    });
    return {};
  },
});
