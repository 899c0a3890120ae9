/**
 * @module store
 * The engine's public facade: one Store per data directory. Every method is either an
 * action (one write transaction, nothing changed on error) or a query (reads only).
 * Methods acting for a user take that user's ID and apply their permissions.
 */
import { mkdirSync } from "node:fs";
import { renderMarkdown } from "../markdown/index.js";
import { canAccessMessage } from "./access.js";
import { createGroup, updateMembers, updateSubgroups, type CreateGroupInput } from "./actions/groups.js";
import { channelGroupSettings, streamPostPolicy } from "./actions/channels.js";
import { createRealm, setNewChannelAnnouncementsChannel, setRealmDeactivated, systemGroupId, type CreateRealmInput } from "./actions/realms.js";
import { addReaction, removeReaction, type AddReactionInput, type RemoveReactionInput } from "./actions/reactions.js";
import { sendMessage, type SendMessageInput } from "./actions/send-message.js";
import { setChannelMuted, subscribe, unsubscribe, type Principal, type SubscribeInput, type SubscribeResult, type UnsubscribeResult } from "./actions/subscriptions.js";
import { markTopicAsRead, updateFlagsByIds, updateFlagsForNarrow, type FlagChangeResult, type NarrowFlagResult } from "./actions/update-flags.js";
import { setTopicPolicy } from "./actions/user-topics.js";
import { createUser, requireUser, setUserActive, updateUser, type CreateUserInput, type UpdateUserInput } from "./actions/users.js";
import { BadRequestError, NotFoundError } from "./errors.js";
import type { PlanContext } from "./narrow/plan.js";
import { getMessageWindow, getMessages, type GetMessagesInput, type GetMessagesResult, type MessageWindow, type WindowInput } from "./queries/get-messages.js";
import { flagsForWindow, type ApiFlag } from "./queries/message-flags.js";
import { unreadSummary, type UnreadSummary } from "./queries/unread.js";
import { ReceivedSets } from "./received.js";
import { StoreState, type Change, type StoreOptions } from "./state.js";
import type { Channel, ChannelPermissions, Message, Realm, User, UserGroup } from "./types.js";
import { verifyIndexes, type VerifyReport } from "./verify.js";

export class Store {
  /** Internal state; exposed for the HTTP layer's read-only listings and for tools. */
  readonly state: StoreState;
  readonly #received: ReceivedSets;

  constructor(dir: string, options: StoreOptions = {}) {
    mkdirSync(dir, { recursive: true });
    this.state = new StoreState(dir, options.renderer ?? renderMarkdown, options);
    this.#received = new ReceivedSets(this.state);
  }

  close(): void {
    this.state.close();
  }

  /**
   * Runs many actions in one transaction (bulk loading: generators, imports). All or
   * nothing: if any action throws, none is kept.
   */
  batch<T>(fn: () => T): T {
    return this.state.batch(fn);
  }

  // ---- realms and users ----

  createRealm(input: CreateRealmInput): { realm: Realm; owner: User } {
    return createRealm(this.state, input);
  }
  setRealmDeactivated(realmId: number, deactivated: boolean): void {
    setRealmDeactivated(this.state, realmId, deactivated);
  }
  /** Zulip's new_stream_announcements_stream: where channels created with `announce` are announced. */
  setNewChannelAnnouncementsChannel(realmId: number, channelId: number | null): void {
    setNewChannelAnnouncementsChannel(this.state, realmId, channelId);
  }
  findRealmBySubdomain(subdomain: string): Realm | undefined {
    const id = this.state.realmBySubdomain.get(subdomain.toLowerCase());
    return id === undefined ? undefined : this.state.realms.get(id);
  }
  systemGroupId(realmId: number, name: string): number {
    return systemGroupId(this.state, realmId, name);
  }
  createUser(input: CreateUserInput): User {
    return createUser(this.state, input);
  }
  updateUser(actorId: number, targetId: number, input: UpdateUserInput): User {
    return updateUser(this.state, actorId, targetId, input);
  }
  setUserActive(userId: number, active: boolean): User {
    return setUserActive(this.state, userId, active);
  }
  getUser(userId: number): User {
    return requireUser(this.state, userId);
  }
  findUserByEmail(realmId: number, email: string): User | undefined {
    const id = this.state.userByEmail.get(`${realmId}:${email.trim().toLowerCase()}`);
    return id === undefined ? undefined : this.state.users.get(id);
  }
  findUserByApiKey(apiKey: string): User | undefined {
    const id = this.state.userByApiKey.get(apiKey);
    return id === undefined ? undefined : this.state.users.get(id);
  }

