/**
 * The wire shapes this client reads (Zulip's, as parley serves them). Only the fields
 * used here are listed; the server is trusted for shape, never for markup (see dom.ts).
 */

export interface Reaction {
  readonly emoji_name: string;
  readonly emoji_code: string;
  readonly reaction_type: string;
  readonly user_id: number;
}

export interface DisplayRecipient {
  readonly id: number;
  readonly email: string;
  readonly full_name: string;
}

export interface Message {
  readonly id: number;
  readonly sender_id: number;
  readonly sender_full_name: string;
  readonly sender_email: string;
  /** Null with client_gravatar for Gravatar avatars. */
  readonly avatar_url?: string | null;
  /** Server-rendered HTML (parley's Markdown renderer escapes user text). */
  readonly content: string;
  readonly timestamp: number;
  readonly type: "stream" | "private";
  readonly stream_id?: number;
  readonly subject: string;
  readonly display_recipient: string | readonly DisplayRecipient[];
  reactions: Reaction[];
  flags: string[];
  /** Set once the content was edited (moves alone do not count). */
  readonly last_edit_timestamp?: number;
  /** Set once the message changed channel or topic (resolving does not count). */
  readonly last_moved_timestamp?: number;
}

export interface User {
  readonly user_id: number;
  readonly email: string;
  full_name: string;
  readonly is_bot: boolean;
  is_active?: boolean;
  /** Zulip's roles: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest. */
  role?: number;
  readonly bot_owner_id?: number | null;
  /** Null with client_gravatar for Gravatar avatars; a path on this server for uploaded ones. */
  avatar_url?: string | null;
}

/** A permission setting: a group's ID, or an anonymous group of users and subgroups. */
export type GroupSettingValue = number | { readonly direct_members: number[]; readonly direct_subgroups: number[] };

export interface Subscription {
  readonly stream_id: number;
  name: string;
  color: string;
  invite_only: boolean;
  is_muted?: boolean;
  is_archived?: boolean;
  /** The channel's message permissions (Zulip 11+; absent on older servers). */
  can_administer_channel_group?: GroupSettingValue;
  can_move_messages_within_channel_group?: GroupSettingValue;
  can_move_messages_out_of_channel_group?: GroupSettingValue;
  can_resolve_topics_group?: GroupSettingValue;
  can_delete_any_message_group?: GroupSettingValue;
  can_delete_own_message_group?: GroupSettingValue;
}

export interface UnreadMsgs {
  readonly streams: readonly { stream_id: number; topic: string; unread_message_ids: readonly number[] }[];
  readonly pms: readonly { other_user_id: number; unread_message_ids: readonly number[] }[];
  readonly huddles: readonly { user_ids_string: string; unread_message_ids: readonly number[] }[];
  readonly mentions: readonly number[];
}

export interface InitialState {
  readonly queue_id: string;
  readonly last_event_id: number;
  /**
   * Filled in by the client from GET /users/me: user_id, email and full_name are in the realm_user section, which it
   * does not fetch.
   */
  readonly user_id: number;
  /** Absent: this client fetches people with GET /users after the first view. */
  readonly realm_users?: readonly User[];
  readonly subscriptions: readonly Subscription[];
  /** Topics with a visibility policy for this user (1 = muted). */
  readonly user_topics?: readonly { stream_id: number; topic_name: string; visibility_policy: number }[];
  /** Zulip's emoji_api.json: unicode emoji names (emoji-catalog.ts). */
  readonly server_emoji_data_url?: string;
  /** The realm's custom emoji by ID (parsed in emoji.ts). */
  readonly realm_emoji?: unknown;
  readonly unread_msgs: UnreadMsgs;
  readonly recent_private_conversations: readonly { max_message_id: number; user_ids: readonly number[] }[];
  /** The realm's rules for changing sent messages (register's realm section). */
  readonly realm_allow_message_editing?: boolean;
  readonly realm_message_content_edit_limit_seconds?: number | null;
  readonly realm_message_content_delete_limit_seconds?: number | null;
  readonly realm_move_messages_within_stream_limit_seconds?: number | null;
  readonly realm_move_messages_between_streams_limit_seconds?: number | null;
  readonly realm_can_move_messages_between_topics_group?: GroupSettingValue;
  readonly realm_can_move_messages_between_channels_group?: GroupSettingValue;
  readonly realm_can_resolve_topics_group?: GroupSettingValue;
  readonly realm_can_delete_any_message_group?: GroupSettingValue;
  readonly realm_can_delete_own_message_group?: GroupSettingValue;
}

export interface MessagesReply {
  readonly messages: Message[];
  readonly found_oldest: boolean;
  readonly found_newest: boolean;
  readonly found_anchor: boolean;
  readonly anchor: number;
}

/** One event from GET /events; `type` picks which other fields exist. */
export interface ServerEvent {
  readonly id: number;
  readonly type: string;
  readonly [field: string]: unknown;
}
