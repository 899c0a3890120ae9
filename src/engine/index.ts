/**
 * @module engine
 * The embeddable message store: realms, users, channels, subscriptions, groups,
 * messages, flags, and the narrow engine. No HTTP. Open a store with openStore(dir).
 *
 * @example
 * const store = openStore("./data");
 * const { realm, owner } = store.createRealm({ subdomain: "", name: "Acme", owner: { email: "o@acme.test", fullName:
 * "Owner" } });
 * store.subscribe(owner.id, { channels: [{ name: "general" }] });
 * const { id } = store.sendMessage({ senderId: owner.id, to: { type: "channel", channel: "general", topic: "hi" },
 * content: "Hello" });
 * store.getMessages(owner.id, { anchor: "newest", numBefore: 100, numAfter: 0, narrow: [{ operator: "channel", operand:
 * "general" }] });
 */
export { Store, openStore, openFollower, openReplica, type DeleteTopicOptions } from "./store.js";
export {
  decodeBatch,
  decodeTxn,
  encodeBatch,
  encodeTxn,
  packDelivery,
  type ReplicaPosition,
  type ReplicatedBatch,
  type ReplicatedTxn,
  type ReplicationSink,
} from "./replication.js";
export type { CatchUpResult } from "./follower.js";
export {
  DELETE_TOPIC_BATCH_SIZE,
  DELETE_TOPIC_TIME_BUDGET_MS,
  type TopicDeletionStep,
} from "./actions/delete-messages.js";
export type { StoreOptions, StoreRole } from "./state.js";
export type { WarmUpResult } from "./warm-up.js";
export { warmUpWrites, type WriteWarmUpOptions, type WriteWarmUpResult } from "./warm-up-writes.js";
export type {
  Audience,
  Delivery,
  EngineEvent,
  EngineEventType,
  EventBatch,
  ContentEdit,
  MessageDetail,
  MessageMove,
  MessageOrigin,
  RealmBotField,
  RealmUserChange,
  UserGroupUpdate,
} from "./events/types.js";
export type { ChangeLogEntry, ChangeLogItem, LoggedChange } from "./events/change-log.js";
export { changeLogIds, decodeChangeSet } from "./events/change-log.js";
export type {
  Change,
  ChangeKind,
  ChangeParts,
  ChangeSet,
  EntityChange,
  EntityKind,
  EntityOp,
  FieldOf,
  MessageChange,
  MessageField,
  PairKind,
} from "./events/change-set.js";
export { CHANGE_KINDS, ENTITY_KINDS, MESSAGE_FIELDS, PAIR_KINDS, isEmptyChangeSet } from "./events/change-set.js";
export { DerivedCache, onlyFieldsChanged, type Dependencies, type Dependency } from "./events/derived-cache.js";
export type { TypingInput } from "./actions/typing.js";
export type { DigestCache } from "./actions/digest-emails.js";
export type { GetChannelsInput, GroupListing, SubscribedChannel, SubscriptionLists } from "./queries/listings.js";
export { SYSTEM_GROUPS } from "./access.js";
export { INACCESSIBLE_USER_NAME } from "./user-access.js";
export * from "./errors.js";
export * from "./limits.js";
export * from "./types.js";
export type { MessageRenderer, RenderContext, RenderFailure, RenderResult, RenderUpload } from "./render.js";
export { THUMBNAIL_FORMAT } from "./render.js";
export { INVALID_ATTACHMENT, isValidPathId, type NewAttachment } from "./actions/attachments.js";
export type { CreateRealmInput } from "./actions/realms.js";
export type { CreateUserInput, UpdateUserInput } from "./actions/users.js";
export { BOT_TYPE, type CreateBotInput, type UpdateBotInput } from "./actions/bots.js";
export { type WebhookDestination } from "./actions/webhooks.js";
export { USER_STATE_SIZE_LIMIT } from "./actions/bot-storage.js";
export { MAX_REPORT_DESCRIPTION_LENGTH, REPORT_TYPES } from "./actions/message-report.js";
export {
  MAX_DEACTIVATION_COMMENT_LENGTH,
  type CreateUserByAdminInput,
  type DeactivationNotice,
  type NewAccountInput,
} from "./actions/user-lifecycle.js";
export type {
  SubscribeInput,
  SubscribeResult,
  UnsubscribeResult,
  Principal,
  SubscriptionPropertyChange,
} from "./actions/subscriptions.js";
export { MAX_BULK_NEW_SUBSCRIPTION_MESSAGES } from "./actions/subscriptions.js";
export type { CreateGroupInput, GroupSettingField, UpdateGroupInput } from "./actions/groups.js";
export { GROUP_SETTINGS, MAX_GROUP_NAME_LENGTH } from "./actions/groups.js";
export type { AddReactionInput, ReactionInput, RemoveReactionInput } from "./actions/reactions.js";
export type { SubmessageInput } from "./actions/submessages.js";
export type { SendMessageInput, MessageDestination, SentMessage } from "./actions/send-message.js";
export { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from "./actions/send-message.js";
export {
  CHANNEL_GROUP_SETTINGS,
  MAX_CHANNEL_NAME_LENGTH,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  type ChannelGroupField,
  type ChannelGroupSettingSpec,
} from "./actions/channels.js";
export type { UpdateChannelInput } from "./actions/channel-settings.js";
export type { CreateChannelInput } from "./actions/subscriptions.js";
export type { ChannelRights } from "./actions/channel-permissions.js";
export { MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH } from "./actions/channel-folders.js";
export type { FlagChangeResult, NarrowFlagResult } from "./actions/update-flags.js";
export type { UpdateMessageInput, UpdateMessageResult } from "./actions/update-message.js";
export { EDIT_LIMIT_GRACE_SECONDS } from "./actions/update-message.js";
export type { PropagateMode } from "./actions/move-messages.js";
export { visibleHistory, type HistorySnapshot } from "./queries/message-history.js";
export type { ImportedEdit } from "./actions/imported-history.js";
export type {
  AnchorSpec,
  GetMessagesInput,
  GetMessagesResult,
  MessageView,
  MessageWindow,
  WindowInput,
} from "./queries/get-messages.js";
export { highlightsFor } from "./queries/get-messages.js";
export type { NarrowMatch } from "./queries/matches-narrow.js";
export { highlightsFromForms, messageTokenForms, type MessageTokenForms } from "./search/index.js";
export { MAX_MESSAGES_PER_FETCH } from "./queries/get-messages.js";
export { NEWEST_ANCHOR } from "./narrow/window.js";
export { channelNarrowUrl, channelSlug, encodeHashComponent, messageNarrowUrl, topicNarrowUrl } from "./narrow/url.js";
export type { MessageMatcher } from "./narrow/predicate.js";
export type { ApiFlag } from "./queries/message-flags.js";
export type { UnreadSummary } from "./queries/unread.js";
export type { RecentConversation } from "./queries/recent-conversations.js";
export type { ChannelTopic } from "./queries/channel-topics.js";
export { STOP_WORDS } from "./search/stop-words.js";
export type { VerifyReport, IndexDifference } from "./verify.js";
export type { StorageStats } from "./queries/storage-stats.js";
export {
  ENVIRONMENT_FILE,
  snapshotEnvironment,
  type SnapshotOptions,
  type SnapshotResult,
} from "./storage/snapshot.js";
export { copyStoreFile } from "./storage/copy-store-file.js";
export { LOCK_FILE, lockDataDir, type DataDirLock } from "./storage/lock.js";
export { SETTING_DEFAULTS, SETTING_NAMES, isSettingName } from "./settings/defaults.js";
export {
  MESSAGE_POLICY_DEFAULTS,
  MESSAGE_POLICY_WIRE_NAMES,
  pastLimit,
  type EditHistoryVisibility,
} from "./settings/message-policy.js";
export type { MessagePolicy, MessagePolicyChanges } from "./actions/realm-message-policy.js";
export {
  REALM_GROUP_SETTINGS,
  REALM_PROPERTIES,
  REALM_PROPERTY_NAMES,
  type RealmPropertyName,
  type RealmPropertyValue,
  type RealmProperties,
} from "./settings/realm-settings.js";
export { EDIT_HISTORY_VISIBILITY, realmChannelColumn } from "./export/zulip-realm-columns.js";
export {
  MAX_REALM_NAME_LENGTH,
  REALM_GROUP_SETTING_WIRE_NAMES,
  type UpdateRealmInput,
} from "./actions/realm-settings.js";
export {
  MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH,
  MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH,
} from "./actions/default-channel-groups.js";
export {
  MAX_DEACTIVATED_REALM_DELETION_DAYS,
  MIN_DEACTIVATED_REALM_DELETION_DAYS,
  type DeactivateRealmInput,
} from "./actions/realm-deactivation.js";
export type {
  SettingName,
  SettingValue,
  Settings,
  UserSettingsRecord,
  RealmSettingDefaultsRecord,
} from "./settings/defaults.js";
export { MAX_REMINDER_NOTE_LENGTH } from "./actions/reminders.js";
export { WEB_SESSION_SECONDS } from "./actions/web-sessions.js";
export type { LegacyTokenKind } from "./actions/legacy-push-tokens.js";
export type { CreateReminderInput } from "./actions/reminders.js";
export type {
  DeliveryOutcome,
  EditScheduledMessageInput,
  ImportedScheduledMessage,
  ScheduleMessageInput,
  ScheduledDestination,
} from "./actions/scheduled-messages.js";
export type { PresenceStatus } from "./actions/presence.js";
export {
  LEGACY_ACTIVITY_OFFSET_SECS,
  OFFLINE_THRESHOLD_SECS,
  PRESENCE_FLUSH_INTERVAL_MS,
  PRESENCE_PING_INTERVAL_SECS,
} from "./actions/presence.js";
export type { PresenceListing, PresenceQuery, PresenceRow } from "./queries/presence.js";
export type { PlaygroundInput } from "./actions/playgrounds.js";
export type { LinkifierInput } from "./actions/linkifiers.js";
export { compileLinkifier, type CompiledLinkifier, type TopicLink } from "./linkifiers/linkifier.js";
export {
  DEFAULT_EXTERNAL_ACCOUNTS,
  MAX_PROFILE_FIELD_HINT_LENGTH,
  MAX_PROFILE_FIELD_NAME_LENGTH,
  type ProfileFieldData,
  type ProfileFieldSettings,
} from "./actions/profile-fields.js";
export type { ProfileDataItem } from "./actions/profile-data.js";
export type { AddRealmEmojiInput } from "./actions/realm-emoji.js";
export type { SettingChanges, TargetUsers, UpdateSettingsInput } from "./actions/settings.js";
export {
  PERSONAL_SETTING_NAMES,
  REALM_DEFAULT_SETTING_NAMES,
  languageName,
  settingKind,
  type SettingKind,
} from "./settings/validation.js";
export type { DraftInput } from "./actions/drafts.js";
export { MAX_DRAFTS_PER_REQUEST } from "./actions/drafts.js";
export { MAX_SNIPPET_TITLE_LENGTH } from "./actions/saved-snippets.js";
export { MAX_NAVIGATION_FRAGMENT_LENGTH, MAX_NAVIGATION_NAME_LENGTH } from "./actions/navigation-views.js";
export type { MutedUserView } from "./actions/muted-users.js";
export { MAX_ALERT_WORD_LENGTH } from "./actions/alert-words.js";
export { MAX_STATUS_TEXT_LENGTH, type UserStatusInput, type UserStatusView } from "./actions/user-status.js";
export { hashPassword, verifyPassword, SCRYPT_COST, type PasswordRecord } from "./accounts/password.js";
export { HashPool, defaultHashPoolLimits, passwordHashPool, type HashPoolLimits } from "./accounts/hash-pool.js";
export type { PushRegistrationInput } from "./actions/devices.js";
export { MAX_DEVICES_PER_USER, SECRETBOX_CRYPTOSYSTEM, decodeBase64 } from "./actions/devices.js";
export type { PushDelivery, PushItemOutcome, PushTarget } from "./actions/push-notifications.js";
export { PUSH_ITEM_MAX_AGE_SECS } from "./actions/push-notifications.js";
export type { DeviceChanges } from "./events/types.js";
export {
  isStrongPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_GUESSES,
  PASSWORD_MIN_LENGTH,
} from "./accounts/password-strength.js";
export { hashNewPassword, type ScryptCost } from "./actions/accounts.js";
export type { AcceptInviteInput, InviteEnvironment, InviteOptions, InviteUsersResult } from "./actions/invites.js";
export type { JoinDetails } from "./actions/invites.js";
export type { ImportedInvite } from "./actions/imported-invites.js";
export {
  DEFAULT_DAILY_INVITE_LIMIT,
  MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH,
  SOME_SKIPPED_MESSAGE,
  parseInviteeEmails,
} from "./actions/invites.js";
export { MAX_MAIL_ATTEMPTS } from "./mail/outbox.js";
export type { WebhookCallResult, WebhookDelivery } from "./outgoing-webhooks/outbox.js";
export { joinLink, emailChangeLink } from "./mail/templates.js";
export { checkPasswordPolicy } from "./accounts/password-policy.js";
export { EXPORT_LIMIT, MAX_EXPORT_MESSAGES, type ExportBounds } from "./actions/realm-exports.js";
export type { ExportPlan, Row as ExportRow, Tables as ExportTables } from "./export/zulip-tables.js";
