/**
 * @module actions/reactions
 * Emoji reactions on messages the user can read. Keeps the message's reactions list
 * (oldest first) and the has:reaction index in step.
 */
import { canAccessMessage } from "../access.js";
import { BadRequestError, EngineError } from "../errors.js";
import { key } from "../index/keys.js";
import type { StoreState } from "../state.js";
import type { Message, Reaction } from "../types.js";
import { requireActiveUser } from "./users.js";
import { messageReadersAudience } from "../events/audience.js";

export interface ReactionInput {
  readonly emojiName: string;
  readonly emojiCode: string;
  readonly reactionType: Reaction["reactionType"];
}

function accessibleMessage(state: StoreState, userId: number, messageId: number): Message {
  const user = requireActiveUser(state, userId);
  const message = Number.isInteger(messageId) && messageId > 0 && messageId <= 0xffffffff ? (state.tables.messages.get(messageId) as Message | undefined) : undefined;
  if (!message || !canAccessMessage(state, user, message)) throw new BadRequestError("Invalid message(s)");
  return message;
}

const same = (r: Reaction, userId: number, input: ReactionInput) => r.userId === userId && r.reactionType === input.reactionType && r.emojiCode === input.emojiCode;

export function addReaction(state: StoreState, userId: number, messageId: number, input: ReactionInput): void {
  const message = accessibleMessage(state, userId, messageId);
  if (message.reactions.some((r) => same(r, userId, input))) throw new EngineError("REACTION_ALREADY_EXISTS", "Reaction already exists.");
  const next: Message = { ...message, reactions: [...message.reactions, { ...input, userId }] };
  state.write((ctx) => {
    state.tables.messages.putSync(message.id, next);
    state.bitmaps.add(key.has(message.realmId, "reaction"), message.id);
    ctx.emit({ type: "reaction", op: "add", messageId: message.id, reaction: { ...input, userId } }, () => messageReadersAudience(state, next));
  });
}

export function removeReaction(state: StoreState, userId: number, messageId: number, input: ReactionInput): void {
  const message = accessibleMessage(state, userId, messageId);
  if (!message.reactions.some((r) => same(r, userId, input))) throw new EngineError("REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");
  const next: Message = { ...message, reactions: message.reactions.filter((r) => !same(r, userId, input)) };
  state.write((ctx) => {
    state.tables.messages.putSync(message.id, next);
    if (next.reactions.length === 0) state.bitmaps.removeMany(key.has(message.realmId, "reaction"), [message.id]);
    ctx.emit({ type: "reaction", op: "remove", messageId: message.id, reaction: { ...input, userId } }, () => messageReadersAudience(state, next));
  });
}
