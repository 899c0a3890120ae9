/**
 * @module actions/reactions
 * Emoji reactions on messages the user can read. Keeps the message's reactions list
 * (oldest first) and the has:reaction index in step. Names and codes are checked as in
 * Zulip's check_add_reaction / check_emoji_request against the realm's custom emoji
 * (code: the emoji's ID), Zulip's full unicode table (src/emoji/unicode.ts) and the
 * one extra emoji, `zulip`. A deactivated custom emoji takes no new reactions, but
 * existing ones stay (and votes for them count, as in Zulip).
 */
import { canAccessMessage } from "../access.js";
import { BadRequestError, EngineError } from "../errors.js";
import { applyParticipationPolicy } from "./user-topics.js";
import { key } from "../index/keys.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Message, Reaction } from "../types.js";
import { isUnicodeEmojiCode, unicodeEmojiCode } from "../../emoji/unicode.js";
import { requireActiveUser } from "./users.js";
import { activeRealmEmoji } from "./realm-emoji.js";
import { messageReadersAudience } from "../events/audience.js";
import { getMessageRecord, putMessageRecord } from "../storage/message-records.js";

export interface ReactionInput {
  readonly emojiName: string;
  readonly emojiCode: string;
  readonly reactionType: Reaction["reactionType"];
}

/** What a client sends to add a reaction: the name, and optionally the code and type. */
export interface AddReactionInput {
  readonly emojiName: string;
  readonly emojiCode?: string | undefined;
  readonly reactionType?: Reaction["reactionType"] | undefined;
}

/** What a client sends to remove one: a name or a code (the code wins); type defaults to unicode_emoji. */
export interface RemoveReactionInput {
  readonly emojiName?: string | undefined;
  readonly emojiCode?: string | undefined;
  readonly reactionType?: Reaction["reactionType"] | undefined;
}

/** Zulip's get_emoji_data: the code and type an emoji name stands for (custom emoji first). */
export function emojiData(
  state: StoreState,
  realmId: number,
  name: string,
): { emojiCode: string; reactionType: Reaction["reactionType"] } {
  const custom = activeRealmEmoji(state, realmId, name);
  if (custom) return { emojiCode: String(custom.id), reactionType: "realm_emoji" };
  if (name === "zulip") return { emojiCode: "zulip", reactionType: "zulip_extra_emoji" };
  const code = unicodeEmojiCode(name);
  if (code === undefined) throw new BadRequestError(`Emoji '${name}' does not exist`);
  return { emojiCode: code, reactionType: "unicode_emoji" };
}

/** Zulip's check_emoji_request: does the name go with the code, for this type? */
export function checkEmojiRequest(state: StoreState, realmId: number, input: ReactionInput): void {
  const { emojiName, emojiCode, reactionType } = input;
  if (reactionType === "realm_emoji") {
    const custom = /^[1-9]\d{0,9}$/.test(emojiCode) ? state.realmEmoji.get(Number(emojiCode)) : undefined;
    if (!custom || custom.realmId !== realmId) throw new BadRequestError("Invalid custom emoji.");
    if (custom.name !== emojiName) throw new BadRequestError("Invalid custom emoji name.");
    if (custom.deactivated) throw new BadRequestError("This custom emoji has been deactivated.");
    return;
  }
  if (reactionType === "zulip_extra_emoji") {
    if (emojiCode !== "zulip") throw new BadRequestError("Invalid emoji code.");
    if (emojiName !== emojiCode) throw new BadRequestError("Invalid emoji name.");
    return;
  }
  if (!isUnicodeEmojiCode(emojiCode)) throw new BadRequestError("Invalid emoji code.");
  if (unicodeEmojiCode(emojiName) !== emojiCode) throw new BadRequestError("Invalid emoji name.");
}

function accessibleMessage(state: StoreState, userId: number, messageId: number): Message {
  const user = requireActiveUser(state, userId);
  const message =
    Number.isInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? getMessageRecord(state.tables, messageId)
      : undefined;
  if (!message || !canAccessMessage(state, user, message)) throw new BadRequestError("Invalid message(s)");
  return message;
}

