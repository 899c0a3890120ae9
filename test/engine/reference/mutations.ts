/**
 * @module test/engine/reference/mutations
 * Editing, moving and deleting messages in the reference model, transcribed from
 * Zulip (zerver/actions/message_edit.py: check_update_message, do_update_message;
 * zerver/lib/topic.py: update_messages_for_topic_edit; zerver/actions/message_delete.py;
 * zerver/views/message_edit.py: validate_can_delete_message; zerver/views/streams.py:
 * delete_in_topic), with the realm and channel permission settings at Zulip's defaults:
 * editing allowed for 600 s (+20 s buffer), moves within and between channels for a
 * week (+20 s; moderators and above are exempt), everyone may move topics and resolve,
 * members and above may move between channels, administrators delete anything,
 * everyone deletes their own messages for 600 s, channel-level groups are "nobody".
 *
 * UserMessage rows follow Zulip literally: a content edit sets `mentioned` on every
 * existing row (historical ones too) and creates none; a move to another channel
 * deletes the rows of everyone who ever had a Subscription to the old channel and is
 * not subscribed to the new one, and, when the new channel's history is protected,
 * gives every current subscriber a row marked read. Topic policies migrate as
 * do_update_message does; a resolve or unresolve sends Notification Bot's notice
 * (unread only for subscribers following the topic, as resolved_topic_notice_auto_read_policy
 * "except_followed" says), or deletes the previous notice within 60 s instead.
 *
 * Not modelled: Notification Bot's moved-message breadcrumbs (callers send
 * send_notification_to_old_thread / new_thread false), wildcard and group mentions,
 * events.
 */
import { createHash } from "node:crypto";
import {
  POLICY_FOLLOWED,
  POLICY_MUTED,
  POLICY_UNMUTED,
  RESOLVED_PREFIX,
  ROLE_ADMIN,
  ROLE_GUEST,
  ROLE_MEMBER,
  ROLE_MODERATOR,
  type RefChannel,
  type RefError,
  type RefMessage,
  type RefModel,
  type RefUser,
} from "./model.js";

export type PropagateMode = "change_one" | "change_later" | "change_all";

/** PATCH /messages/{id} as the model takes it (Zulip's parameters, parsed). */
export interface RefUpdateRequest {
  readonly content?: {
    readonly text: string;
    readonly words: readonly string[];
    readonly hasLink: boolean;
    readonly mentionedUserIds: readonly number[];
  };
  readonly topic?: string;
  readonly channelId?: number;
  readonly propagateMode: PropagateMode;
  readonly prevContentSha256?: string;
}

export interface RefUpdateResult {
  /** Every changed message, ascending. */
  readonly messageIds: readonly number[];
  /** The resolve/unresolve notice sent, if any. */
  readonly noticeId: number | null;
  /** The previous notice deleted instead of sending one, if any. */
  readonly deletedNoticeId: number | null;
}

/** Zulip's default limits, with the 20 s buffers check_update_message adds. */
export const EDIT_LIMIT_SECONDS = 600 + 20;
export const MOVE_LIMIT_SECONDS = 604800 + 20;
export const RESOLVE_UNDO_GRACE_SECONDS = 60;
/** Realm.DEFAULT_MESSAGE_CONTENT_DELETE_LIMIT_SECONDS (no buffer). */
export const DELETE_LIMIT_SECONDS = 600;
/** The notices' sender: Notification Bot, which is none of the modelled users. */
export const NOTIFICATION_BOT = 0;

const upper = (s: string): string => s.toUpperCase();

function refuse(code: string, message: string): RefError {
  return { error: { code, message } };
}

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Python's str.lstrip with a character set. */
function lstripChars(s: string, chars: string): string {
  let i = 0;
  while (i < s.length && chars.includes(s[i]!)) i++;
  return s.slice(i);
}

/**
 * Exempt from the move time limits. check_update_message asks `is_moderator`, which
 * models/users.py defines as the moderator role alone, yet Zulip's own tests
 * (test_move_message_to_stream_time_limit: "admins and moderators can move messages
 * irrespective of time limit") and help center exempt administrators too: so do we.
 */
const isModerator = (u: RefUser): boolean => u.role <= ROLE_MODERATOR;
const isAdmin = (u: RefUser): boolean => u.role <= ROLE_ADMIN;

/** has_message_access with is_modifying_message (zerver/lib/message.py). */
export function canModifyAccess(model: RefModel, user: RefUser, m: RefMessage): boolean {
  if (m.realmId !== user.realmId) return false;
  const hasRow = model.rowsOf(user.id).has(m.id);
  if (m.channelId === null) return hasRow;
  const c = model.channel(m.channelId);
  if (!c.inviteOnly && user.role !== ROLE_GUEST) return true;
  const subscribed = model.isSubscribed(user.id, c.id);
  if (!c.historyPublicToSubscribers) return hasRow && subscribed;
  return subscribed;
}

