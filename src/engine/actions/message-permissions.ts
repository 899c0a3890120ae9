/**
 * @module actions/message-permissions
 * The realm settings a send checks besides the channel's own (Zulip's
 * check_can_send_direct_message and the wildcard-mention checks of check_message and
 * check_update_message): direct_message_permission_group, direct_message_initiator_group
 * and can_mention_many_users_group.
 */
import { isAllowedBy } from "../access.js";
import { BadRequestError, WildcardMentionNotAllowedError } from "../errors.js";
import { key } from "../index/keys.js";
import type { RenderResult } from "../render.js";
import { getMessageRecord } from "../storage/message-records.js";
import type { StoreState } from "../state.js";
import type { Channel, User } from "../types.js";
import { realmGroupSettings } from "./realm-settings.js";
import { hasRealmPermission } from "./realm-permissions.js";

/** Zulip's Realm.WILDCARD_MENTION_THRESHOLD: larger channels and topics need can_mention_many_users_group. */
export const WILDCARD_MENTION_THRESHOLD = 15;

/**
 * Zulip's check_can_send_direct_message. Bots, and messages only to oneself or to bots,
 * pass. Someone of the conversation must be in direct_message_permission_group; the
 * sender must be in direct_message_initiator_group unless the conversation already has
 * a message. `participants`: sorted, the sender included.
 */
export function checkDirectMessagePermission(state: StoreState, sender: User, participants: readonly number[]): void {
  if (sender.isBot) return;
  const others = participants.map((id) => state.users.get(id)).filter((u): u is User => u !== undefined);
  if (others.every((user) => user.isBot || user.id === sender.id)) return;
  const settings = realmGroupSettings(state, sender.realmId);
  const permission = settings.directMessagePermissionGroup;
  if (!others.some((user) => isAllowedBy(state, permission, user))) {
    const nobody = typeof permission === "number" && state.groups.get(permission)?.systemRole === "role:nobody";
    throw new BadRequestError(
      nobody
        ? "Direct messages are disabled in this organization."
        : "This conversation does not include any users who can authorize it.",
    );
  }
  if (isAllowedBy(state, settings.directMessageInitiatorGroup, sender)) return;
  const conversationId = state.conversations.idOf(sender.realmId, participants);
  const hasMessages = conversationId !== undefined && state.bitmaps.get(key.conversation(conversationId)).size > 0;
  if (!hasMessages) throw new BadRequestError("You do not have permission to initiate direct message conversations.");
}

/**
 * Zulip's stream_wildcard_mention_allowed and topic_wildcard_mention_allowed for a
 * channel message by `sender` (an edit checks the message's sender): above
 * WILDCARD_MENTION_THRESHOLD subscribers (channel wildcards) or topic participants
 * (topic wildcards: senders and reactors, the sender counted), only
 * can_mention_many_users_group may. Deviation: a message with both kinds is checked as
 * a channel wildcard only (the renderer reports the wider one).
 */
export function checkWildcardMention(
  state: StoreState,
  sender: User,
  channel: Channel,
  topic: string,
  rendered: Pick<RenderResult, "wildcard">,
): void {
  if (rendered.wildcard === null || hasRealmPermission(state, sender, "canMentionManyUsersGroup")) return;
  if (rendered.wildcard === "stream") {
    if (state.activeSubscriberList(channel.id).length > WILDCARD_MENTION_THRESHOLD)
      throw new WildcardMentionNotAllowedError("stream");
    return;
  }
  // Zulip's participants_for_topic: who sent or reacted to a message of the topic.
  const participants = new Set<number>([sender.id]);
  for (const id of state.bitmaps.get(key.channelTopic(channel.id, topic))) {
    const message = getMessageRecord(state.tables, id);
    if (!message) continue;
    participants.add(message.senderId);
    for (const reaction of message.reactions) participants.add(reaction.userId);
    if (participants.size > WILDCARD_MENTION_THRESHOLD) throw new WildcardMentionNotAllowedError("topic");
  }
}
