/**
 * @module store
 * The engine's public facade: one Store per data directory. Every method is either an
 * action (one write transaction, nothing changed on error) or a query (reads only).
 * Methods acting for a user take that user's ID and apply their permissions.
 */
import { canAccessMessage } from "./access.js";
import { createWebSession, endWebSession, webSessionCount, webSessionUser } from "./actions/web-sessions.js";
import {
  createGroup,
  deactivateGroup,
  groupMembers,
  groupSettings,
  groupSubgroups,
  isGroupMemberQuery,
  updateGroup,
  updateMembers,
  updateSubgroups,
  type CreateGroupInput,
  type GroupSettingField,
  type UpdateGroupInput,
} from "./actions/groups.js";
import {
  accessChannelById,
  accessChannelByName,
  channelEmailToken,
  channelGroupSettings,
  isUserSubscribed,
  streamPostPolicy,
  userChannelIds,
} from "./actions/channels.js";
import { channelRights, type ChannelRights } from "./actions/channel-permissions.js";
import {
  createChannelFolder,
  realmChannelFolders,
  reorderChannelFolders,
  updateChannelFolder,
} from "./actions/channel-folders.js";
import {
  archiveChannel,
  setDefaultChannel,
  updateChannel,
  type UpdateChannelInput,
} from "./actions/channel-settings.js";
import {
  createRealm,
  setNewChannelAnnouncementsChannel,
  realmUuid,
  setRealmDeactivated,
  systemGroupId,
  type CreateRealmInput,
} from "./actions/realms.js";
import {
  addReaction,
  prepareAddReaction,
  prepareRemoveReaction,
  removeReaction,
  type AddReactionInput,
  type RemoveReactionInput,
} from "./actions/reactions.js";
import { addSubmessage, type SubmessageInput } from "./actions/submessages.js";
import {
  continueReadPurge,
  DELETE_TOPIC_BATCH_SIZE,
  DELETE_TOPIC_TIME_BUDGET_MS,
  deleteMessage,
  deleteTopicBatch,
  nextTopicBatchSize,
  pendingReadPurges,
  warmTopicBatch,
} from "./actions/delete-messages.js";
import {
  realmMessagePolicy,
  setRealmMessagePolicy,
  type MessagePolicy,
  type MessagePolicyChanges,
} from "./actions/realm-message-policy.js";
import { deactivateRealmByOwner, type DeactivateRealmInput } from "./actions/realm-deactivation.js";
import { sendTestWelcomeBotCustomMessage } from "./actions/welcome-bot.js";
import {
  createDefaultChannelGroup,
  defaultChannelGroupsFor,
  removeDefaultChannelGroup,
  updateDefaultChannelGroupChannels,
  updateDefaultChannelGroupInfo,
} from "./actions/default-channel-groups.js";
import {
  realmGroupSettingByWire,
  realmProperties,
  realmPropertyValue,
  updateRealm,
  type UpdateRealmInput,
} from "./actions/realm-settings.js";
import type { RealmProperties, RealmPropertyValue } from "./settings/realm-settings.js";
import { sendMessage, sendMessageGrouped, type SendMessageInput, type SentMessage } from "./actions/send-message.js";
import {
  updateMessage,
  updateMessageStaged,
  type UpdateMessageInput,
  type UpdateMessageResult,
} from "./actions/update-message.js";
import { messageEditHistory, type HistorySnapshot } from "./queries/message-history.js";
import { importEditHistory, type ImportedEdit } from "./actions/imported-history.js";
import { deleteMessageEditHistory } from "./actions/delete-edit-history.js";
import { renderPreview } from "./actions/render-preview.js";
import { messagesMatchingNarrow, type NarrowMatch } from "./queries/matches-narrow.js";
import { readReceipts } from "./queries/read-receipts.js";
import { reportMessage, type MessageReport } from "./actions/message-report.js";
import {
  addNavigationView,
  listNavigationViews,
  removeNavigationView,
  updateNavigationView,
} from "./actions/navigation-views.js";
import { promoteNewFullMembers } from "./actions/full-members.js";
import { deleteExpiredMessagesBatch, retentionTargets, RETENTION_PURGE_EVERY } from "./actions/retention.js";
import {
  deleteScheduledMessage,
  deliverDueScheduledMessages,
  editScheduledMessage,
  importScheduledMessage,
  listScheduledMessages,
  scheduledMessageRecords,
  type ImportedScheduledMessage,
  nextScheduledDelivery,
  scheduleMessage,
  type DeliveryOutcome,
  type EditScheduledMessageInput,
  type ScheduleMessageInput,
} from "./actions/scheduled-messages.js";
import { createReminder, deleteReminder, listReminders, type CreateReminderInput } from "./actions/reminders.js";
import {
  addLegacyPushToken,
  legacyPushTokens,
  legacyTestTargets,
  removeLegacyPushToken,
  type LegacyTestTarget,
  type LegacyTokenKind,
} from "./actions/legacy-push-tokens.js";
import {
  checkUnsubscribe,
  createChannel,
  setChannelMuted,
  subscribe,
  unsubscribe,
  type CreateChannelInput,
  updateSubscriptionProperties,
  type SubscriptionPropertyChange,
  type Principal,
  type SubscribeInput,
  type SubscribeResult,
  type UnsubscribeResult,
} from "./actions/subscriptions.js";
import {
  markAllAsRead,
  markTopicAsRead,
  prepareFlagsByIds,
  prepareFlagsForNarrow,
  prepareMarkTopicAsRead,
  updateFlagsByIds,
  updateFlagsForNarrow,
  type FlagChangeResult,
  type NarrowFlagResult,
} from "./actions/update-flags.js";
import { setTopicPolicy } from "./actions/user-topics.js";
import { updateLegacyMutedTopic, type LegacyMutedTopicChange } from "./actions/legacy-muted-topics.js";
import { flushPresence, restorePresence, updatePresence, type PresenceStatus } from "./actions/presence.js";
import { realmPresence, userPresence, type PresenceListing, type PresenceQuery } from "./queries/presence.js";
import { addRealmDomain, changeRealmDomain, realmDomains, removeRealmDomain } from "./actions/realm-domains.js";
import {
  checkProfileDataOf,
  createProfileField,
  deleteProfileField,
  realmProfileFields,
  removeOwnProfileData,
  reorderProfileFields,
  updateOwnProfileData,
  updateProfileField,
  type ProfileFieldSettings,
} from "./actions/profile-fields.js";
import type { ProfileDataItem } from "./actions/profile-data.js";
import { addPlayground, realmPlaygrounds, removePlayground, type PlaygroundInput } from "./actions/playgrounds.js";
import {
  addLinkifier,
  realmLinkifiers,
  realmTopicLinks,
  removeLinkifier,
  reorderLinkifiers,
  updateLinkifier,
  type LinkifierInput,
} from "./actions/linkifiers.js";
import type { TopicLink } from "./linkifiers/linkifier.js";
import {
  addRealmEmoji,
  canAddCustomEmojiGroup,
  checkAddRealmEmoji,
  realmEmojiOf,
  removeRealmEmoji,
  setCanAddCustomEmojiGroup,
  type AddRealmEmojiInput,
} from "./actions/realm-emoji.js";
import {
  createUser,
  passwordOf,
  requireUser,
  setPassword,
  setUserActive,
  updateUser,
  type CreateUserInput,
  type UpdateUserInput,
} from "./actions/users.js";
import { checkAvatarChange, setAvatar } from "./actions/avatar.js";
import { BadRequestError, FollowerWriteError, NotFoundError } from "./errors.js";
import {
  botApiKey,
  canCreateBotsGroup,
  canCreateWriteOnlyBotsGroup,
  createBot,
  queueDefaults,
  regenerateBotApiKey,
  updateBot,
  type CreateBotInput,
  type UpdateBotInput,
} from "./actions/bots.js";
import { notifyBotOwner, sendWebhookMessage, type WebhookDestination } from "./actions/webhooks.js";
import { getBotStorage, removeBotStorage, setBotStorage } from "./actions/bot-storage.js";
import {
  checkCreateUserByAdmin,
  createAccount,
  createUserByAdmin,
  deactivateBot,
  deactivateOwnUser,
  deactivateUser,
  reactivateUser,
  type CreateUserByAdminInput,
  type DeactivationNotice,
  type NewAccountInput,
} from "./actions/user-lifecycle.js";
import {
  registerClientDevice,
  registerPushDevice,
  removeClientDevice,
  userDevices,
  type PushRegistrationInput,
} from "./actions/devices.js";
import {
  clearPushTokens,
  finishPushItem,
  pushOutboxItems,
  resolvePushItem,
  testPushTargets,
  type PushDelivery,
  type PushItemOutcome,
  type PushTarget,
} from "./actions/push-notifications.js";
import type { PlanContext } from "./narrow/plan.js";
import {
  getMessageWindow,
  getMessages,
  type GetMessagesInput,
  type GetMessagesResult,
  type MessageWindow,
  type WindowInput,
} from "./queries/get-messages.js";
import { flagsForWindow, type ApiFlag } from "./queries/message-flags.js";
import { unreadSummary, type UnreadSummary } from "./queries/unread.js";
import { recentConversations, type RecentConversation } from "./queries/recent-conversations.js";
import { countMessages, storageStats, type StorageStats } from "./queries/storage-stats.js";
import { ReceivedSets } from "./received.js";
import { ChannelTopicIndex, channelTopics, channelTopicsAsync, type ChannelTopic } from "./queries/channel-topics.js";
import { StoreState, type StoreOptions, type StoreRole } from "./state.js";
import { joinDataDirLock, lockDataDir, type DataDirLock } from "./storage/lock.js";
import { FollowerCatchUp, type CatchUpResult } from "./follower.js";
import {
  openReplicationDb,
  ReplicaApplier,
  readPosition,
  type ReplicaPosition,
  type ReplicatedBatch,
  type ReplicatedTxn,
  unpackDelivery,
} from "./replication.js";
import type {
  Channel,
  ChannelFolder,
  DefaultChannelGroup,
  ChannelPermissions,
  Conversation,
  Device,
  Draft,
  PushOutboxItem,
  GroupSettingValue,
  Message,
  Playground,
  RealmDomain,
  Linkifier,
  ProfileField,
  PresenceRecord,
  Realm,
  RealmExport,
  RealmExportType,
  SavedSnippet,
  NavigationView,
  ScheduledMessage,
  User,
  UserGroup,
  UserTopic,
  RealmEmoji,
  Invite,
  OutboxMail,
  WebhookOutboxItem,
  MissedEmailBatch,
  Attachment,
} from "./types.js";
import { key } from "./index/keys.js";
import type { Settings } from "./settings/defaults.js";
import { verifyIndexes, type VerifyReport } from "./verify.js";
import { registerInternals } from "./internal.js";
import type { EventBatch } from "./events/types.js";
import type { ChangeSet } from "./events/change-set.js";
import { notifyEditTyping, notifyTyping, type TypingInput } from "./actions/typing.js";
import {
  updateRealmSettingDefaults,
  updateSettings,
  type SettingChanges,
  type UpdateSettingsInput,
} from "./actions/settings.js";
import { createDrafts, deleteDraft, editDraft, listDrafts, registerDrafts, type DraftInput } from "./actions/drafts.js";
import {
  createSavedSnippet,
  deleteSavedSnippet,
  editSavedSnippet,
  listSavedSnippets,
} from "./actions/saved-snippets.js";
import { muteUser, mutedUsersView, unmuteUser, type MutedUserView } from "./actions/muted-users.js";
import { addAlertWords, alertWordsOf, removeAlertWords } from "./actions/alert-words.js";
import {
  realmUserStatuses,
  updateOwnStatus,
  updateStatusFor,
  userStatusOf,
  type UserStatusInput,
  type UserStatusView,
} from "./actions/user-status.js";
import type { PasswordRecord } from "./accounts/password.js";
import {
  loginByEmail,
  loginWithPassword,
  preparePasswordChange,
  regenerateApiKey,
  restoreApiKey,
  setCanChangeUserEmails,
  setCanCreateUsers,
  type ScryptCost,
} from "./actions/accounts.js";
import {
  acceptInvite,
  canCreateMultiuseInvite,
  canInviteByEmail,
  createMultiuseInvite,
  inviteUsers,
  listInvites,
  resendInvite,
  revokeInvite,
  usableInvite,
  type AcceptInviteInput,
  type InviteEnvironment,
  type InviteOptions,
  type InviteUsersResult,
} from "./actions/invites.js";
import { importInvite, type ImportedInvite } from "./actions/imported-invites.js";
import { checkJoinForm, type JoinDetails } from "./actions/invites.js";
import { confirmEmailChange } from "./actions/email-change.js";
import { dueMail, markMailAttemptFailed, markMailDelivered, nextMailAttempt } from "./mail/outbox.js";
import {
  missedEmailBatches,
  nextMissedEmailDue,
  resumeEditEmails,
  sendDueMissedEmails,
} from "./actions/missed-message-emails.js";
import { newDigestCache, sendDigestChunk, type DigestCache } from "./actions/digest-emails.js";
import {
  dueWebhookItems,
  finishWebhookItem,
  nextWebhookAttempt,
  resolveWebhookItem,
  retryWebhookItem,
  webhookOutboxItems,
  type WebhookCallResult,
  type WebhookDelivery,
} from "./outgoing-webhooks/outbox.js";
import {
  attachmentForViewer,
  checkUploadQuota,
  createAttachment,
  deleteAttachment,
  listAttachments,
  removeOldUnclaimedAttachments,
  uploadSpaceUsed,
  type NewAttachment,
} from "./actions/attachments.js";
import {
  activeSubscriberIds,
  checkAllPublicStreams,
  defaultChannelIds,
  getChannels,
  listUsers,
  realmBots,
  realmUsers,
  subscribersVisibleTo,
  subscriptionLists,
  userGroups,
  userTopics,
  visibleChannels,
  type GetChannelsInput,
  type GroupListing,
  type SubscriptionLists,
} from "./queries/listings.js";
import { getMessageRecord } from "./storage/message-records.js";
import { accessibleUserIds, canAccessUser } from "./user-access.js";
import {
  consentedUserIds,
  deleteRealmExport,
  downloadableExport,
  exportConsents,
  listRealmExports,
  markExportFailed,
  markExportStarted,
  markExportSucceeded,
  requestRealmExport,
  unfinishedExports,
  type ExportBounds,
} from "./actions/realm-exports.js";
import {
  attachmentTable,
  messageSlice,
  planExport,
  planWholeExport,
  realmTables,
  type ExportPlan,
  type Row,
  type Tables,
} from "./export/zulip-tables.js";
import { compileNarrow, compileTerms, type MessageMatcher } from "./narrow/predicate.js";
import type { RenderFailure } from "./render.js";
import { warmUpSendPath, type WarmUpResult } from "./warm-up.js";