/** Content access to a channel (user_has_content_access; no group grants content access here). */
function hasContentAccess(model: RefModel, user: RefUser, c: RefChannel): boolean {
  return (!c.inviteOnly && user.role !== ROLE_GUEST) || model.isSubscribed(user.id, c.id);
}

/** bulk_access_stream_messages_query: which of `messages` (all in `c`) the user may access. */
function accessibleInChannel(model: RefModel, user: RefUser, c: RefChannel, messages: RefMessage[]): RefMessage[] {
  if (!c.inviteOnly && user.role !== ROLE_GUEST) return messages;
  if (!model.isSubscribed(user.id, c.id)) return [];
  if (!c.historyPublicToSubscribers) return messages.filter((m) => model.rowsOf(user.id).has(m.id));
  return messages;
}

/** messages_for_topic: the channel's messages whose topic matches case-insensitively, ascending. */
function messagesForTopic(model: RefModel, channelId: number, topic: string): RefMessage[] {
  return model.realmMessages().filter((m) => m.channelId === channelId && upper(m.topic) === upper(topic));
}

/** can_access_stream_history. */
function canAccessHistory(model: RefModel, user: RefUser, c: RefChannel): boolean {
  if (!c.inviteOnly && user.role !== ROLE_GUEST) return true;
  return c.historyPublicToSubscribers && model.isSubscribed(user.id, c.id);
}

/** Active Subscription of a channel, whether or not the user is deactivated (include_deactivated_users). */
function currentSubscribers(model: RefModel, channelId: number): Set<number> {
  const out = new Set<number>();
  for (const u of model.users.values()) if (model.isSubscribed(u.id, channelId)) out.add(u.id);
  return out;
}

/** Everyone with a Subscription row to the channel, active or not. */
function everSubscribed(model: RefModel, channelId: number): Set<number> {
  const out = new Set<number>();
  for (const u of model.users.values()) if (model.subs.has(`${u.id}:${channelId}`)) out.add(u.id);
  return out;
}

/** Users with a topic policy on (channel, topic), case-insensitively: userId -> policy. */
function policiesOn(model: RefModel, channelId: number, topic: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const [userId, map] of model.topicPolicies) {
    const p = map.get(`${channelId}:${upper(topic)}`);
    if (p) out.set(userId, p.policy);
  }
  return out;
}

/** get_visibility_policy_after_merge: the most visible of the two wins. */
function mergedPolicy(a: number, b: number): number {
  const both = new Set([a, b]);
  if (both.has(POLICY_FOLLOWED)) return POLICY_FOLLOWED;
  if (both.has(POLICY_UNMUTED)) return POLICY_UNMUTED;
  if (both.has(0)) return 0;
  return POLICY_MUTED;
}

/**
 * PATCH /messages/{id}: checks as check_update_message, then changes the model as
 * do_update_message. Nothing changes when it answers an error.
 */