const same = (r: Reaction, userId: number, input: ReactionInput) =>
  r.userId === userId && r.reactionType === input.reactionType && r.emojiCode === input.emojiCode;

export function addReaction(state: StoreState, userId: number, messageId: number, request: AddReactionInput): void {
  state.write(prepareAddReaction(state, userId, messageId, request));
}

/** addReaction's checks, and its write (for StoreState.writeGrouped). */
export function prepareAddReaction(
  state: StoreState,
  userId: number,
  messageId: number,
  request: AddReactionInput,
): (ctx: WriteContext) => void {
  const message = accessibleMessage(state, userId, messageId);
  let { emojiCode, reactionType } = request;
  if (emojiCode === undefined || reactionType === undefined) {
    const data = emojiData(state, message.realmId, request.emojiName);
    emojiCode ??= data.emojiCode;
    reactionType ??= data.reactionType;
  }
  let input: ReactionInput = { emojiName: request.emojiName, emojiCode, reactionType };
  if (message.reactions.some((r) => same(r, userId, input)))
    throw new EngineError("REACTION_ALREADY_EXISTS", "Reaction already exists.");
  // Zulip: a reaction with the same code is a vote for it and keeps its name, unchecked.
  const existing = message.reactions.find((r) => r.reactionType === reactionType && r.emojiCode === emojiCode);
  if (existing) input = { ...input, emojiName: existing.emojiName };
  else checkEmojiRequest(state, message.realmId, input);
  const next: Message = { ...message, reactions: [...message.reactions, { ...input, userId }] };
  const reactor = state.users.get(userId);
  const channel = message.recipient.type === "channel" ? state.channels.get(message.recipient.channelId) : undefined;
  return (ctx) => {
    if (reactor && channel) applyParticipationPolicy(state, ctx, reactor, channel, message.topic);
    putMessageRecord(state.tables, next);
    state.bitmaps.add(key.has(message.realmId, "reaction"), message.id);
    ctx.emit(
      { type: "reaction", op: "add", messageId: message.id, realmId: message.realmId, reaction: { ...input, userId } },
      () => messageReadersAudience(state, next),
    );
  };
}

export function removeReaction(
  state: StoreState,
  userId: number,
  messageId: number,
  request: RemoveReactionInput,
): void {
  state.write(prepareRemoveReaction(state, userId, messageId, request));
}

/** removeReaction's checks, and its write (for StoreState.writeGrouped). */
export function prepareRemoveReaction(
  state: StoreState,
  userId: number,
  messageId: number,
  request: RemoveReactionInput,
): (ctx: WriteContext) => void {
  const message = accessibleMessage(state, userId, messageId);
  let emojiCode = request.emojiCode;
  if (emojiCode === undefined) {
    if (request.emojiName === undefined)
      throw new BadRequestError("At least one of the following arguments must be present: emoji_name, emoji_code");
    emojiCode = emojiData(state, message.realmId, request.emojiName).emojiCode;
  }
  // The name is not checked: the stored reaction was valid when added (Zulip does the same).
  const input: ReactionInput = {
    emojiName: request.emojiName ?? "",
    emojiCode,
    reactionType: request.reactionType ?? "unicode_emoji",
  };
  if (!message.reactions.some((r) => same(r, userId, input)))
    throw new EngineError("REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");
  const next: Message = { ...message, reactions: message.reactions.filter((r) => !same(r, userId, input)) };
  return (ctx) => {
    putMessageRecord(state.tables, next);
    if (next.reactions.length === 0) state.bitmaps.removeMany(key.has(message.realmId, "reaction"), [message.id]);
    ctx.emit(
      {
        type: "reaction",
        op: "remove",
        messageId: message.id,
        realmId: message.realmId,
        reaction: { ...input, userId },
      },
      () => messageReadersAudience(state, next),
    );
  };
}