  // ---- channels, subscriptions, groups, topics ----

  subscribe(actorId: number, input: SubscribeInput): SubscribeResult {
    return subscribe(this.state, actorId, input);
  }
  unsubscribe(actorId: number, channelNames: readonly string[], principals?: readonly Principal[]): UnsubscribeResult {
    return unsubscribe(this.state, actorId, channelNames, principals);
  }
  setChannelMuted(userId: number, channelId: number, muted: boolean): void {
    setChannelMuted(this.state, userId, channelId, muted);
  }
  getChannel(channelId: number): Channel | undefined {
    return this.state.channels.get(channelId);
  }
  /** Every group setting of the channel, defaults filled in for settings older records lack. */
  channelGroupSettings(channel: Channel): Required<ChannelPermissions> {
    return channelGroupSettings(this.state, channel);
  }
  /** Zulip's deprecated stream_post_policy, derived from can_send_message_group. */
  streamPostPolicy(channel: Channel): 1 | 2 | 3 | 4 {
    return streamPostPolicy(this.state, channel);
  }
  createGroup(actorId: number, input: CreateGroupInput): UserGroup {
    return createGroup(this.state, actorId, input);
  }
  updateGroupMembers(actorId: number, groupId: number, add: readonly number[], remove: readonly number[]): void {
    updateMembers(this.state, actorId, groupId, add, remove);
  }
  updateGroupSubgroups(actorId: number, groupId: number, add: readonly number[], remove: readonly number[]): void {
    updateSubgroups(this.state, actorId, groupId, add, remove);
  }
  setTopicPolicy(userId: number, channelId: number, topic: string, policy: number): void {
    setTopicPolicy(this.state, userId, channelId, topic, policy);
  }

  // ---- messages ----

  sendMessage(input: SendMessageInput): { id: number } {
    return sendMessage(this.state, input);
  }

  /** Committed changes (messages, users, channels, realms), for caches and event queues. */
  onChange(listener: (change: Change) => void): () => void {
    return this.state.onChange(listener);
  }

  /** GET /messages as IDs and flags only (no records read): for serializers with caches. */
  getMessageWindow(userId: number, input: GetMessagesInput): MessageWindow {
    return getMessageWindow(this.#context(userId), input);
  }

  /** A message record by ID, without access checks (callers got the ID from a checked query). */
  findMessageRecord(messageId: number): Message | undefined {
    return this.state.tables.messages.get(messageId) as Message | undefined;
  }

  /** GET /messages for `userId`. */
  getMessages(userId: number, input: GetMessagesInput): GetMessagesResult {
    return getMessages(this.#context(userId), input);
  }

  /** GET /messages/{id}: the message with the caller's flags, if they may read it. */
  getMessage(userId: number, messageId: number): { message: Message; flags: readonly ApiFlag[] } {
    const user = requireUser(this.state, userId);
    const message = Number.isInteger(messageId) && messageId > 0 && messageId <= 0xffffffff ? (this.state.tables.messages.get(messageId) as Message | undefined) : undefined;
    if (!message || !canAccessMessage(this.state, user, message)) throw new BadRequestError("Invalid message(s)");
    return { message, flags: flagsForWindow(this.state, this.#received, userId, user.realmId, [message.id], false)[0]! };
  }

  addReaction(userId: number, messageId: number, reaction: AddReactionInput): void {
    addReaction(this.state, userId, messageId, reaction);
  }
  removeReaction(userId: number, messageId: number, reaction: RemoveReactionInput): void {
    removeReaction(this.state, userId, messageId, reaction);
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
  unreadSummary(userId: number): UnreadSummary {
    return unreadSummary(this.#context(userId));
  }

  /** Rebuilds derivable indexes from records and reports differences with disk. */
  verify(onProgress?: (done: number, total: number) => void): VerifyReport {
    return verifyIndexes(this.state, onProgress);
  }

  /** The caller's context; a deactivated caller is refused. */
  #context(userId: number): PlanContext {
    const user = requireUser(this.state, userId);
    if (!user.isActive) throw new NotFoundError("Account is deactivated");
    return { state: this.state, received: this.#received, user };
  }
}

/** Opens (creating if needed) a store in `dir`. */
export function openStore(dir: string, options: StoreOptions = {}): Store {
  return new Store(dir, options);
}