export function updateMessage(
  model: RefModel,
  actorId: number,
  messageId: number,
  req: RefUpdateRequest,
): RefUpdateResult | RefError {
  const actor = model.user(actorId);
  const m = model.message(messageId);
  if (!m || !actor.active || !canModifyAccess(model, actor, m)) return refuse("BAD_REQUEST", "Invalid message(s)");
  const now = model.now;
  if (req.content !== undefined) {
    if (m.senderId !== actor.id) return refuse("BAD_REQUEST", "You don't have permission to edit this message");
    if (now - m.dateSent > EDIT_LIMIT_SECONDS)
      return refuse("BAD_REQUEST", "The time limit for editing this message has passed");
  }
  let topic: string | undefined;
  if (req.topic !== undefined) {
    topic = req.topic.trim();
    if (topic === "general chat") topic = "";
    if (topic === m.topic) topic = undefined;
  }
  // validate_message_edit_payload
  if (topic === undefined && req.content === undefined && req.channelId === undefined)
    return refuse("BAD_REQUEST", "Nothing to change");
  if (m.channelId === null) {
    if (req.channelId !== undefined) return refuse("BAD_REQUEST", "Direct messages cannot be moved to channels.");
    if (topic !== undefined) return refuse("BAD_REQUEST", "Direct messages cannot have topics.");
  }
  if (req.propagateMode !== "change_one" && topic === undefined && req.channelId === undefined)
    return refuse("BAD_REQUEST", "Invalid propagate_mode without topic edit");
  if (topic === RESOLVED_PREFIX.trim() || topic === `${RESOLVED_PREFIX}general chat`)
    return refuse("BAD_REQUEST", "General chat cannot be marked as resolved");
  if (req.channelId !== undefined && req.content !== undefined)
    return refuse("BAD_REQUEST", "Cannot change message content while changing channel");
  if (req.prevContentSha256 !== undefined && req.prevContentSha256 !== sha256(m.content))
    return refuse("EXPECTATION_MISMATCH", "'content' does not match the message's current content");
  if (m.channelId === null) return editDirectMessage(model, actor, m, req);

  // build_message_edit_request
  const origChannel = model.channel(m.channelId);
  const origTopic = m.topic;
  const targetTopic = topic ?? origTopic;
  const topicEdited = topic !== undefined;
  const resolved =
    topicEdited &&
    targetTopic.startsWith(RESOLVED_PREFIX) &&
    !origTopic.startsWith(RESOLVED_PREFIX) &&
    targetTopic.slice(RESOLVED_PREFIX.length) === origTopic;
  const unresolved =
    topicEdited &&
    origTopic.startsWith(RESOLVED_PREFIX) &&
    !targetTopic.startsWith(RESOLVED_PREFIX) &&
    lstripChars(origTopic, RESOLVED_PREFIX) === targetTopic;
  let target = origChannel;
  const channelEdited = req.channelId !== undefined;
  if (req.channelId !== undefined) {
    const c = model.channels.get(req.channelId);
    if (!c || c.realmId !== actor.realmId || !hasContentAccess(model, actor, c))
      return refuse("BAD_REQUEST", "Invalid channel ID");
    target = c;
  }
  const moved = topicEdited || channelEdited;
  if (topicEdited && !resolved && !unresolved && !isModerator(actor) && now - m.dateSent > MOVE_LIMIT_SECONDS)
    return refuse("BAD_REQUEST", "The time limit for editing this message's topic has passed.");
  if (channelEdited) {
    if (!(isAdmin(actor) || actor.role <= ROLE_MEMBER))
      return refuse("BAD_REQUEST", "You don't have permission to move this message");
    if (!isModerator(actor) && now - m.dateSent > MOVE_LIMIT_SECONDS)
      return refuse("BAD_REQUEST", "The time limit for editing this message's channel has passed");
  }
  if (req.propagateMode === "change_all" && !isModerator(actor) && moved && !resolved && !unresolved) {
    const inTopic = messagesForTopic(model, origChannel.id, origTopic);
    const considered = canAccessHistory(model, actor, origChannel)
      ? inTopic
      : inTopic.filter((x) => model.rowsOf(actor.id).has(x.id));
    const allowed = considered.filter((x) => now - x.dateSent < MOVE_LIMIT_SECONDS);
    if (allowed.length !== considered.length)
      return refuse("MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", "You only have permission to move some of the messages");
  }

  // do_update_message
  const log = `updateMessage actor=${actorId} message=${messageId} ${JSON.stringify(req)} at=${now}`;
  if (req.content !== undefined) applyContent(model, m, req.content);
  if (!moved) {
    model.log.push(log);
    return { messageIds: [m.id], noticeId: null, deletedNoticeId: null };
  }
  let losingRows = new Set<number>();
  let losingAccess = new Set<number>();
  let gainingRows = new Set<number>();
  if (channelEdited) {
    const newSubs = currentSubscribers(model, target.id);
    const oldAll = everSubscribed(model, origChannel.id);
    losingRows = new Set([...oldAll].filter((u) => !newSubs.has(u)));
    losingAccess = !target.inviteOnly
      ? new Set([...losingRows].filter((u) => model.user(u).role === ROLE_GUEST))
      : losingRows;
    if (!target.historyPublicToSubscribers) gainingRows = newSubs;
  }
  const targetHadMessages = messagesForTopic(model, target.id, targetTopic).length > 0;
  let changed: RefMessage[] = [m];
  if (req.propagateMode !== "change_one") {
    let others = messagesForTopic(model, origChannel.id, origTopic).filter((x) =>
      req.propagateMode === "change_all" ? x.id !== m.id : x.id > m.id,
    );
    if (channelEdited) others = accessibleInChannel(model, actor, origChannel, others);
    changed = [...changed, ...others].sort((a, b) => a.id - b.id);
  }
  if (channelEdited) {
    for (const userId of gainingRows) {
      const rows = model.rowsOf(userId);
      for (const x of changed)
        if (!rows.has(x.id))
          rows.set(x.id, { read: true, starred: false, collapsed: false, mentioned: false, historical: false });
    }
    for (const userId of losingRows) for (const x of changed) model.rowsOf(userId).delete(x.id);
  }
  for (const x of changed) {
    x.channelId = target.id;
    x.topic = targetTopic;
  }
  model.log.push(`${log} -> moved ${JSON.stringify(changed.map((x) => x.id))}`);

  const caseOnlyRename = !channelEdited && upper(origTopic) === upper(targetTopic);
  const keepPoliciesOnRename = caseOnlyRename && model.quirks.caseOnlyRenameKeepsPolicies === true;
  let movedAllVisible = req.propagateMode === "change_all";
  if (!movedAllVisible) {
    const changedIds = new Set(changed.map((x) => x.id));
    const unmoved = messagesForTopic(model, origChannel.id, origTopic).filter(
      (x) => !(keepPoliciesOnRename && changedIds.has(x.id)),
    );
    movedAllVisible = accessibleInChannel(model, actor, origChannel, unmoved).length === 0;
  }
  let followersOfOriginal: Set<number> | null = null;
  if (movedAllVisible && keepPoliciesOnRename) {
    followersOfOriginal = new Set(
      [...policiesOn(model, origChannel.id, origTopic)].filter(([, p]) => p === POLICY_FOLLOWED).map(([u]) => u),
    );
  } else if (movedAllVisible) {
    followersOfOriginal = migratePolicies(model, {
      origChannelId: origChannel.id,
      origTopic,
      targetChannelId: target.id,
      targetTopic,
      targetHadMessages,
      losingAccess: channelEdited ? losingAccess : new Set(),
    });
  } else {
    const sender = model.users.get(m.senderId);
    const changedIds = new Set(changed.map((x) => x.id));
    const preexisting = messagesForTopic(model, target.id, targetTopic).filter((x) => !changedIds.has(x.id));
    const first = sender ? accessibleInChannel(model, sender, target, preexisting)[0] : undefined;
    if (sender && !losingAccess.has(sender.id) && (first === undefined || m.id < first.id))
      model.setTopicPolicy(sender.id, target.id, targetTopic, POLICY_FOLLOWED);
  }

  let noticeId: number | null = null;
  let deletedNoticeId: number | null = null;
  if (topicEdited && req.content === undefined && !channelEdited && (resolved || unresolved)) {
    const last = messagesForTopic(model, origChannel.id, targetTopic).at(-1);
    if (last?.resolveNotice && now - last.dateSent <= RESOLVE_UNDO_GRACE_SECONDS) {
      model.removeMessages(new Set([last.id]));
      model.log.push(`  (deleted the previous resolve notice ${last.id})`);
      deletedNoticeId = last.id;
    } else {
      noticeId = sendResolveNotice(model, actor, origChannel, targetTopic, resolved, followersOfOriginal);
    }
  }
  return { messageIds: changed.map((x) => x.id), noticeId, deletedNoticeId };
}