/** How deletions are cut into writes (delete_topic: Zulip's 100 messages a transaction, 50 s a request). */
export interface DeleteTopicOptions {
  readonly batchSize?: number;
  readonly timeBudgetMs?: number;
  /** Readers' read bitmaps a write may change (tests make it small to see the purge span writes). */
  readonly readBitsPerWrite?: number;
}

/**
 * How long (wall) a step of reading ahead for a deletion's write runs before the event
 * loop gets a turn (Store.#warm).
 */
export const DELETION_WARM_STEP_MS = 5;

export class Store {
  readonly #state: StoreState;
  readonly #received: ReceivedSets;
  readonly #channelTopics: ChannelTopicIndex;
  readonly #lock: DataDirLock;
  /** A follower's catch-up with its writer (follower.ts); null on the writer. */
  readonly #follower: FollowerCatchUp | null;
  /** A cluster replica's apply path (replication.ts); null elsewhere. */
  readonly #replica: ReplicaApplier | null;
  /** The running read-bit purge loop (#finishReadPurges), null when none runs. */
  #readPurging: Promise<void> | null = null;

  /**
   * Opens `dir` (creating it) as its only writer: throws DataDirectoryLockedError
   * while another live process, or another Store in this one, has it open. With
   * options.lockToken it joins the lock of the server holding it instead; as a follower
   * (openFollower) it must.
   */
  constructor(dir: string, options: StoreOptions, role: StoreRole = "writer") {
    if (role === "follower" && options.lockToken === undefined)
      throw new BadRequestError("a follower store joins its server's lock: pass lockToken (Store.lockToken)");
    this.#lock =
      options.lockToken !== undefined
        ? joinDataDirLock(dir, options.lockToken)
        : lockDataDir(dir, {
            durable: !(options.noSync ?? false),
            ...(options.holder !== undefined ? { command: options.holder } : {}),
          });
    try {
      this.#state = new StoreState(dir, options.renderer, options, role);
      // In the load's snapshot: the log's end that memory reflects.
      this.#follower = role === "writer" ? null : new FollowerCatchUp(this.#state);
      this.#replica = role === "replica" ? new ReplicaApplier(this.#state.tables) : null;
      this.#received = new ReceivedSets(this.#state);
      const nextTurn = (): Promise<void> => this.nextTurn();
      this.#channelTopics = new ChannelTopicIndex(this.#state, this.#state, undefined, undefined, nextTurn);
    } catch (error) {
      this.#lock.release();
      throw error;
    }
    // A failed write may have extended derived sets with IDs it then gave back.
    this.#state.onRollback(() => this.#received.clear());
    // Registered first, so every later listener and the write's events read fresh sets.
    this.#state.onChanges((changes) => this.#received.forgetChanged(changes));
    this.#state.onChanges((changes) => this.#state.accessibleUsers.forgetChanged(changes));
    if (role === "writer") {
      // A crash may have cut a deletion's read-bit purge short: it ends before anything else.
      while (continueReadPurge(this.#state));
      // A crash may have left bitmap adds journaled but not written (index/deferred-adds.ts).
      this.#state.settleDeferredBitmaps();
      // And an edit's missed-message email chunks unwritten: later turns write them, as after the edit.
      resumeEditEmails(this.#state);
    }
    registerInternals(this, this.#state, this.#received);
  }

  /** "writer", or "follower" for a store opened with openFollower. */
  get role(): StoreRole {
    return this.#state.role;
  }

  /**
   * The token of the lock this store holds or joined: what a follower of the same server
   * presents (StoreOptions.lockToken). Hand it only to the server's own workers.
   */
  get lockToken(): string {
    return this.#lock.holder.token;
  }

  /**
   * A follower: applies every write its writer committed since the last call, so that
   * the next read sees them (follower.ts). Call before answering each request; costs one
   * key read when nothing changed. On the writer: nothing to do.
   */
  catchUp(): CatchUpResult {
    if (this.#follower === null) return { applied: 0, reloadedAll: false, seq: this.#state.counters.nextChangeSeq - 1 };
    return this.#follower.catchUp();
  }

  /**
   * The last change-log sequence number this store's memory reflects: a follower's last
   * catch-up (without catching up), the writer's last commit.
   */
  get caughtUpSeq(): number {
    return this.#follower?.appliedSeq ?? this.#state.counters.nextChangeSeq - 1;
  }

  /**
   * A follower worker's: an event batch its writer released (packed as replication.ts
   * ships them), to this process's event listeners (its own queues). Memory first catches
   * up to the batch's write, so that who gets each event and how it reads are decided on
   * state that holds it; batches of ephemeral events (seq 0) go out as they are.
   */
  releaseWriterBatch(batch: ReplicatedBatch): void {
    if (this.#follower === null || this.#replica !== null)
      throw new FollowerWriteError("releasing a writer's events (open the store with openFollower)");
    if (batch.seq > this.#follower.appliedSeq) this.#follower.catchUp();
    this.#state.releaseReplicated({ seq: batch.seq, deliveries: batch.deliveries.map(unpackDelivery) });
  }

  /**
   * Lets other work run (setImmediate), then, on a follower, catches up before the
   * caller reads on. lmdb-js renews a process's read snapshot between turns of the event
   * loop, while a follower's memory moves only at catchUp: a read that yields and goes
   * on could mix the memory it caught up with newer records (a message moved to a
   * channel memory does not know yet). Reads that yield (a GET /messages answer rendered
   * in slices, a channel's topics) go through here, so each of their turns sees one
   * state, as each turn on the writer does. A replica applies what it writes itself.
   */
  async nextTurn(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.#replica === null) this.#follower?.catchUp();
  }

  /**
   * The stream position this store reflects (docs/cluster.md): a replica's last applied
   * transaction, a cluster leader's last committed one; { seq: 0 } for a store never in a cluster.
   */
  get replicationPosition(): ReplicaPosition {
    if (this.#state.replication !== null) return this.#state.replication.position;
    return readPosition(openReplicationDb(this.#state.tables));
  }

  /** A cluster leader's: the stream stored transactions up to `seq` (their undo records may go). */
  confirmReplicated(seq: number): void {
    this.#state.replication?.confirm(seq);
  }

  /**
   * A replica's: applies leader transactions (the next stream messages, in order) by key
   * in one LMDB transaction, brings memory up to date as a follower does, then releases
   * their events, in order, to this store's listeners (the node's event queues).
   */
  applyReplicated(txns: readonly ReplicatedTxn[]): CatchUpResult {
    if (this.#replica === null || this.#follower === null)
      throw new FollowerWriteError("applying a replicated transaction (open the store with openReplica)");
    this.#replica.apply(txns);
    const result = this.#follower.catchUp();
    for (const txn of txns)
      for (const batch of txn.batches)
        this.#state.releaseReplicated({ seq: batch.seq, deliveries: batch.deliveries.map(unpackDelivery) });
    return result;
  }

  /**
   * A replica's: undoes the transaction at its position, which this node committed as
   * leader and the stream does not have (docs/cluster.md §6); false when it has no undo
   * record for it. Memory is reloaded whole.
   */
  undoUnreplicated(): boolean {
    if (this.#replica === null || this.#follower === null)
      throw new FollowerWriteError("undoing a transaction (open the store with openReplica)");
    const undone = this.#replica.undoLast();
    if (undone) this.#follower.catchUp();
    return undone;
  }

  /** A replica's: drops undo records of transactions the stream has (at or below `seq`). */
  dropUndoThrough(seq: number): void {
    this.#replica?.dropUndoThrough(seq);
  }

  /**
   * Renders and tokenises a built-in Markdown corpus a few times, writing nothing,
   * so that a freshly started server handles its first long messages with optimised
   * code (see warm-up.ts). Servers call it once before they listen.
   */
  warmUp(rounds?: number): WarmUpResult {
    return warmUpSendPath(this.#state, rounds);
  }

  /** Writes pending presence, closes the environment and frees the directory for the next opener. */
  close(): void {
    try {
      try {
        if (this.#follower === null) {
          this.#state.settleDeferredBitmaps();
          flushPresence(this.#state);
        }
      } finally {
        this.#state.close();
      }
    } finally {
      this.#lock.release();
    }
  }

  /** The highest message ID allocated so far (0 if none). */
  get lastMessageId(): number {
    return this.#state.lastMessageId;
  }

  /** LMDB map size and pages in use, readers, bitmap cache bytes (cheap enough for every metrics scrape). */
  storageStats(): StorageStats {
    return storageStats(this.#state);
  }

  /** How many messages the store holds; iterates keys, so for tools (backup manifests), not hot paths. */
  countMessages(): number {
    return countMessages(this.#state);
  }

  /** Every realm, by ID. */
  listRealms(): Realm[] {
    return [...this.#state.realms.values()].sort((a, b) => a.id - b.id);
  }

  /**
   * Runs many actions in one transaction (bulk loading: generators, imports). All or
   * nothing: if any action throws, none is kept.
   */
  batch<T>(fn: () => T): T {
    return this.#state.batch(fn);
  }

  // ---- realms and users ----

  createRealm(input: CreateRealmInput): { realm: Realm; owner: User } {
    return createRealm(this.#state, input);
  }
  setRealmDeactivated(realmId: number, deactivated: boolean): void {
    setRealmDeactivated(this.#state, realmId, deactivated);
  }
  findRealm(realmId: number): Realm | undefined {
    return this.#state.realms.get(realmId);
  }
  /** Zulip's new_stream_announcements_stream: where channels created with `announce` are announced. */
  setNewChannelAnnouncementsChannel(realmId: number, channelId: number | null): void {
    setNewChannelAnnouncementsChannel(this.#state, realmId, channelId);
  }
  findRealmBySubdomain(subdomain: string): Realm | undefined {
    const id = this.#state.realmBySubdomain.get(subdomain.toLowerCase());
    return id === undefined ? undefined : this.#state.realms.get(id);
  }
  systemGroupId(realmId: number, name: string): number {
    return systemGroupId(this.#state, realmId, name);
  }
  createUser(input: CreateUserInput): User {
    return createUser(this.#state, input);
  }
  /** Stores a password hash made with hashPassword (accounts/password.ts). */
  setPassword(userId: number, password: PasswordRecord): void {
    setPassword(this.#state, userId, password);
  }
  /** The user's password hash, for verifyPassword; undefined when they have none. */
  passwordOf(userId: number): PasswordRecord | undefined {
    return passwordOf(this.#state, userId);
  }
  updateUser(actorId: number, targetId: number, input: UpdateUserInput): User {
    const profile = input.profileData;
    const profileValues = profile === undefined ? [] : checkProfileDataOf(this.#state, actorId, targetId, profile);
    return updateUser(this.#state, actorId, targetId, { ...input, profileValues });
  }
  /** Refuses before an image is stored when the person may not change their avatar. */
  checkAvatarChange(userId: number): void {
    checkAvatarChange(this.#state, userId);
  }
  /** The person's own avatar: an uploaded image's file name, or null for Gravatar; returns the file replaced. */
  setAvatar(userId: number, fileName: string | null): { readonly user: User; readonly replaced: string | null } {
    return setAvatar(this.#state, userId, fileName);
  }
  setUserActive(userId: number, active: boolean): User {
    return setUserActive(this.#state, userId, active);
  }

  // ---- administering users and bots (actions/user-lifecycle, actions/bots) ----

  /** A person's account as Zulip makes one (CLI, POST /users): default channels, Welcome Bot. */
  createAccount(input: NewAccountInput): User {
    return createAccount(this.#state, input);
  }
  /** POST /users before hashing the password: Zulip's checks; the trimmed email and name. */
  checkCreateUserByAdmin(
    actorId: number,
    input: CreateUserByAdminInput & { readonly password: string },
  ): { readonly email: string; readonly fullName: string } {
    return checkCreateUserByAdmin(this.#state, actorId, input);
  }
  /** POST /users with the password hashed (hashNewPassword). */
  createUserByAdmin(actorId: number, input: CreateUserByAdminInput & { readonly password: PasswordRecord }): User {
    return createUserByAdmin(this.#state, actorId, input);
  }
  /** DELETE /users/{user_id}. */
  deactivateUser(actorId: number, targetId: number, notice?: DeactivationNotice): void {
    deactivateUser(this.#state, actorId, targetId, notice);
  }
  /** DELETE /users/me. */
  deactivateOwnUser(userId: number): void {
    deactivateOwnUser(this.#state, userId);
  }
  /** POST /users/{user_id}/reactivate. */
  reactivateUser(actorId: number, targetId: number): void {
    reactivateUser(this.#state, actorId, targetId);
  }
  /** POST /bots. */
  createBot(actorId: number, input: CreateBotInput): User {
    return createBot(this.#state, actorId, input);
  }
  /** PATCH /bots/{bot_id}: the bot as it now is. */
  updateBot(actorId: number, botId: number, input: UpdateBotInput): User {
    return updateBot(this.#state, actorId, botId, input);
  }
  /** DELETE /bots/{bot_id}. */
  deactivateBot(actorId: number, botId: number): void {
    deactivateBot(this.#state, actorId, botId);
  }
  /** GET /bots/{bot_id}/api_key. */
  botApiKey(actorId: number, botId: number): string {
    return botApiKey(this.#state, actorId, botId);
  }
  /** POST /bots/{bot_id}/api_key/regenerate. */
  regenerateBotApiKey(actorId: number, botId: number): string {
    return regenerateBotApiKey(this.#state, actorId, botId);
  }
  /** An incoming webhook's message, sent as `senderId`; null when its channel does not exist (the owner is told). */
  sendWebhookMessage(
    senderId: number,
    destination: WebhookDestination,
    content: string,
    client: string,
  ): SentMessage | null {
    return sendWebhookMessage(this.#state, senderId, destination, content, client);
  }
  /** GET /bot_storage: the calling bot's values of `keys` (every key when empty). */
  botStorage(botId: number, keys?: readonly string[]): Record<string, string> {
    return getBotStorage(this.#state, botId, keys);
  }
  /** PUT /bot_storage: sets every entry, or none past the bot's size limit. */
  setBotStorage(botId: number, storage: Readonly<Record<string, string>>): void {
    setBotStorage(this.#state, botId, storage);
  }
  /** DELETE /bot_storage: removes `keys` (every key when empty), or none when one is missing. */
  removeBotStorage(botId: number, keys?: readonly string[]): void {
    removeBotStorage(this.#state, botId, keys);
  }
  /** Tells a bot's owner about a problem with its webhook (at most once a minute per bot). */
  notifyBotOwner(botId: number, content: string): void {
    notifyBotOwner(this.#state, botId, content);
  }
  /** What POST /register leaves out and a bot's settings fill in: all_public_streams and a default narrow. */
  queueDefaults(userId: number): {
    readonly allPublicChannels: boolean;
    readonly channelName: string | null;
    readonly channelId: number | null;
  } {
    return queueDefaults(this.#state, requireUser(this.#state, userId));
  }
  /** The realm's can_create_bots_group and can_create_write_only_bots_group (register). */
  botCreationGroups(realmId: number): { readonly all: GroupSettingValue; readonly writeOnly: GroupSettingValue } {
    return {
      all: canCreateBotsGroup(this.#state, realmId),
      writeOnly: canCreateWriteOnlyBotsGroup(this.#state, realmId),
    };
  }
  /** Grants or revokes Zulip's can_create_users special permission (an operator's decision). */
  setCanCreateUsers(userId: number, value: boolean): User {
    return setCanCreateUsers(this.#state, userId, value);
  }
  getUser(userId: number): User {
    return requireUser(this.#state, userId);
  }
  /** A user by ID, or undefined (for rendering: names and emails in messages). */
  findUser(userId: number): User | undefined {
    return this.#state.users.get(userId);
  }
  /** The user's effective personal settings (Zulip's names; defaults overlaid with stored values). */
  userSettings(userId: number): Settings {
    requireUser(this.#state, userId);
    return this.#state.settingsOf(userId);
  }
  /** The settings new users of the realm start with. */
  realmSettingDefaults(realmId: number): Settings {
    return this.#state.realmDefaultsOf(realmId);
  }
  /** PATCH /settings: the caller's settings, name and time zone, or an administrator's bulk edit (targetUsers). */
  updateSettings(actorId: number, input: UpdateSettingsInput): void {
    updateSettings(this.#state, actorId, input);
  }
  /**
   * updateSettings with Zulip's password change: a non-empty `newPassword` needs the
   * right `oldPassword` ("Wrong password!") and must be strong enough ("New password
   * is too weak!"); it is stored in the same write as the other changes.
   */
  async updateSettingsWithPassword(
    actorId: number,
    input: Omit<UpdateSettingsInput, "passwordChange"> & { readonly oldPassword?: string },
    cost?: ScryptCost,
  ): Promise<void> {
    const { oldPassword, ...rest } = input;
    const wanted = input.targetUsers === undefined && input.newPassword !== undefined && input.newPassword !== "";
    const passwordChange = wanted
      ? await preparePasswordChange(this.#state, actorId, oldPassword ?? "", input.newPassword ?? "", cost)
      : undefined;
    updateSettings(this.#state, actorId, { ...rest, ...(passwordChange !== undefined ? { passwordChange } : {}) });
  }

  // ---- logins and credentials ----

  /** POST /fetch_api_key: the realm's user with this real email and password (LoginError otherwise). */
  loginWithPassword(realmId: number, email: string, password: string, cost?: ScryptCost): Promise<User> {
    return loginWithPassword(this.#state, realmId, email, password, cost);
  }
  /** The realm's user with this real email, for an email another party verified (JWT); LoginError otherwise. */
  loginByEmail(realmId: number, email: string): User {
    return loginByEmail(this.#state, realmId, email);
  }
  /** A new API key for the user; the old one is refused from now on. */
  regenerateApiKey(userId: number): string {
    return regenerateApiKey(this.#state, userId);
  }

  /** The key the user had on another server (`parley realm move`); refused if another user here holds it. */
  restoreApiKey(userId: number, apiKey: string): void {
    restoreApiKey(this.#state, userId, apiKey);
  }
  /** Grants or revokes Zulip's can_change_user_emails special permission (an operator's decision). */
  setCanChangeUserEmails(userId: number, value: boolean): User {
    return setCanChangeUserEmails(this.#state, userId, value);
  }
  /** PATCH /realm/user_settings_defaults: what users created later start with. */
  updateRealmSettingDefaults(actorId: number, settings: SettingChanges): void {
    updateRealmSettingDefaults(this.#state, actorId, settings);
  }

  // ---- invitations, email changes and the mail outbox ----

  /** POST /invites: the invitations made (each mailed) and the addresses skipped because they have accounts. */
  inviteUsers(actorId: number, rawEmails: string, options: InviteOptions, env: InviteEnvironment): InviteUsersResult {
    return inviteUsers(this.#state, actorId, rawEmails, options, env);
  }
  /** POST /invites/multiuse: a reusable invitation link. */
  createMultiuseInvite(
    actorId: number,
    options: InviteOptions,
    env: Pick<InviteEnvironment, "realmUrl">,
  ): { invite: Invite; link: string } {
    return createMultiuseInvite(this.#state, actorId, options, env);
  }
  /** An invitation as an export had it (parley import): same key, times and status; nothing mailed. */
  importInvite(realmId: number, input: ImportedInvite): Invite {
    return importInvite(this.#state, realmId, input);
  }
  /** GET /invites: live invitations the caller controls. */
  listInvites(actorId: number): Invite[] {
    return listInvites(this.#state, actorId);
  }
  /** DELETE /invites/{id} (kind "email") and DELETE /invites/multiuse/{id} (kind "multiuse"). */
  revokeInvite(actorId: number, inviteId: number, kind: Invite["kind"]): void {
    revokeInvite(this.#state, actorId, inviteId, kind);
  }
  /** POST /invites/{id}/resend. */
  resendInvite(actorId: number, inviteId: number, env: InviteEnvironment): void {
    resendInvite(this.#state, actorId, inviteId, env);
  }
  /** May the user invite by email (register's can_invite_others_to_realm)? */
  canInviteByEmail(userId: number): boolean {
    return canInviteByEmail(this.#state, requireUser(this.#state, userId));
  }
  /** May the user create reusable invitation links? */
  canCreateMultiuseInvite(userId: number): boolean {
    return canCreateMultiuseInvite(this.#state, requireUser(this.#state, userId));
  }
  /** The invitation behind a join link, if it can still be used in the realm (InvalidLinkError otherwise). */
  usableInvite(realmId: number, key: string): Invite {
    return usableInvite(this.#state, realmId, key);
  }
  /** The join page's form, checked whole before its password is hashed (InvalidLinkError, BadRequestError). */
  checkJoinForm(input: JoinDetails & { readonly password: string }): void {
    checkJoinForm(this.#state, input);
  }
  /** The join page's submit: the new account. */
  acceptInvite(input: AcceptInviteInput): User {
    return acceptInvite(this.#state, input);
  }
  /** Opening an email-change link: the user with the new address. */
  confirmEmailChange(realmId: number, key: string, realmUrl: string): User {
    return confirmEmailChange(this.#state, realmId, key, realmUrl);
  }
  /** Outbox mail due at `nowMs` (UNIX ms), oldest first. */
  dueMail(nowMs: number, limit = 100): OutboxMail[] {
    return dueMail(this.#state, nowMs, limit);
  }
  /** The earliest next delivery attempt (UNIX ms), or null when nothing is pending. */
  nextMailAttempt(): number | null {
    return nextMailAttempt(this.#state);
  }
  /** Turns the missed-message batches due at `now` (UNIX seconds) into outbox mail; answers how many mails. */
  sendDueMissedEmails(now: number, realmUrl: (realm: Realm) => string): number {
    return sendDueMissedEmails(this.#state, now, realmUrl);
  }
  /** Topic tallies for one round of digest runs (sendDigestChunk); a new one per round. */
  newDigestCache(): DigestCache {
    return newDigestCache();
  }
  /**
   * One write of the weekly digests due at `now` (UNIX seconds): answers how many mails
   * it enqueued, or null when no realm's digest run has work left today.
   */
  sendDigestChunk(now: number, realmUrl: (realm: Realm) => string, cache: DigestCache): number | null {
    return sendDigestChunk(this.#state, now, realmUrl, cache);
  }
  /** When the next missed-message batch is due (UNIX seconds), or null when none waits. */
  nextMissedEmailDue(): number | null {
    return nextMissedEmailDue(this.#state);
  }
  /** Every missed-message batch waiting for its email. */
  missedEmailBatches(): MissedEmailBatch[] {
    return missedEmailBatches(this.#state);
  }
  /** Every mail still in the outbox (pending or failed), by ID. */
  outboxMail(): OutboxMail[] {
    return [...internalsOutbox(this.#state)];
  }
  markMailDelivered(mailId: number): void {
    markMailDelivered(this.#state, mailId);
  }
  /** A failed attempt: retried at `retryAt` (UNIX ms), or given up when null. */
  markMailAttemptFailed(mailId: number, error: string, retryAt: number | null): OutboxMail | undefined {
    return markMailAttemptFailed(this.#state, mailId, error, retryAt);
  }

  // ---- the webhook outbox (outgoing webhook bots; src/outgoing-webhooks sends) ----

  /** Every call waiting for an outgoing webhook bot, oldest first. */
  webhookOutboxItems(limit = 1000): WebhookOutboxItem[] {
    return webhookOutboxItems(this.#state, limit);
  }
  /** Calls whose attempt is due at `nowMs` (UNIX ms), oldest first. */
  dueWebhookItems(nowMs: number, limit = 100): WebhookOutboxItem[] {
    return dueWebhookItems(this.#state, nowMs, limit);
  }
  /** The earliest next attempt (UNIX ms), or null when the outbox is empty. */
  nextWebhookAttempt(): number | null {
    return nextWebhookAttempt(this.#state);
  }
  /** What a call needs sent now, or null when nothing is left to call (finish it with nothing to post). */
  resolveWebhookItem(itemId: number): WebhookDelivery | null {
    return resolveWebhookItem(this.#state, itemId);
  }
  /** Removes a call and posts what it produced, in one write; the IDs of the messages posted. */
  finishWebhookItem(itemId: number, result: WebhookCallResult): number[] {
    return finishWebhookItem(this.#state, itemId, result);
  }
  /** A failed attempt, tried again at `retryAt` (UNIX ms). */
  retryWebhookItem(itemId: number, error: string, retryAt: number): void {
    retryWebhookItem(this.#state, itemId, error, retryAt);
  }

  // ---- drafts and saved snippets (each user's own) ----

  createDrafts(userId: number, drafts: readonly DraftInput[]): number[] {
    return createDrafts(this.#state, userId, drafts);
  }
  editDraft(userId: number, draftId: number, draft: DraftInput): void {
    editDraft(this.#state, userId, draftId, draft);
  }
  deleteDraft(userId: number, draftId: number): void {
    deleteDraft(this.#state, userId, draftId);
  }
  /** GET /drafts: most recently edited first; refused while synchronization is off. */
  drafts(userId: number): Draft[] {
    return listDrafts(this.#state, userId);
  }
  /** register's drafts: empty while synchronization is off. */
  registerDrafts(userId: number): Draft[] {
    return registerDrafts(this.#state, userId);
  }
  createSavedSnippet(userId: number, title: string, content: string): SavedSnippet {
    return createSavedSnippet(this.#state, userId, title, content);
  }
  editSavedSnippet(userId: number, id: number, changes: { readonly title?: string; readonly content?: string }): void {
    editSavedSnippet(this.#state, userId, id, changes);
  }
  deleteSavedSnippet(userId: number, id: number): void {
    deleteSavedSnippet(this.#state, userId, id);
  }
  savedSnippets(userId: number): SavedSnippet[] {
    return listSavedSnippets(this.#state, userId);
  }
  /** GET /navigation_views: the user's own, in the order added. */
  navigationViews(userId: number): readonly NavigationView[] {
    return listNavigationViews(this.#state, userId);
  }
  addNavigationView(
    userId: number,
    input: { readonly fragment: string; readonly isPinned: boolean; readonly name?: string },
  ): void {
    addNavigationView(this.#state, userId, input);
  }
  updateNavigationView(
    userId: number,
    fragment: string,
    changes: { readonly isPinned?: boolean; readonly name?: string },
  ): void {
    updateNavigationView(this.#state, userId, fragment, changes);
  }
  removeNavigationView(userId: number, fragment: string): void {
    removeNavigationView(this.#state, userId, fragment);
  }
  // ---- user status (text, emoji; the deprecated away) ----

  /** POST /users/me/status. */
  updateOwnStatus(userId: number, input: UserStatusInput): void {
    updateOwnStatus(this.#state, userId, input);
  }
  /** POST /users/{user_id}/status: administrators, for human users. */
  updateStatusFor(actorId: number, targetId: number, input: Omit<UserStatusInput, "away">): void {
    updateStatusFor(this.#state, actorId, targetId, input);
  }
  /** GET /users/{user_id}/status. */
  userStatus(viewerId: number, targetId: number): UserStatusView {
    return userStatusOf(this.#state, viewerId, targetId);
  }
  /** register's user_status. */
  realmUserStatuses(viewerId: number): Record<string, UserStatusView> {
    return realmUserStatuses(this.#state, viewerId);
  }
  // ---- muted users ----

  /** POST /users/me/muted_users/{id}: then the muted user's earlier messages are marked read for the muter. */
  muteUser(userId: number, mutedId: number): void {
    muteUser(this.#context(userId), mutedId);
  }
  /** DELETE /users/me/muted_users/{id}. */
  unmuteUser(userId: number, mutedId: number): void {
    unmuteUser(this.#state, this.#context(userId).user, mutedId);
  }
  /** register's muted_users. */
  mutedUsers(userId: number): MutedUserView[] {
    return mutedUsersView(this.#state, userId);
  }
  // ---- alert words ----

  /** GET /users/me/alert_words and register's alert_words. */
  alertWords(userId: number): readonly string[] {
    return alertWordsOf(this.#state, userId);
  }
  /** POST /users/me/alert_words: the whole list after. */
  addAlertWords(userId: number, words: readonly string[]): readonly string[] {
    return addAlertWords(this.#state, this.#context(userId).user, words);
  }
  /** DELETE /users/me/alert_words: the whole list after. */
  removeAlertWords(userId: number, words: readonly string[]): readonly string[] {
    return removeAlertWords(this.#state, this.#context(userId).user, words);
  }
  // ---- uploaded files (bytes on disk, records here) ----

  /** Records an upload whose bytes are already stored; `quotaBytes` null: no realm quota. */
  createAttachment(input: NewAttachment, quotaBytes: number | null): Attachment {
    return createAttachment(this.#state, input, quotaBytes);
  }
  /** Refuses (REALM_UPLOAD_QUOTA) an upload of `size` bytes that would pass the realm's quota. */
  checkUploadQuota(realmId: number, size: number, quotaBytes: number | null): void {
    checkUploadQuota(this.#state, realmId, size, quotaBytes);
  }
  /** DELETE /attachments/{id}: the owner's own; returns the record whose bytes the caller deletes. */
  deleteAttachment(userId: number, attachmentId: number): Attachment {
    return deleteAttachment(this.#state, userId, attachmentId);
  }
  /** GET /attachments: the user's own uploads. */
  attachments(userId: number): Attachment[] {
    return listAttachments(this.#state, userId);
  }
  /** Bytes of the realm's stored uploads. */
  uploadSpaceUsed(realmId: number): number {
    return uploadSpaceUsed(this.#state, realmId);
  }
  /**
   * The file at `pathId` when `viewerId` (null: no credentials) may download it in
   * realm `realmId` (the request's); undefined when it does not exist or they may not,
   * alike.
   */
  attachmentForDownload(viewerId: number | null, realmId: number, pathId: string): Attachment | undefined {
    const viewer = viewerId === null ? null : this.#state.users.get(viewerId);
    if (viewer === undefined) return undefined;
    return attachmentForViewer(this.#state, viewer, realmId, pathId);
  }
  /**
   * The file at `pathId` in realm `realmId`, without an access check: for a temporary
   * URL, whose token stands for the check made when it was issued.
   */
  attachmentInRealm(realmId: number, pathId: string): Attachment | undefined {
    const id = this.#state.attachmentByPath.get(pathId);
    const attachment = id === undefined ? undefined : this.#state.attachments.get(id);
    return attachment?.realmId === realmId ? attachment : undefined;
  }
  /** Removes the records of uploads no message claimed, uploaded before `olderThan` (UNIX seconds); returns them. */
  removeOldUnclaimedAttachments(olderThan: number): Attachment[] {
    return removeOldUnclaimedAttachments(this.#state, olderThan);
  }
  /** Every attachment record (backups, cleanup of orphan files). */
  allAttachmentPaths(): Set<string> {
    return new Set(this.#state.attachmentByPath.keys());
  }
  /** The engine's clock, UNIX seconds. */
  now(): number {
    return this.#state.now();
  }

  /** Every user of the realm, active or not, by ID. */
  realmUsers(realmId: number): User[] {
    return realmUsers(this.#state, realmId);
  }

  /** The realm's bots, active and deactivated, by ascending ID. */
  realmBots(realmId: number): User[] {
    return realmBots(this.#state, realmId);
  }
  /** GET /users for `viewerId`: the realm's users, or those named ("Invalid user ID: N"). */
  /**
   * The human users a limited guest may see (themselves included), or null when the
   * viewer sees everyone; bots are always visible (user-access.ts).
   */
  accessibleUserIds(viewerId: number): ReadonlySet<number> | null {
    return accessibleUserIds(this.#state, this.#actor(viewerId));
  }
  /** Zulip's check_can_access_user. */
  canAccessUser(viewerId: number, target: User): boolean {
    return canAccessUser(this.#state, this.#actor(viewerId), target);
  }
  listUsers(viewerId: number, ids?: readonly number[]): User[] {
    return listUsers(this.#state, this.#actor(viewerId), ids);
  }
  findUserByEmail(realmId: number, email: string): User | undefined {
    const id = this.#state.userByEmail.get(`${realmId}:${email.trim().toLowerCase()}`);
    return id === undefined ? undefined : this.#state.users.get(id);
  }
  findUserByApiKey(apiKey: string): User | undefined {
    const id = this.#state.userByApiKey.get(apiKey);
    return id === undefined ? undefined : this.#state.users.get(id);
  }

  // ---- channels, subscriptions, groups, topics ----

  subscribe(actorId: number, input: SubscribeInput): SubscribeResult {
    return subscribe(this.#state, actorId, input);
  }
  unsubscribe(actorId: number, channelNames: readonly string[], principals?: readonly Principal[]): UnsubscribeResult {
    return unsubscribe(this.#state, actorId, channelNames, principals);
  }
  setChannelMuted(userId: number, channelId: number, muted: boolean): void {
    setChannelMuted(this.#state, userId, channelId, muted);
  }
  /** POST /users/me/subscriptions/properties: every change checked, then all applied in one write. */
  updateSubscriptionProperties(userId: number, changes: readonly SubscriptionPropertyChange[]): void {
    updateSubscriptionProperties(this.#state, userId, changes);
  }
  getChannel(channelId: number): Channel | undefined {
    return this.#state.channels.get(channelId);
  }
  /** GET /streams/{id}: a channel whose metadata the viewer has, archived ones too (Zulip's FL 480). */
  channelForViewer(viewerId: number, channelId: number): Channel {
    return accessChannelById(this.#state, this.#actor(viewerId), channelId, { content: false, archived: true });
  }
  /** GET /get_stream_id: a channel whose content the viewer has, by name. */
  channelIdByName(viewerId: number, name: string): number {
    return accessChannelByName(this.#state, this.#actor(viewerId), name).id;
  }
  /** GET /streams/{id}/members: the subscribers of a channel whose metadata the viewer has. */
  channelMembers(viewerId: number, channelId: number): readonly number[] {
    const viewer = this.#actor(viewerId);
    const channel = accessChannelById(this.#state, viewer, channelId, { content: false, archived: true });
    return subscribersVisibleTo(this.#state, viewer, channel) ?? [];
  }
  /** PATCH /streams/{id}: Zulip's channel administration, all or nothing. */
  updateChannel(actorId: number, channelId: number, input: UpdateChannelInput): void {
    updateChannel(this.#state, actorId, channelId, input);
  }
  /** DELETE /streams/{id}: archives the channel (`notice: false`: without the Notification Bot's notice). */
  archiveChannel(actorId: number, channelId: number, options: { readonly notice?: boolean } = {}): void {
    archiveChannel(this.#state, actorId, channelId, options);
  }
  /** What unsubscribing oneself from these channels would refuse, without writing. */
  checkUnsubscribe(actorId: number, channelNames: readonly string[]): void {
    checkUnsubscribe(this.#state, actorId, channelNames);
  }
  /** POST /channels/create: a new channel (never an existing one) and its subscribers; its ID. */
  createChannel(actorId: number, input: CreateChannelInput): number {
    return createChannel(this.#state, actorId, input);
  }
  /** The viewer's realm's channel folders in their order (register, GET /channel_folders). */
  channelFolders(viewerId: number, includeArchived: boolean): ChannelFolder[] {
    return realmChannelFolders(this.#state, this.#actor(viewerId).realmId, includeArchived);
  }
  /** POST /channel_folders/create (administrators). */
  createChannelFolder(actorId: number, input: { readonly name: string; readonly description: string }): ChannelFolder {
    return createChannelFolder(this.#state, actorId, input);
  }
  /** PATCH /channel_folders/{id}: name, description, archiving (administrators). */
  updateChannelFolder(
    actorId: number,
    folderId: number,
    input: { readonly name?: string; readonly description?: string; readonly isArchived?: boolean },
  ): void {
    updateChannelFolder(this.#state, actorId, folderId, input);
  }
  /** PATCH /channel_folders: every folder's ID in the new order (administrators). */
  reorderChannelFolders(actorId: number, order: readonly number[]): void {
    reorderChannelFolders(this.#state, actorId, order);
  }
  /** What the user may do with channels under the realm's settings (register's can_create_*_streams). */
  channelRights(userId: number): ChannelRights {
    return channelRights(this.#state, this.#actor(userId));
  }
  /** POST/DELETE /default_streams (administrators). */
  setDefaultChannel(actorId: number, channelId: number, isDefault: boolean): void {
    setDefaultChannel(this.#state, actorId, channelId, isDefault);
  }
  /** Register's realm_default_stream_groups (none for guests), by name. */
  defaultChannelGroups(userId: number): readonly DefaultChannelGroup[] {
    return defaultChannelGroupsFor(this.#state, userId);
  }
  /** POST /default_stream_groups/create (administrators). */
  createDefaultChannelGroup(
    actorId: number,
    input: { readonly name: string; readonly description: string; readonly channelNames: readonly string[] },
  ): DefaultChannelGroup {
    return createDefaultChannelGroup(this.#state, actorId, input);
  }
  /** PATCH /default_stream_groups/{group_id}: a new name or description. */
  updateDefaultChannelGroupInfo(
    actorId: number,
    groupId: number,
    input: { readonly name?: string | undefined; readonly description?: string | undefined },
  ): void {
    updateDefaultChannelGroupInfo(this.#state, actorId, groupId, input);
  }
  /** PATCH /default_stream_groups/{group_id}/streams: op "add" or "remove". */
  updateDefaultChannelGroupChannels(actorId: number, groupId: number, op: string, names: readonly string[]): void {
    updateDefaultChannelGroupChannels(this.#state, actorId, groupId, op, names);
  }
  /** DELETE /default_stream_groups/{group_id}. */
  removeDefaultChannelGroup(actorId: number, groupId: number): void {
    removeDefaultChannelGroup(this.#state, actorId, groupId);
  }
  /** GET /users/{id}/subscriptions/{stream_id}. */
  isUserSubscribed(viewerId: number, userId: number, channelId: number): boolean {
    return isUserSubscribed(this.#state, this.#actor(viewerId), userId, channelId);
  }
  /** GET /streams/{id}/email_address: the channel and its email token for `senderId` (null: the gateway). */
  channelEmailToken(viewerId: number, channelId: number, senderId: number | null): { channel: Channel; token: string } {
    return channelEmailToken(this.#state, this.#actor(viewerId), channelId, senderId);
  }
  /** GET /users/{id}/channels: the user's channels whose metadata the viewer has. */
  userChannelIds(viewerId: number, userId: number): number[] {
    return userChannelIds(this.#state, this.#actor(viewerId), userId);
  }
  /** Zulip's do_get_streams for `userId` (GET /streams). */
  getChannels(userId: number, input: GetChannelsInput): Channel[] {
    return getChannels(this.#state, this.#actor(userId), input);
  }
  /** The channels `userId` can see, by name (register's streams). */
  visibleChannels(userId: number, includeArchived: boolean): Channel[] {
    return visibleChannels(this.#state, this.#actor(userId), includeArchived);
  }
  /** The user's subscriptions, past subscriptions and never-subscribed visible channels. */
  subscriptionLists(userId: number, includeArchived: boolean): SubscriptionLists {
    return subscriptionLists(this.#state, this.#actor(userId), includeArchived);
  }
  /** Active subscribers of a channel, ascending (no access check: for counts). */
  subscriberCount(channelId: number): number {
    return activeSubscriberIds(this.#state, channelId).length;
  }
  /** The channel's subscriber IDs, if `viewerId` may list them. */
  subscribersVisibleTo(viewerId: number, channelId: number): readonly number[] | undefined {
    const channel = this.#state.channels.get(channelId);
    return channel ? subscribersVisibleTo(this.#state, this.#actor(viewerId), channel) : undefined;
  }
  /** IDs of the viewer's realm's default channels. */
  defaultChannelIds(userId: number): number[] {
    return defaultChannelIds(this.#state, this.#actor(userId));
  }
  /** The viewer's realm's user groups, with members (system groups: by role). */
  userGroups(userId: number, includeDeactivated: boolean): GroupListing[] {
    return userGroups(this.#state, this.#actor(userId), includeDeactivated);
  }
  /** The user's topic visibility policies. */
  userTopics(userId: number): UserTopic[] {
    return userTopics(this.#state, this.#actor(userId));
  }
  /** Refuses all_public_streams to users who may not have it (guests). */
  checkAllPublicStreams(userId: number): void {
    checkAllPublicStreams(this.#actor(userId));
  }
  /** A DM conversation by ID (participants), for rendering messages the caller may read. */
  findConversation(conversationId: number): Conversation | undefined {
    return this.#state.conversations.get(conversationId);
  }
  /** Every group setting of the channel, defaults filled in for settings older records lack. */
  channelGroupSettings(channel: Channel): Required<ChannelPermissions> {
    return channelGroupSettings(this.#state, channel);
  }
  /** Zulip's deprecated stream_post_policy, derived from can_send_message_group. */
  streamPostPolicy(channel: Channel): 1 | 2 | 3 | 4 {
    return streamPostPolicy(this.#state, channel);
  }
  createGroup(actorId: number, input: CreateGroupInput): UserGroup {
    return createGroup(this.#state, actorId, input);
  }
  /** POST /user_groups/{id}/members: members (and subgroups) added and removed in one write. */
  updateGroupMembers(
    actorId: number,
    groupId: number,
    add: readonly number[],
    remove: readonly number[],
    addSubgroups: readonly number[] = [],
    removeSubgroups: readonly number[] = [],
  ): void {
    updateMembers(this.#state, actorId, groupId, add, remove, addSubgroups, removeSubgroups);
  }
  /** PATCH /user_groups/{id}. */
  updateGroup(actorId: number, groupId: number, input: UpdateGroupInput): void {
    updateGroup(this.#state, actorId, groupId, input);
  }
  /** POST /user_groups/{id}/deactivate. */
  deactivateGroup(actorId: number, groupId: number): void {
    deactivateGroup(this.#state, actorId, groupId);
  }
  /** Every permission setting of a group, defaults filled in for older records. */
  groupSettings(group: UserGroup): Record<GroupSettingField, GroupSettingValue> {
    return groupSettings(this.#state, group);
  }
  /** GET /user_groups/{id}/members. */
  groupMembers(viewerId: number, groupId: number, directOnly: boolean): number[] {
    return groupMembers(this.#state, viewerId, groupId, directOnly);
  }
  /** GET /user_groups/{id}/members/{user_id}. */
  isGroupMember(viewerId: number, groupId: number, userId: number, directOnly: boolean): boolean {
    return isGroupMemberQuery(this.#state, viewerId, groupId, userId, directOnly);
  }
  /** GET /user_groups/{id}/subgroups. */
  groupSubgroups(viewerId: number, groupId: number, directOnly: boolean): number[] {
    return groupSubgroups(this.#state, viewerId, groupId, directOnly);
  }
  updateGroupSubgroups(actorId: number, groupId: number, add: readonly number[], remove: readonly number[]): void {
    updateSubgroups(this.#state, actorId, groupId, add, remove);
  }
  setTopicPolicy(userId: number, channelId: number, topic: string, policy: number): void {
    setTopicPolicy(this.#state, userId, channelId, topic, policy);
  }

  /** PATCH /users/me/subscriptions/muted_topics (deprecated): mute or unmute, Zulip's legacy errors. */
  updateLegacyMutedTopic(userId: number, change: LegacyMutedTopicChange): void {
    updateLegacyMutedTopic(this.#state, userId, change);
  }
  /** GET /users/me/{stream_id}/topics: the topics the caller may read messages of, newest first. */
  channelTopics(userId: number, channelId: number): readonly ChannelTopic[] {
    const { user } = this.#context(userId);
    return channelTopics(this.#state, this.#received, this.#channelTopics, user, channelId);
  }
  /**
   * channelTopics for servers: a list not cached yet is built (and a protected channel's
   * filtered) a page per turn of the event loop (queries/channel-topics.ts).
   */
  async channelTopicsAsync(userId: number, channelId: number): Promise<readonly ChannelTopic[]> {
    const { user } = this.#context(userId);
    return channelTopicsAsync(this.#state, this.#received, this.#channelTopics, user, channelId);
  }

  // ---- presence ----

  /**
   * POST /users/me/presence: records a ping in memory (see actions/presence.ts for
   * what a crash can lose); flushPresence() makes it durable.
   */
  updatePresence(userId: number, status: PresenceStatus): void {
    updatePresence(this.#state, userId, status);
  }
  /** A presence record as an export had it (parley import); flushed like a ping. */
  restorePresence(userId: number, lastActive: number | null, lastConnected: number): void {
    restorePresence(this.#state, userId, lastActive, lastConnected);
  }
  /** Writes presence changed since the last flush (the server calls this every few seconds). */
  flushPresence(): number {
    return flushPresence(this.#state);
  }
  /** Presence of the viewer's realm that the viewer may see, changed after `query.lastUpdateId`. */
  realmPresence(viewerId: number, query: PresenceQuery = {}): PresenceListing {
    return realmPresence(this.#state, this.#actor(viewerId), query);
  }
  /**
   * One user's presence ("No such user", bots and users without data refused as Zulip; `named` is how the caller named
   * them).
   */
  userPresence(viewerId: number, targetId: number, named: string = String(targetId)): PresenceRecord {
    return userPresence(this.#state, this.#actor(viewerId), this.#actor(targetId), named);
  }

  // ---- custom profile fields ----

  /** The viewer's realm's custom profile fields in their order (GET /realm/profile_fields, register). */
  profileFields(viewerId: number): ProfileField[] {
    return realmProfileFields(this.#state, this.#actor(viewerId).realmId);
  }
  /** POST /realm/profile_fields (administrators). */
  createProfileField(actorId: number, type: number, settings: ProfileFieldSettings): ProfileField {
    return createProfileField(this.#state, actorId, type, settings);
  }
  /** PATCH /realm/profile_fields/{id} (administrators). */
  updateProfileField(actorId: number, fieldId: number, settings: ProfileFieldSettings): void {
    updateProfileField(this.#state, actorId, fieldId, settings);
  }
  /** DELETE /realm/profile_fields/{id} (administrators): the field and every value of it. */
  deleteProfileField(actorId: number, fieldId: number): void {
    deleteProfileField(this.#state, actorId, fieldId);
  }
  /** PATCH /realm/profile_fields: the new order, every field of the realm in it (administrators). */
  reorderProfileFields(actorId: number, order: readonly number[]): void {
    reorderProfileFields(this.#state, actorId, order);
  }
  /** PATCH /users/me/profile_data (human users). */
  updateOwnProfileData(actorId: number, items: readonly ProfileDataItem[]): void {
    updateOwnProfileData(this.#state, actorId, items);
  }
  /** DELETE /users/me/profile_data (human users). */
  removeOwnProfileData(actorId: number, fieldIds: readonly number[]): void {
    removeOwnProfileData(this.#state, actorId, fieldIds);
  }

  // ---- email domains ----

  /** The viewer's realm's email domains in the order they were added (GET /realm/domains, register). */
  realmDomains(viewerId: number): RealmDomain[] {
    return realmDomains(this.#state, this.#actor(viewerId).realmId);
  }
  /** POST /realm/domains (owners). */
  addRealmDomain(actorId: number, domain: string, allowSubdomains: boolean): RealmDomain {
    return addRealmDomain(this.#state, actorId, domain, allowSubdomains);
  }
  /** PATCH /realm/domains/{domain} (owners). */
  changeRealmDomain(actorId: number, domain: string, allowSubdomains: boolean): void {
    changeRealmDomain(this.#state, actorId, domain, allowSubdomains);
  }
  /** DELETE /realm/domains/{domain} (owners). */
  removeRealmDomain(actorId: number, domain: string): void {
    removeRealmDomain(this.#state, actorId, domain);
  }

  // ---- code playgrounds ----

  /** The realm's code playgrounds, by ID. */
  realmPlaygrounds(realmId: number): Playground[] {
    return realmPlaygrounds(this.#state, realmId);
  }
  /** POST /realm/playgrounds (administrators). */
  addPlayground(actorId: number, input: PlaygroundInput): Playground {
    return addPlayground(this.#state, actorId, input);
  }
  /** DELETE /realm/playgrounds/{id} (administrators). */
  removePlayground(actorId: number, playgroundId: number): void {
    removePlayground(this.#state, actorId, playgroundId);
  }

  // ---- linkifiers ----

  /** The viewer's realm's linkifiers in their order (GET /realm/linkifiers, register). */
  linkifiers(viewerId: number): Linkifier[] {
    return realmLinkifiers(this.#state, this.#actor(viewerId).realmId);
  }
  /** A topic's `topic_links` under the realm's current linkifiers. */
  topicLinks(realmId: number, topic: string): TopicLink[] {
    return realmTopicLinks(this.#state, realmId, topic);
  }
  /** POST /realm/filters (administrators). */
  addLinkifier(actorId: number, input: LinkifierInput): Linkifier {
    return addLinkifier(this.#state, actorId, input);
  }
  /** PATCH /realm/filters/{id} (administrators). */
  updateLinkifier(actorId: number, linkifierId: number, input: LinkifierInput): void {
    updateLinkifier(this.#state, actorId, linkifierId, input);
  }
  /** DELETE /realm/filters/{id} (administrators). */
  removeLinkifier(actorId: number, linkifierId: number): void {
    removeLinkifier(this.#state, actorId, linkifierId);
  }
  /** PATCH /realm/linkifiers: every linkifier's ID in the new order (administrators). */
  reorderLinkifiers(actorId: number, orderedIds: readonly number[]): void {
    reorderLinkifiers(this.#state, actorId, orderedIds);
  }

  // ---- custom emoji ----

  /** The realm's custom emoji, deactivated ones too (GET /realm/emoji, register's realm_emoji). */
  realmEmoji(realmId: number): RealmEmoji[] {
    return realmEmojiOf(this.#state, realmId);
  }
  /** The checks of POST /realm/emoji/{name} that need no image, in Zulip's order; the normalized name. */
  checkAddRealmEmoji(actorId: number, name: string, fileCount: number): string {
    return checkAddRealmEmoji(this.#state, actorId, name, fileCount);
  }
  /** Records a custom emoji whose image is stored (checks again). */
  addRealmEmoji(actorId: number, input: AddRealmEmojiInput): RealmEmoji {
    return addRealmEmoji(this.#state, actorId, input);
  }
  /** DELETE /realm/emoji/{name}: deactivates (the author or an administrator). */
  removeRealmEmoji(actorId: number, name: string): void {
    removeRealmEmoji(this.#state, actorId, name);
  }
  /** The realm's can_add_custom_emoji_group. */
  /** The realm's message editing, moving and deletion rules, Zulip's defaults filled in. */
  realmMessagePolicy(realmId: number): MessagePolicy {
    return realmMessagePolicy(this.#state, realmId);
  }

  /** Changes some of those rules (administrators); sends Zulip's realm update_dict event. */
  setRealmMessagePolicy(actorId: number, changes: MessagePolicyChanges): MessagePolicy {
    return setRealmMessagePolicy(this.#state, actorId, changes);
  }

  /** PATCH /realm (administrators; owners for some settings): Zulip's names of what changed. */
  updateRealm(actorId: number, input: UpdateRealmInput): Set<string> {
    return updateRealm(this.#state, actorId, input);
  }
  /** POST /realm/test_welcome_bot_custom_message (administrators): the Welcome Bot's DM to the actor. */
  sendTestWelcomeBotCustomMessage(actorId: number, text: string): { id: number } {
    return sendTestWelcomeBotCustomMessage(this.#state, actorId, text);
  }
  /** POST /realm/deactivate (owners): keys refused from the commit on, data kept. */
  deactivateRealm(actorId: number, input: DeactivateRealmInput): void {
    deactivateRealmByOwner(this.#state, actorId, input);
  }
  /** The realm's PATCH /realm settings (settings/realm-settings), defaults filled in. */
  realmProperties(realmId: number): RealmProperties {
    return realmProperties(this.#state, realmId);
  }
  /** A realm permission setting by Zulip's name (any of those PATCH /realm takes). */
  realmGroupSetting(realmId: number, wireName: string): GroupSettingValue {
    return realmGroupSettingByWire(this.#state, realmId, wireName);
  }
  /** A realm setting in Zulip's form for a realm update event. */
  realmPropertyValue(realm: Realm, property: string): RealmPropertyValue {
    return realmPropertyValue(this.#state, realm, property);
  }

  canAddCustomEmojiGroup(realmId: number): GroupSettingValue {
    return canAddCustomEmojiGroup(this.#state, realmId);
  }
  /** Sets can_add_custom_emoji_group (administrators). */
  setCanAddCustomEmojiGroup(actorId: number, value: GroupSettingValue): void {
    setCanAddCustomEmojiGroup(this.#state, actorId, value);
  }

  // ---- messages ----

  /** Sends; the result names the sender's new topic policy when the send changed it. */
  sendMessage(input: SendMessageInput): SentMessage {
    return sendMessage(this.#state, input);
  }
  /**
   * The same send through the group commit: concurrent callers share one durable
   * commit (one fsync). Settles after that commit; refusals reject with the same errors.
   */
  sendMessageGrouped(input: SendMessageInput): Promise<SentMessage> {
    return sendMessageGrouped(this.#state, input);
  }

  /**
   * PATCH /messages/{id}: edits the content, moves the message (and others, by
   * propagate mode) to another topic or channel, or both, in one write; refusals are
   * Zulip's errors and change nothing.
   */
  updateMessage(actorId: number, messageId: number, input: UpdateMessageInput): UpdateMessageResult {
    const result = updateMessage(this.#state, actorId, messageId, input);
    this.#purgeAfterUpdate(input);
    return result;
  }

  /**
   * Undoing a resolve deletes its notice: read bits one write could not clear are purged
   * in later writes (invisible meanwhile). A failure leaves the purge to the next
   * deletion or open, which resume it. Only a move can delete a notice: a content edit skips
   * the meta read, the first read after its commit (~60 µs of an edit's ~2 ms).
   */
  #purgeAfterUpdate(input: UpdateMessageInput): void {
    const moved = input.topic !== undefined || input.channelId !== undefined;
    if (moved && pendingReadPurges(this.#state).length > 0) this.#finishReadPurges().catch(() => undefined);
  }

  /**
   * updateMessage for the PATCH endpoint: a move of MOVE_STAGING.minMessages or more is
   * prepared between turns of the event loop and written in one short write
   * (actions/move-staging); anything smaller is written at once, as updateMessage does.
   */
  async updateMessageAsync(
    actorId: number,
    messageId: number,
    input: UpdateMessageInput,
  ): Promise<UpdateMessageResult> {
    // A follower refuses every write: at once, not after staging.
    if (this.#follower !== null) return this.updateMessage(actorId, messageId, input);
    const result = await updateMessageStaged(this.#state, actorId, messageId, input, () => this.nextTurn());
    this.#purgeAfterUpdate(input);
    return result;
  }

  /** GET /messages/{id}/history: the message after each change, oldest first, as the realm lets it be seen. */
  messageEditHistory(userId: number, messageId: number): HistorySnapshot[] {
    const viewer = this.#context(userId).user;
    const policy = realmMessagePolicy(this.#state, viewer.realmId).messageEditHistoryVisibilityPolicy;
    return messageEditHistory(this.#state, policy, viewer, messageId);
  }

  /** DELETE /messages/{id}/history: the earlier versions of the content go, for whoever may delete the message. */
  deleteMessageEditHistory(userId: number, messageId: number): void {
    deleteMessageEditHistory(this.#state, this.#context(userId).user.id, messageId);
  }

  /** For imports: a replayed message's edit history as the export holds it (see actions/imported-history). */
  importEditHistory(messageId: number, edits: readonly ImportedEdit[]): void {
    importEditHistory(this.#state, messageId, edits);
  }

  /** POST /messages/render: `content` rendered for `userId` as their send would render it; nothing is stored. */
  renderPreview(userId: number, content: string): string {
    return renderPreview(this.#state, this.#context(userId).user, content);
  }

  // ---- scheduled messages ----

  /** POST /scheduled_messages: checked like a send, delivered by deliverDueScheduledMessages. */
  scheduleMessage(senderId: number, input: ScheduleMessageInput): ScheduledMessage {
    return scheduleMessage(this.#state, senderId, input);
  }
  editScheduledMessage(senderId: number, id: number, input: EditScheduledMessageInput): void {
    editScheduledMessage(this.#state, senderId, id, input);
  }
  deleteScheduledMessage(senderId: number, id: number): void {
    deleteScheduledMessage(this.#state, senderId, id);
  }
  /** The user's undelivered scheduled messages (failed included), by delivery time. */
  scheduledMessages(senderId: number): ScheduledMessage[] {
    return listScheduledMessages(this.#state, senderId);
  }
  /** A scheduled message or reminder as an export had it, delivered or failed ones too (parley import). */
  importScheduledMessage(senderId: number, input: ImportedScheduledMessage): ScheduledMessage {
    return importScheduledMessage(this.#state, senderId, input);
  }
  /** Every scheduled message and reminder of the sender, delivered and failed ones too. */
  scheduledMessageRecords(senderId: number): ScheduledMessage[] {
    return scheduledMessageRecords(this.#state, senderId);
  }
  /**
   * Delivers every pending scheduled message due at `nowSeconds`, one transaction each
   * (the message and its delivered mark together). The engine keeps no timer: a
   * scheduler (src/scheduler) calls this. `limit`: at most this many deliveries (the
   * earliest due first), so a caller can yield between slices of a backlog.
   */
  deliverDueScheduledMessages(nowSeconds: number, limit?: number): DeliveryOutcome[] {
    return deliverDueScheduledMessages(this.#state, nowSeconds, limit);
  }
  /** Zulip's promote_new_full_members: members past the waiting period join role:fullmembers. */
  promoteNewFullMembers(): number {
    return promoteNewFullMembers(this.#state);
  }
  /**
   * Zulip's archive_messages: deletes the messages older than their channel's or realm's
   * retention policy (actions/retention), a batch per write, yielding to the event loop
   * between writes, then clears their readers' read bits. Stops early, between writes,
   * once `stopped()` answers true. Returns how many messages were deleted.
   */
  async deleteExpiredMessages(options: { batchSize?: number; stopped?: () => boolean } = {}): Promise<number> {
    const stopped = options.stopped ?? (() => false);
    const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
    // Batches merge their read-bit purges (each read bitmap rewritten once per purge);
    // a purge is run every RETENTION_PURGE_EVERY messages so that its list stays short.
    const purge = async () => {
      while (!stopped() && continueReadPurge(this.#state)) await yieldToLoop();
    };
    let deleted = 0;
    let unpurged = 0;
    for (const target of retentionTargets(this.#state)) {
      for (;;) {
        if (stopped()) return deleted;
        const batch = deleteExpiredMessagesBatch(this.#state, target, options.batchSize);
        if (batch === 0) break;
        deleted += batch;
        unpurged += batch;
        if (unpurged >= RETENTION_PURGE_EVERY) {
          await purge();
          unpurged = 0;
        }
        await yieldToLoop();
      }
    }
    await purge();
    return deleted;
  }
  /** The earliest pending delivery time (UNIX seconds), or null when none is pending. */
  nextScheduledDelivery(): number | null {
    return nextScheduledDelivery(this.#state);
  }

  // ---- reminders (scheduled messages Notification Bot delivers) ----

  /** POST /reminders. */
  createReminder(userId: number, input: CreateReminderInput): ScheduledMessage {
    return createReminder(this.#state, userId, input);
  }
  /** The user's undelivered reminders (failed included), by delivery time. */
  reminders(userId: number): ScheduledMessage[] {
    return listReminders(this.#state, userId);
  }
  deleteReminder(userId: number, id: number): void {
    deleteReminder(this.#state, userId, id);
  }

  // ---- legacy push tokens (stored; only the test notification names them to the bouncer) ----

  addLegacyPushToken(userId: number, kind: LegacyTokenKind, token: string, iosAppId: string | null): void {
    addLegacyPushToken(this.#state, userId, kind, token, iosAppId);
  }
  removeLegacyPushToken(userId: number, kind: LegacyTokenKind, token: string, usesBouncer: boolean): void {
    removeLegacyPushToken(this.#state, userId, kind, token, usesBouncer);
  }
  legacyPushTokens(userId: number, kind: LegacyTokenKind): string[] {
    return legacyPushTokens(this.#state, userId, kind);
  }
  /** POST /mobile_push/test_notification: the caller's legacy tokens (or the one named) and their realm. */
  legacyTestTargets(
    userId: number,
    token: string | null,
  ): { realm: Realm; realmUuid: string; targets: LegacyTestTarget[] } {
    const targets = legacyTestTargets(this.#state, userId, token);
    const realm = this.#state.realms.get(this.#context(userId).user.realmId)!;
    return { realm, realmUuid: realmUuid(realm), targets };
  }

  // ---- web client sessions (actions/web-sessions) ----

  /** A session token for a user whose credentials the caller checked. */
  createWebSession(userId: number): string {
    return createWebSession(this.#state, userId);
  }
  /** The user a session token logs in, or null (unknown, expired, or password / API key changed since). */
  webSessionUser(token: string): User | null {
    return webSessionUser(this.#state, token);
  }
  endWebSession(token: string): void {
    endWebSession(this.#state, token);
  }
  webSessionCount(userId: number): number {
    return webSessionCount(this.#state, userId);
  }

  /**
   * Typed events of every committed write (and ephemeral ones such as typing), each
   * with its audience, delivered synchronously after the commit. Never called while a
   * store opens or reloads, nor for a write that failed.
   */
  onEvents(listener: (batch: EventBatch) => void): () => void {
    return this.#state.onEvents(listener);
  }

  /**
   * What every committed write changed, typed by entity kind and ID (events/change-set.ts),
   * delivered synchronously after the commit and before the write's events; after a
   * failed write, a set with `everything` true (drop all derived state). Derived caches
   * subscribe here (or extend DerivedCache), not to onEvents: some writes tell clients
   * nothing. Returns the unsubscribe function.
   */
  onChanges(listener: (changes: ChangeSet) => void): () => void {
    return this.#state.onChanges(listener);
  }

  /** POST /typing: checked like a send; an ephemeral event, nothing stored. */
  notifyTyping(userId: number, input: TypingInput): void {
    notifyTyping(this.#state, userId, input);
  }
  /** POST /messages/{id}/typing: the caller is (or stopped) editing the message; checked like the edit. */
  notifyEditTyping(userId: number, messageId: number, op: "start" | "stop"): void {
    notifyEditTyping(this.#state, userId, messageId, op);
  }

  /** GET /messages as IDs and flags only (no records read): for serializers with caches. */
  getMessageWindow(userId: number, input: GetMessagesInput): MessageWindow {
    return getMessageWindow(this.#context(userId), input);
  }

  /** A message record by ID, without access checks (callers got the ID from a checked query). */
  findMessageRecord(messageId: number): Message | undefined {
    return getMessageRecord(this.#state.tables, messageId);
  }

  /**
   * The narrow's meaning for one message at a time, for `userId`: whether GET /messages
   * with `narrow` would return that message now (event queues filter new messages with
   * it). Names are resolved and bad narrows refused now, with GET /messages' errors;
   * null for an empty narrow. A deactivated user's matcher matches nothing.
   */
  compileNarrow(userId: number, narrow: unknown): MessageMatcher | null {
    return compileNarrow(this.#context(userId), narrow, this.#liveContext(userId));
  }
  /**
   * The matcher of a bot's default events channel: its messages only, with no check that
   * the bot can see the channel (Zulip never refuses the registration; the messages reach
   * the queue only while the bot has access).
   */
  compileChannelNarrow(userId: number, channelId: number): MessageMatcher | null {
    return compileTerms([{ kind: "channel", channelId, negated: false }], this.#liveContext(userId));
  }
  #liveContext(userId: number): () => PlanContext<StoreState> | null {
    return () => {
      const user = this.#state.users.get(userId);
      return user && user.isActive ? { state: this.#state, received: this.#received, user } : null;
    };
  }

  /** GET /messages/matches_narrow: which of `messageIds` GET /messages with `narrow` would return to `userId` now. */
  messagesMatchingNarrow(userId: number, narrow: unknown, messageIds: readonly number[]): NarrowMatch[] {
    return messagesMatchingNarrow(this.#context(userId), narrow, messageIds);
  }

  /** POST /messages/{id}/report: Notification Bot's report in the moderation request channel; its message ID. */
  reportMessage(userId: number, messageId: number, report: MessageReport): number {
    return reportMessage(this.#state, this.#context(userId).user, messageId, report);
  }

  /** GET /messages/{id}/read_receipts: who read the message, as `userId` may learn it (Zulip's rules). */
  readReceipts(userId: number, messageId: number): number[] {
    return readReceipts(this.#context(userId), messageId);
  }

  /**
   * Messages stored with the renderer's fallback (a renderer bug: the message was kept
   * as text, without its mentions), reported after their write commits. Returns the
   * unsubscribe function.
   */
  onRenderFailure(listener: (failure: RenderFailure) => void): () => void {
    return this.#state.onRenderFailure(listener);
  }

  /** GET /messages for `userId`. */
  getMessages(userId: number, input: GetMessagesInput): GetMessagesResult {
    return getMessages(this.#context(userId), input);
  }

  /** GET /messages/{id}: the message with the caller's flags, if they may read it. */
  getMessage(userId: number, messageId: number): { message: Message; flags: readonly ApiFlag[] } {
    const user = requireUser(this.#state, userId);
    const message =
      Number.isInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
        ? getMessageRecord(this.#state.tables, messageId)
        : undefined;
    if (!message || !canAccessMessage(this.#state, user, message)) throw new BadRequestError("Invalid message(s)");
    return {
      message,
      flags: flagsForWindow(this.#state, this.#received, userId, user.realmId, [message.id], false)[0]!,
    };
  }

  /**
   * DELETE /messages/{message_id}: Zulip's permissions and time limit; the message goes
   * in one write, and with it every trace but readers' read bits beyond one write's
   * share, which further writes clear (the event loop free between them) before this
   * resolves (see actions/delete-messages readKeysPerWrite).
   */
  async deleteMessage(userId: number, messageId: number, options: DeleteTopicOptions = {}): Promise<void> {
    deleteMessage(this.#state, this.#context(userId).user.id, messageId, options.readBitsPerWrite ?? null);
    await this.#finishReadPurges(options.readBitsPerWrite);
  }

  /**
   * Runs pending read-bit purges to the end, a write at a time, each in a turn of its own
   * (the first one in the deletion's turn held the loop for the deletion's last write and the
   * purge's first: 60-75 ms for bench:worst's delete_topic), and one loop at a time: callers
   * share the running one, which goes on while any purge is pending. Each move while a purge
   * was pending used to start another loop, so in bench:worst, where a resolve undone soon
   * after deletes the notice 10,000 members had read, two or three purge writes shared a turn
   * and the next resolve held the loop 76-84 ms.
   */
  #finishReadPurges(keysPerWrite?: number): Promise<void> {
    this.#readPurging ??= this.#runReadPurges(keysPerWrite ?? null);
    return this.#readPurging;
  }

  /** A turn of its own for a deletion's background step (StoreState.pacer, shared with the other background writes). */
  #paced(): Promise<void> {
    return this.#state.pacer.turn();
  }

  /**
   * Runs `steps` (reads ahead of a deletion's write, see warmTopicBatch), a turn of the
   * event loop every DELETION_WARM_STEP_MS of them.
   */
  async #warm<T>(steps: Iterator<void, T, void>): Promise<T> {
    for (;;) {
      const started = performance.now();
      let step: IteratorResult<void, T>;
      do step = steps.next();
      while (step.done !== true && performance.now() - started < DELETION_WARM_STEP_MS);
      // The write that follows gets a turn of its own unless the reads were next to nothing.
      if (step.done !== true || performance.now() - started >= 1) await this.#paced();
      if (step.done === true) return step.value;
    }
  }

  async #runReadPurges(keysPerWrite: number | null): Promise<void> {
    try {
      do await this.#paced();
      while (continueReadPurge(this.#state, keysPerWrite));
    } finally {
      // In the microtask that ran the last write: a purge added after it starts a new loop.
      this.#readPurging = null;
    }
  }

  /**
   * POST /streams/{stream_id}/delete_topic: the topic's messages the administrator can
   * access, newest first, `batchSize` per transaction (by default DELETE_TOPIC_BATCH_SIZE
   * first, then as many as nextTopicBatchSize says fit the loop budget), yielding to the
   * event loop between batches. `complete` is false when `timeBudgetMs` ran out first (the client
   * calls again, as with Zulip); at least one batch always runs.
   */
  async deleteTopic(
    userId: number,
    channelId: number,
    topicName: string,
    options: DeleteTopicOptions = {},
  ): Promise<{ complete: boolean }> {
    let batchSize = options.batchSize ?? DELETE_TOPIC_BATCH_SIZE;
    const budget = options.timeBudgetMs ?? DELETE_TOPIC_TIME_BUDGET_MS;
    const start = Date.now();
    try {
      for (;;) {
        await this.#warm(warmTopicBatch(this.#context(userId), channelId, topicName, batchSize));
        const started = process.cpuUsage();
        const step = deleteTopicBatch(
          this.#context(userId),
          channelId,
          topicName,
          batchSize,
          options.readBitsPerWrite ?? null,
        );
        if (step.complete) return { complete: true };
        // Unless told a size, batches grow as far as the loop budget allows (each costs an
        // fsync). Measured in CPU time: on a shared machine the wall clock says more about
        // the neighbours than about the batch.
        if (options.batchSize === undefined) {
          const used = process.cpuUsage(started);
          batchSize = nextTopicBatchSize(batchSize, step.deleted, (used.user + used.system) / 1000);
        }
        if (Date.now() - start >= budget) return { complete: false };
        await this.#paced();
      }
    } finally {
      await this.#finishReadPurges(options.readBitsPerWrite);
    }
  }

  addReaction(userId: number, messageId: number, reaction: AddReactionInput): void {
    addReaction(this.#state, userId, messageId, reaction);
  }
  removeReaction(userId: number, messageId: number, reaction: RemoveReactionInput): void {
    removeReaction(this.#state, userId, messageId, reaction);
  }
  /**
   * addReaction through the group commit (see sendMessageGrouped): checked in arrival
   * order inside the group, settled after the shared commit, refusals reject alone.
   */
  addReactionGrouped(userId: number, messageId: number, reaction: AddReactionInput): Promise<void> {
    return this.#state.writeGrouped(() => prepareAddReaction(this.#state, userId, messageId, reaction));
  }
  /** removeReaction through the group commit (see addReactionGrouped). */
  removeReactionGrouped(userId: number, messageId: number, reaction: RemoveReactionInput): Promise<void> {
    return this.#state.writeGrouped(() => prepareRemoveReaction(this.#state, userId, messageId, reaction));
  }
  /** POST /submessage: a widget event (a vote, a new option, a task toggle) on a message. */
  addSubmessage(userId: number, input: SubmessageInput): { id: number } {
    return addSubmessage(this.#state, userId, input);
  }

  updateFlags(userId: number, messageIds: readonly number[], flag: string, op: string): FlagChangeResult {
    return updateFlagsByIds(this.#context(userId), messageIds, flag, op);
  }
  updateFlagsForNarrow(userId: number, input: WindowInput, flag: string, op: string): NarrowFlagResult {
    return updateFlagsForNarrow(this.#context(userId), input, flag, op);
  }
  /** Marks a topic (or, with topic null, a whole channel) read. */
  markTopicAsRead(userId: number, channelId: number, topic: string | null): FlagChangeResult {
    return markTopicAsRead(this.#context(userId), channelId, topic);
  }
  // The grouped variants (see sendMessageGrouped): concurrent flag changes share one
  // commit. The user is looked up in prepare, which runs in arrival order in the group.
  updateFlagsGrouped(
    userId: number,
    messageIds: readonly number[],
    flag: string,
    op: string,
  ): Promise<FlagChangeResult> {
    return this.#state.writeGrouped(() => prepareFlagsByIds(this.#context(userId), messageIds, flag, op));
  }
  updateFlagsForNarrowGrouped(userId: number, input: WindowInput, flag: string, op: string): Promise<NarrowFlagResult> {
    return this.#state.writeGrouped(() => prepareFlagsForNarrow(this.#context(userId), input, flag, op));
  }
  markTopicAsReadGrouped(userId: number, channelId: number, topic: string | null): Promise<FlagChangeResult> {
    return this.#state.writeGrouped(() => prepareMarkTopicAsRead(this.#context(userId), channelId, topic));
  }
  /** POST /mark_all_as_read: at most `limit` messages marked; complete when none are left unread. */
  markAllAsRead(userId: number, limit: number): { complete: boolean } {
    return markAllAsRead(this.#context(userId), limit);
  }
  unreadSummary(userId: number): UnreadSummary {
    return unreadSummary(this.#context(userId));
  }
  /** Zulip's recent_private_conversations: the user's recent DM conversations, newest first. */
  recentConversations(userId: number): RecentConversation[] {
    return recentConversations(this.#context(userId));
  }

  /** Rebuilds derivable indexes from records and reports differences with disk. */
  verify(onProgress?: (done: number, total: number) => void): VerifyReport {
    return verifyIndexes(this.#state, onProgress);
  }

  /** Zulip's max_message_id: the newest message the user has a row for, or -1. */
  maxMessageId(userId: number): number {
    const result = this.getMessageWindow(userId, { narrow: [], anchor: "newest", numBefore: 1, numAfter: 0 });
    return result.ids[result.ids.length - 1] ?? -1;
  }

  /** IDs of the user's starred messages, ascending. */
  starredMessageIds(userId: number): number[] {
    const ctx = this.#context(userId);
    return ctx.received.restrictToPersonal(userId, this.#state.bitmaps.get(key.userFlag(userId, "starred"))).toArray();
  }

  // ---- client devices and mobile push ----

  /** POST /register_client_device: the new device's ID. */
  registerClientDevice(userId: number): number {
    return registerClientDevice(this.#state, userId).id;
  }
  /** POST /remove_client_device. */
  removeClientDevice(userId: number, deviceId: number): void {
    removeClientDevice(this.#state, userId, deviceId);
  }
  /** The user's devices, by ID (register's `devices`). */
  devices(userId: number): Device[] {
    return userDevices(this.#state, userId);
  }
  /** POST /mobile_push/register; `pushConfigured`: the server has a push bouncer. */
  registerPushDevice(userId: number, input: PushRegistrationInput, pushConfigured: boolean): void {
    registerPushDevice(this.#state, userId, input, pushConfigured);
  }
  /** The push outbox after `afterId`, oldest first (for the bouncer sender). */
  pushOutboxItems(afterId = 0, limit = 100): PushOutboxItem[] {
    return pushOutboxItems(this.#state, afterId, limit);
  }
  /** What an outbox item needs sent now, or null when nothing is left to send. */
  resolvePushItem(itemId: number): PushDelivery | null {
    return resolvePushItem(this.#state, itemId);
  }
  /** Removes an outbox item with what the bouncer's answer changes. */
  finishPushItem(itemId: number, outcome: PushItemOutcome): void {
    finishPushItem(this.#state, itemId, outcome);
  }
  /** The devices an E2EE test notification goes to; NoActivePushDeviceError when none is registered. */
  testPushTargets(userId: number, deviceId: number | null): { realm: Realm; realmUuid: string; targets: PushTarget[] } {
    return testPushTargets(this.#state, userId, deviceId);
  }
  /** Clears registrations the bouncer reported gone (delete_token_ids). */
  clearPushTokens(userId: number, tokenIds: readonly string[]): void {
    clearPushTokens(this.#state, userId, tokenIds);
  }

  // ---- organization data exports (actions/realm-exports.ts, export/zulip-tables.ts) ----

  /** POST /export/realm: checks and records the request (the caller runs the export). */
  requestRealmExport(actorId: number, type: RealmExportType, bounds: ExportBounds): RealmExport {
    return requestRealmExport(this.#state, actorId, type, bounds);
  }

  realmExports(actorId: number): RealmExport[] {
    return listRealmExports(this.#state, actorId);
  }

  exportConsents(actorId: number): { userId: number; consented: boolean }[] {
    return exportConsents(this.#state, actorId);
  }

  /** DELETE /export/realm/{id}: returns the export whose file the caller removes. */
  deleteRealmExport(actorId: number, exportId: number): RealmExport {
    return deleteRealmExport(this.#state, actorId, exportId);
  }

  /** The succeeded export at `exportPath` if the viewer administers its realm, else null. */
  downloadableExport(viewerId: number, exportPath: string): RealmExport | null {
    return downloadableExport(this.#state, viewerId, exportPath);
  }

  markExportStarted(realmId: number, exportId: number): RealmExport {
    return markExportStarted(this.#state, realmId, exportId);
  }

  markExportSucceeded(
    realmId: number,
    exportId: number,
    file: {
      readonly exportPath: string;
      readonly exportUrl: string;
      readonly sha256: string;
      readonly sizeBytes: number;
    },
  ): RealmExport {
    return markExportSucceeded(this.#state, realmId, exportId, file);
  }

  markExportFailed(realmId: number, exportId: number): RealmExport {
    return markExportFailed(this.#state, realmId, exportId);
  }

  /** Exports a previous process left unfinished. */
  unfinishedExports(): RealmExport[] {
    return unfinishedExports(this.#state);
  }

  /** Chooses an export's messages (a bitmap union; the slices then read them). */
  planRealmExport(realmId: number, type: RealmExportType): ExportPlan {
    return planExport(this.#state, this.#received, realmId, type, consentedUserIds(this.#state, realmId));
  }

  /** The whole realm, everyone's data included: an operator's copy for `parley realm move`, never an API export. */
  planWholeRealmExport(realmId: number): ExportPlan {
    return planWholeExport(this.#state, realmId);
  }

  /** One step of a messages-NNNNNN.json: from `ids` (a part of plan.messageIds), messages until maxRows flag rows. */
  exportMessageSlice(
    plan: ExportPlan,
    ids: ArrayLike<number>,
    maxRows?: number,
  ): { zerver_message: Row[]; zerver_usermessage: Row[]; consumed: number } {
    return messageSlice(this.#state, plan, ids, maxRows);
  }

  /** realm.json's tables, after every slice. */
  exportRealmTables(plan: ExportPlan): Tables {
    return realmTables(this.#state, plan);
  }

  /** attachment.json's zerver_attachment rows. */
  exportAttachments(plan: ExportPlan): Row[] {
    return attachmentTable(this.#state, plan);
  }

  #actor(userId: number): User {
    return requireUser(this.#state, userId);
  }

  /** The caller's context; a deactivated caller is refused. */
  #context(userId: number): PlanContext<StoreState> {
    const user = requireUser(this.#state, userId);
    if (!user.isActive) throw new NotFoundError("Account is deactivated");
    return { state: this.#state, received: this.#received, user };
  }
}

function internalsOutbox(state: StoreState): OutboxMail[] {
  return [...state.outbox.values()].sort((a, b) => a.id - b.id);
}

/** Opens (creating if needed) a store in `dir`, taking its one-writer lock (see storage/lock.ts). */
export function openStore(dir: string, options: StoreOptions): Store {
  return new Store(dir, options);
}

/**
 * Opens `dir` as a follower of the writer of the same server (options.lockToken: the
 * token of the lock that server holds, Store.lockToken): LMDB read-only, every write
 * refused with FollowerWriteError, and catchUp() to see what the writer committed
 * (follower.ts). The writer must have opened the directory first.
 */
export function openFollower(dir: string, options: StoreOptions & { readonly lockToken: string }): Store {
  return new Store(dir, options, "follower");
}

/**
 * Opens `dir` as a cluster replica (docs/cluster.md §2): the directory's only opener,
 * its tables writable, but written only by applyReplicated and undoUnreplicated; every
 * engine write is refused with FollowerWriteError.
 */
export function openReplica(dir: string, options: StoreOptions): Store {
  return new Store(dir, options, "replica");
}
