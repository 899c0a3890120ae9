/**
 * @module wire/message
 * Zulip's message object (MessagesBase plus flags and search matches) from engine
 * records. Changing a field here changes what every client sees: keep it in step
 * with the Message object in the API specification.
 */
import type { MessageView, Store } from "../engine/index.js";
import type { Message, Realm, User } from "../engine/index.js";
import { avatarUrl } from "./avatar.js";
import { topicLinksToWire } from "./linkifier.js";
import { INACCESSIBLE_USER_NAME, visibleHistory } from "../engine/index.js";
import { INACCESSIBLE_USER_AVATAR } from "./user.js";

export interface MessageViewOptions {
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly allowEmptyTopicName: boolean;
  /**
   * For a limited guest: the senders they may not see, and the realm host for their
   * placeholder email (Zulip's finalize_payload with can_access_sender false).
   */
  readonly hiddenSenders?: { readonly has: (senderId: number) => boolean; readonly emailDomain: string };
}

/** Zulip's recipient_id: one ID space for channels and DM conversations. */
export function recipientId(message: Message): number {
  return message.recipient.type === "channel"
    ? message.recipient.channelId * 2
    : message.recipient.conversationId * 2 + 1;
}

function userBrief(user: User | undefined, id: number) {
  return { id, email: user?.email ?? "", full_name: user?.fullName ?? "", is_mirror_dummy: false };
}

/** The full message object: the cached-free path (GET /messages/{id}, tests). */
export function messageToWire(
  store: Store,
  realm: Realm,
  view: MessageView,
  options: MessageViewOptions,
): Record<string, unknown> {
  const out = messageBody(store, realm, view.message, options);
  out["flags"] = view.flags;
  if (view.matchContent !== undefined) out["match_content"] = view.matchContent;
  if (view.matchSubject !== undefined) out["match_subject"] = view.matchSubject;
  return out;
}

/** Everything of the message object that is the same for every reader (no flags, no matches). */
export function messageBody(
  store: Store,
  realm: Realm,
  m: Message,
  options: MessageViewOptions,
): Record<string, unknown> {
  const sender = store.findUser(m.senderId);
  const hidden = options.hiddenSenders;
  const hide = hidden !== undefined && hidden.has(m.senderId);
  const out: Record<string, unknown> = {
    id: m.id,
    sender_id: m.senderId,
    sender_email: hide ? `user${m.senderId}@${hidden.emailDomain}` : (sender?.email ?? ""),
    sender_full_name: hide ? INACCESSIBLE_USER_NAME : (sender?.fullName ?? ""),
    sender_realm_str: realm.subdomain,
    avatar_url: hide ? INACCESSIBLE_USER_AVATAR : sender ? avatarUrl(sender, options.clientGravatar) : null,
    client: m.client,
    content: options.applyMarkdown ? m.renderedContent : m.content,
    content_type: options.applyMarkdown ? "text/html" : "text/x-markdown",
    recipient_id: recipientId(m),
    timestamp: m.dateSent,
    is_me_message: m.isMeMessage,
    reactions: m.reactions.map((r) => ({
      emoji_name: r.emojiName,
      emoji_code: r.emojiCode,
      reaction_type: r.reactionType,
      user_id: r.userId,
    })),
    submessages: (m.submessages ?? []).map((s) => ({
      msg_type: s.msgType,
      content: s.content,
      message_id: m.id,
      sender_id: s.senderId,
      id: s.id,
    })),
    topic_links: m.recipient.type === "channel" ? topicLinksToWire(store.topicLinks(realm.id, m.topic)) : [],
  };
  if (m.recipient.type === "channel") {
    const channel = store.getChannel(m.recipient.channelId);
    out["type"] = "stream";
    out["stream_id"] = m.recipient.channelId;
    out["display_recipient"] = channel?.name ?? "";
    out["subject"] = m.topic === "" && !options.allowEmptyTopicName ? realm.emptyTopicDisplayName : m.topic;
  } else {
    const conversation = store.findConversation(m.recipient.conversationId);
    out["type"] = "private";
    out["display_recipient"] = (conversation?.userIds ?? []).map((id) => userBrief(store.findUser(id), id));
    out["subject"] = "";
  }
  // Zulip leaves edit_history out where the realm hides it, and under "moves" shows the moves only.
  const policy = m.editHistory ? store.realmMessagePolicy(realm.id).messageEditHistoryVisibilityPolicy : "none";
  if (m.editHistory && policy !== "none") {
    out["edit_history"] = visibleHistory(policy, m.editHistory).map((e) => ({
      user_id: e.userId,
      timestamp: e.timestamp,
      ...(e.prevContent !== undefined ? { prev_content: e.prevContent } : {}),
      ...(e.prevRenderedContent !== undefined ? { prev_rendered_content: e.prevRenderedContent } : {}),
      ...(e.prevStream !== undefined ? { prev_stream: e.prevStream } : {}),
      ...(e.prevTopic !== undefined ? { prev_topic: e.prevTopic } : {}),
      ...(e.stream !== undefined ? { stream: e.stream } : {}),
      ...(e.topic !== undefined ? { topic: e.topic } : {}),
    }));
  }
  if (m.lastEditTimestamp !== null) out["last_edit_timestamp"] = m.lastEditTimestamp;
  if (m.lastMovedTimestamp !== null) out["last_moved_timestamp"] = m.lastMovedTimestamp;
  return out;
}