function editDirectMessage(model: RefModel, actor: RefUser, m: RefMessage, req: RefUpdateRequest): RefUpdateResult {
  applyContent(model, m, req.content!);
  model.log.push(`updateMessage actor=${actor.id} message=${m.id} ${JSON.stringify(req)} at=${model.now}`);
  return { messageIds: [m.id], noticeId: null, deletedNoticeId: null };
}

/** update_message_content + update_user_message_flags: new content, `mentioned` on every existing row. */
function applyContent(model: RefModel, m: RefMessage, content: NonNullable<RefUpdateRequest["content"]>): void {
  m.content = content.text;
  m.contentWords = new Set(content.words.map((w) => w.toLowerCase()));
  m.hasLink = content.hasLink;
  m.mentionedUserIds = [...content.mentionedUserIds];
  for (const [userId, rows] of model.rows) {
    const row = rows.get(m.id);
    if (row) row.mentioned = m.mentionedUserIds.includes(userId);
  }
}

/**
 * The topic policy migration of do_update_message when the acting user moved every
 * message of the topic they can see. Returns who followed the original topic (the
 * resolve notice stays unread for them).
 */
function migratePolicies(
  model: RefModel,
  move: {
    origChannelId: number;
    origTopic: string;
    targetChannelId: number;
    targetTopic: string;
    targetHadMessages: boolean;
    losingAccess: ReadonlySet<number>;
  },
): Set<number> {
  const orig = new Map<number, number>();
  const inaccessible: number[] = [];
  for (const [userId, policy] of policiesOn(model, move.origChannelId, move.origTopic)) {
    if (move.losingAccess.has(userId)) inaccessible.push(userId);
    else orig.set(userId, policy);
  }
  const target = policiesOn(model, move.targetChannelId, move.targetTopic);
  const followers = new Set([...orig].filter(([, p]) => p === POLICY_FOLLOWED).map(([u]) => u));
  const users = new Set([...orig.keys(), ...target.keys()]);
  // Both maps are read before any change: with a case-only rename they name the same
  // rows, and Zulip's order of writes below decides what is left.
  const pairs: [number, number, number][] = [...users].map((u) => [u, orig.get(u) ?? 0, target.get(u) ?? 0]);
  for (const userId of inaccessible) model.setTopicPolicy(userId, move.origChannelId, move.origTopic, 0);
  for (const [userId, origPolicy, targetPolicy] of pairs) {
    if (origPolicy !== 0) model.setTopicPolicy(userId, move.origChannelId, move.origTopic, 0);
    const next = move.targetHadMessages ? mergedPolicy(origPolicy, targetPolicy) : origPolicy;
    if (next === targetPolicy) continue;
    model.setTopicPolicy(userId, move.targetChannelId, move.targetTopic, next);
  }
  return followers;
}

