/**
 * @module http/endpoints/messages/reactions
 * POST and DELETE /messages/{message_id}/reactions — https://zulip.com/api/add-reaction
 * emoji_code defaults from the built-in emoji name table; only unicode_emoji (and the
 * other reaction types by explicit code) are supported: there are no realm emoji.
 */
import { BadRequestError } from "../../../engine/index.js";
import type { ReactionInput } from "../../../engine/index.js";
import { emojiCodepoint } from "../../../markdown/emoji.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { p } from "../../params.js";

const params = {
  emoji_name: p.str({ maxLength: 80 }),
  emoji_code: p.str({ maxLength: 80 }).optional(),
  reaction_type: p.oneOf(["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] as const).default("unicode_emoji"),
};

function target(ctx: AuthedContext, input: { emoji_name: string; emoji_code?: string | undefined; reaction_type: ReactionInput["reactionType"] }): { messageId: number; reaction: ReactionInput } {
  const raw = ctx.pathParams["message_id"] ?? "";
  if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
  const emojiCode = input.emoji_code ?? emojiCodepoint(input.emoji_name);
  if (emojiCode === undefined) throw new BadRequestError(`Emoji '${input.emoji_name}' does not exist`);
  return { messageId: Number(raw), reaction: { emojiName: input.emoji_name, emojiCode, reactionType: input.reaction_type } };
}

export const addReactionEndpoint = defineEndpoint({
  method: "POST",
  path: "/messages/:message_id/reactions",
  auth: "user",
  params,
  handler(ctx, input) {
    const { messageId, reaction } = target(ctx, input);
    ctx.store.addReaction(ctx.user.id, messageId, reaction);
    return {};
  },
});

export const removeReactionEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/messages/:message_id/reactions",
  auth: "user",
  params,
  handler(ctx, input) {
    const { messageId, reaction } = target(ctx, input);
    ctx.store.removeReaction(ctx.user.id, messageId, reaction);
    return {};
  },
});
