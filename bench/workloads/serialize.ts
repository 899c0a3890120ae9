/**
 * @module bench/workloads/serialize
 * A Zulip-shaped message dict (the fields GET /messages returns) built from engine
 * records or from peer rows, so that the 1000-message window workload serializes the
 * same shape on both sides.
 */
import type { MessageView, Store } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";

export interface MessageDict {
  id: number;
  sender_id: number;
  sender_full_name: string;
  sender_email: string;
  sender_realm_str: string;
  avatar_url: null;
  client: string;
  content: string;
  content_type: "text/html";
  display_recipient: string;
  is_me_message: boolean;
  reactions: never[];
  recipient_id: number;
  stream_id: number | null;
  subject: string;
  submessages: never[];
  timestamp: number;
  topic_links: never[];
  type: "stream" | "private";
  flags: readonly string[];
}

export function engineDicts(store: Store, views: readonly MessageView[]): MessageDict[] {
  return views.map(({ message, flags }) => {
    const sender = internals(store).users.get(message.senderId);
    const channel =
      message.recipient.type === "channel" ? internals(store).channels.get(message.recipient.channelId) : undefined;
    return {
      id: message.id,
      sender_id: message.senderId,
      sender_full_name: sender?.fullName ?? "",
      sender_email: sender?.email ?? "",
      sender_realm_str: "",
      avatar_url: null,
      client: message.client,
      content: message.renderedContent,
      content_type: "text/html",
      display_recipient: channel?.name ?? "",
      is_me_message: message.isMeMessage,
      reactions: [],
      recipient_id:
        message.recipient.type === "channel" ? message.recipient.channelId : message.recipient.conversationId,
      stream_id: channel?.id ?? null,
      subject: message.topic,
      submessages: [],
      timestamp: message.dateSent,
      topic_links: [],
      type: channel ? "stream" : "private",
      flags,
    };
  });
}