/**
 * maybe_send_resolve_topic_notifications: Notification Bot's notice in the topic,
 * read for everyone but the subscribers following it (and read for the acting user).
 */
function sendResolveNotice(
  model: RefModel,
  actor: RefUser,
  channel: RefChannel,
  topic: string,
  resolved: boolean,
  followersOfOriginal: ReadonlySet<number> | null,
): number {
  const followers =
    followersOfOriginal ??
    new Set([...policiesOn(model, channel.id, topic)].filter(([, p]) => p === POLICY_FOLLOWED).map(([u]) => u));
  const readBy = new Set<number>();
  for (const u of model.users.values()) if (!(u.active && followers.has(u.id)) || u.id === actor.id) readBy.add(u.id);
  const id = model.nextMessageId();
  model.recordMessage({
    id,
    realmId: model.realmId,
    senderId: NOTIFICATION_BOT,
    channelId: channel.id,
    dmUsers: null,
    topic,
    contentWords: [],
    content: `@_**${actor.fullName}|${actor.id}** has marked this topic as ${resolved ? "resolved" : "unresolved"}.`,
    hasLink: false,
    mentionedUserIds: [],
    readBySender: true,
    resolveNotice: true,
    readBy,
  });
  return id;
}

/** DELETE /messages/{id}: access_message, validate_can_delete_message, do_delete_messages. */
export function deleteMessage(model: RefModel, actorId: number, messageId: number): { ok: true } | RefError {
  const actor = model.user(actorId);
  const m = model.message(messageId);
  if (!m || !actor.active || !canModifyAccess(model, actor, m)) return refuse("BAD_REQUEST", "Invalid message(s)");
  if (!isAdmin(actor)) {
    if (m.senderId !== actor.id) return refuse("BAD_REQUEST", "You don't have permission to delete this message");
    if (model.now - m.dateSent > DELETE_LIMIT_SECONDS)
      return refuse("BAD_REQUEST", "The time limit for deleting this message has passed");
  }
  model.removeMessages(new Set([m.id]));
  model.log.push(`deleteMessage actor=${actorId} message=${messageId} at=${model.now}`);
  return { ok: true };
}

/**
 * POST /streams/{id}/delete_topic: administrators; the messages of the topic they can
 * access. Then the topic's policies go, except (protected history) for users who still
 * have rows in it.
 */
export function deleteTopic(
  model: RefModel,
  actorId: number,
  channelId: number,
  topicName: string,
): { complete: boolean } | RefError {
  const actor = model.user(actorId);
  if (!actor.active || !isAdmin(actor))
    return refuse("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
  const c = model.channels.get(channelId);
  if (!c || c.realmId !== actor.realmId || !hasContentAccess(model, actor, c))
    return refuse("BAD_REQUEST", "Invalid channel ID");
  const topic = topicName === "general chat" ? "" : topicName;
  const doomed = accessibleInChannel(model, actor, c, messagesForTopic(model, c.id, topic));
  model.removeMessages(new Set(doomed.map((x) => x.id)));
  const left = messagesForTopic(model, c.id, topic);
  for (const userId of policiesOn(model, c.id, topic).keys()) {
    if (!c.historyPublicToSubscribers && left.some((x) => model.rowsOf(userId).has(x.id))) continue;
    model.setTopicPolicy(userId, c.id, topic, 0);
  }
  model.log.push(
    `deleteTopic actor=${actorId} channel=${channelId} topic=${JSON.stringify(topicName)} -> ${JSON.stringify(doomed.map((x) => x.id))}`,
  );
  return { complete: true };
}
