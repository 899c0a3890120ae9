/**
 * @module settings/message-policy
 * The realm's rules for changing messages after they are sent: who may edit, move,
 * resolve and delete, and for how long (Zulip's Realm settings of those names). Stored
 * on the realm only where an administrator changed them; everything else is Zulip's
 * default, resolved here so that the rules the engine enforces and the values register
 * reports are the same values.
 */
export type EditHistoryVisibility = "all" | "moves" | "none";

/** Group is GroupSettingValue once resolved against a realm; the defaults name system groups. */
export interface MessagePolicy<Group> {
  /** realm_allow_message_editing */
  readonly allowMessageEditing: boolean;
  /** realm_message_content_edit_limit_seconds; null: no limit. */
  readonly messageContentEditLimitSeconds: number | null;
  /** realm_message_content_delete_limit_seconds; null: no limit. */
  readonly messageContentDeleteLimitSeconds: number | null;
  /** realm_move_messages_within_stream_limit_seconds; null: no limit. */
  readonly moveMessagesWithinStreamLimitSeconds: number | null;
  /** realm_move_messages_between_streams_limit_seconds; null: no limit. */
  readonly moveMessagesBetweenStreamsLimitSeconds: number | null;
  /** realm_message_edit_history_visibility_policy */
  readonly messageEditHistoryVisibilityPolicy: EditHistoryVisibility;
  readonly canMoveMessagesBetweenChannelsGroup: Group;
  readonly canMoveMessagesBetweenTopicsGroup: Group;
  readonly canResolveTopicsGroup: Group;
  readonly canDeleteAnyMessageGroup: Group;
  readonly canDeleteOwnMessageGroup: Group;
}

/** Zulip's defaults (Realm.property_types and its group permission settings). */
export const MESSAGE_POLICY_DEFAULTS: MessagePolicy<string> = {
  allowMessageEditing: true,
  messageContentEditLimitSeconds: 600,
  messageContentDeleteLimitSeconds: 600,
  moveMessagesWithinStreamLimitSeconds: 604800,
  moveMessagesBetweenStreamsLimitSeconds: 604800,
  messageEditHistoryVisibilityPolicy: "all",
  canMoveMessagesBetweenChannelsGroup: "role:members",
  canMoveMessagesBetweenTopicsGroup: "role:everyone",
  canResolveTopicsGroup: "role:everyone",
  canDeleteAnyMessageGroup: "role:administrators",
  canDeleteOwnMessageGroup: "role:everyone",
};

export const MESSAGE_POLICY_GROUP_SETTINGS = [
  "canMoveMessagesBetweenChannelsGroup",
  "canMoveMessagesBetweenTopicsGroup",
  "canResolveTopicsGroup",
  "canDeleteAnyMessageGroup",
  "canDeleteOwnMessageGroup",
] as const;

export type MessagePolicyGroupSetting = (typeof MESSAGE_POLICY_GROUP_SETTINGS)[number];

/** Zulip's names of the settings (register's `realm_` keys without the prefix, and realm update_dict data keys). */
export const MESSAGE_POLICY_WIRE_NAMES: { readonly [K in keyof MessagePolicy<unknown>]: string } = {
  allowMessageEditing: "allow_message_editing",
  messageContentEditLimitSeconds: "message_content_edit_limit_seconds",
  messageContentDeleteLimitSeconds: "message_content_delete_limit_seconds",
  moveMessagesWithinStreamLimitSeconds: "move_messages_within_stream_limit_seconds",
  moveMessagesBetweenStreamsLimitSeconds: "move_messages_between_streams_limit_seconds",
  messageEditHistoryVisibilityPolicy: "message_edit_history_visibility_policy",
  canMoveMessagesBetweenChannelsGroup: "can_move_messages_between_channels_group",
  canMoveMessagesBetweenTopicsGroup: "can_move_messages_between_topics_group",
  canResolveTopicsGroup: "can_resolve_topics_group",
  canDeleteAnyMessageGroup: "can_delete_any_message_group",
  canDeleteOwnMessageGroup: "can_delete_own_message_group",
};

/** Whether `seconds` since sending is past a limit (null: no limit). */
export function pastLimit(limitSeconds: number | null, sentAt: number, now: number): boolean {
  return limitSeconds !== null && now - sentAt > limitSeconds;
}
