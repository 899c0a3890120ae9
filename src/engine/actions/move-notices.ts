/**
 * @module actions/move-notices
 * Notification Bot's messages about a move (Zulip's send_message_moved_breadcrumbs and
 * maybe_send_resolve_topic_notifications), stored in the move's own write: the notice
 * in the new topic first, then the one in the old topic, each read for the mover; and
 * for a resolve or unresolve alone, "@_**X|id** has marked this topic as resolved."
 * in the topic, unread only for the channel's members whose
 * resolved_topic_notice_auto_read_policy asks for it.
 *
 * Zulip writes these texts in the realm's language; parley's are English. Zulip's
 * message link is absolute (the realm's URL); the engine knows no URL, so it links
 * relatively, as Zulip's renderer turns such links anyway.
 */
import { channelSlug, encodeHashComponent } from "../narrow/url.js";
import { RoaringBitmap32, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { StoreState } from "../state.js";
import type { Channel, Realm, User } from "../types.js";
import type { WriteContext } from "../write-coordinator.js";
import { getMessageRecord } from "../storage/message-records.js";
import { deleteMessagesInWrite } from "./delete-messages.js";
import type { RenderResult } from "../render.js";
import { ensureNotificationBotInTxn, findNotificationBot, silentMention } from "./notification-bot.js";
import { internalChannelMessage, renderMessage, storeMessage } from "./send-message.js";

/** Zulip's Message.EMPTY_TOPIC_FALLBACK_NAME, for link texts. */
const GENERAL_CHAT = "general chat";
const FOLLOWED = 3;

/** Characters that break Zulip's #**channel>topic** syntax (topic_link_util). */
const BROKEN_LINK = /[`>*&[\]]|\$\$/;
const LINK_ESCAPES: Readonly<Record<string, string>> = {
  "`": "&#96;",
  ">": "&gt;",
  "*": "&#42;",
  "&": "&amp;",
  $$: "&#36;&#36;",
  "[": "&#91;",
  "]": "&#93;",
};

export function escapeLinkText(text: string): string {
  return text.replace(/[`>*&[\]]|\$\$/g, (match) => LINK_ESCAPES[match] ?? match);
}

export function topicUrl(channel: Channel, topic: string): string {
  return `#narrow/channel/${channelSlug(channel.id, channel.name)}/topic/${encodeHashComponent(topic)}`;
}

/** Zulip's get_stream_topic_link_syntax: #**channel>topic**, or a plain link when the names would break it. */
export function topicLinkSyntax(channel: Channel, topic: string): string {
  if (!BROKEN_LINK.test(topic) && !BROKEN_LINK.test(channel.name)) return `#**${channel.name}>${topic}**`;
  const shown = topic === "" ? GENERAL_CHAT : topic;
  return `[#${escapeLinkText(channel.name)} > ${escapeLinkText(shown)}](${topicUrl(channel, topic)})`;
}

export interface MoveNotices {
  readonly actor: User;
  readonly realm: Realm;
  readonly from: Channel;
  readonly fromTopic: string;
  readonly to: Channel;
  readonly toTopic: string;
  readonly targetId: number;
  /** Every moved message. */
  readonly moved: ReadonlyBitmap;
  readonly movedAll: boolean;
  readonly topicChanged: boolean;
  readonly channelChanged: boolean;
  readonly contentEdited: boolean;
  readonly resolve: "resolved" | "unresolved" | null;
  readonly sendToOldThread: boolean;
  readonly sendToNewThread: boolean;
  /** Users who followed the old topic, when the whole topic moved (Zulip's users_following_original_topic). */
  readonly followers: ReadonlySet<number> | null;
  /** The messages of the new topic the mover can see, other than the moved ones. */
  readonly visibleInNewTopic: (exclude: ReadonlyBitmap) => ReadonlyBitmap;
}

/** The notices' renderings by content, made before the write (see prerenderMoveNotices). */
export type NoticeRenders = ReadonlyMap<string, RenderResult>;

/** Whether the move leaves Notification Bot's resolve (or unresolve) notice in the topic. */
function sendsResolveNotice(notices: MoveNotices): boolean {
  return notices.topicChanged && !notices.contentEdited && !notices.channelChanged && notices.resolve !== null;
}

function sendsNewThreadNotice(notices: MoveNotices): boolean {
  const topicMove = notices.topicChanged && notices.resolve === null;
  return notices.sendToNewThread && (notices.channelChanged || topicMove);
}

function resolveNoticeText(notices: MoveNotices): string {
  return `${silentMention(notices.actor)} has marked this topic as ${notices.resolve}.`;
}

/** The notice in the new topic; `alone`: the mover sees no other message there. */
function newThreadText(notices: MoveNotices, alone: boolean): string {
  const user = silentMention(notices.actor);
  const oldLocation = topicLinkSyntax(notices.from, notices.fromTopic);
  const count = notices.moved.size;
  const link = `${topicUrl(notices.to, notices.toTopic)}/near/${notices.targetId}`;
  return alone && notices.movedAll
    ? `This topic was moved here from ${oldLocation} by ${user}.`
    : count === 1
      ? `[A message](${link}) was moved here from ${oldLocation} by ${user}.`
      : `${count} messages were moved here from ${oldLocation} by ${user}.`;
}

function oldThreadText(notices: MoveNotices): string {
  const user = silentMention(notices.actor);
  const newLocation = topicLinkSyntax(notices.to, notices.toTopic);
  const count = notices.moved.size;
  return notices.movedAll
    ? `This topic was moved to ${newLocation} by ${user}.`
    : count === 1
      ? `A message was moved from this topic to ${newLocation} by ${user}.`
      : `${count} messages were moved from this topic to ${newLocation} by ${user}.`;
}

/**
 * Renders, outside the write, the notices a staged move is expected to send, as
 * writeMoveNotices would render them (the same sender, the same texts as far as the
 * state before the move tells; the move changes nothing a notice's rendering reads).
 * Rendering a notice took a few milliseconds of the move's write. Valid only while
 * no write commits (the caller drops them on any change set); a notice whose text
 * turns out different is rendered in the write, as without them.
 */
export function prerenderMoveNotices(state: StoreState, notices: MoveNotices): NoticeRenders {
  const renders = new Map<string, RenderResult>();
  const bot = findNotificationBot(state, notices.realm.id);
  // Created in the write when missing: nothing to render as yet.
  if (!bot) return renders;
  const render = (channel: Channel, topic: string, text: string): void => {
    const input = internalChannelMessage(state, bot, channel.id, topic, text, []);
    renders.set(input.content, renderMessage(state, input));
  };
  if (sendsResolveNotice(notices)) render(notices.to, notices.toTopic, resolveNoticeText(notices));
  // Before the move the new topic holds no resolve notice of this move: only the moved messages are excluded.
  if (sendsNewThreadNotice(notices))
    render(notices.to, notices.toTopic, newThreadText(notices, notices.visibleInNewTopic(notices.moved).isEmpty));
  if (notices.sendToOldThread) render(notices.from, notices.fromTopic, oldThreadText(notices));
  return renders;
}

/** Stores the move's notices inside `ctx`'s write; `renders`, those rendered before it (prerenderMoveNotices). */
export function writeMoveNotices(
  state: StoreState,
  ctx: WriteContext,
  notices: MoveNotices,
  renders: NoticeRenders | null = null,
): void {
  const bot = ensureNotificationBotInTxn(state, ctx, notices.realm);
  const send = (channel: Channel, topic: string, content: string, readBy: readonly number[]): number => {
    const input = internalChannelMessage(state, bot, channel.id, topic, content, readBy);
    const rendered = renders?.get(input.content) ?? renderMessage(state, input);
    return storeMessage(state, ctx, input, rendered).id;
  };
  let resolveNotice: number | null = null;
  if (sendsResolveNotice(notices) && !deletePreviousResolveNotice(state, ctx, notices, bot)) {
    const readBy = resolveNoticeReaders(state, notices);
    resolveNotice = send(notices.to, notices.toTopic, resolveNoticeText(notices), readBy);
  }
  const readBy = [notices.actor.id];
  if (sendsNewThreadNotice(notices)) {
    const exclude = RoaringBitmap32.from(notices.moved);
    if (resolveNotice !== null) exclude.add(resolveNotice);
    const alone = notices.visibleInNewTopic(exclude).isEmpty;
    send(notices.to, notices.toTopic, newThreadText(notices, alone), readBy);
  }
  if (notices.sendToOldThread) send(notices.from, notices.fromTopic, oldThreadText(notices), readBy);
}

/** Zulip's RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS (production). */
export const RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS = 60;

/** A resolve or unresolve notice's text (only Notification Bot sends them). */
const RESOLVE_NOTICE = /^@_\*\*[^\n]*\|\d+\*\* has marked this topic as (un)?resolved\.$/;

/**
 * Zulip's maybe_delete_previous_resolve_topic_notification: a resolve undone (or an
 * unresolve redone) soon after deletes the notice the first one left, the newest
 * message of the topic, instead of adding another. Returns whether it did.
 */
function deletePreviousResolveNotice(state: StoreState, ctx: WriteContext, notices: MoveNotices, bot: User): boolean {
  const topic = state.bitmaps.get(key.channelTopic(notices.to.id, notices.toTopic));
  if (topic.isEmpty) return false;
  const last = getMessageRecord(state.tables, topic.maximum());
  if (!last || last.senderId !== bot.id || !RESOLVE_NOTICE.test(last.content)) return false;
  if (state.now() - last.dateSent > RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS) return false;
  deleteMessagesInWrite(state, ctx, [last], notices.actor.id);
  return true;
}

/**
 * Who gets the resolve notice read: the channel's members but those Zulip's
 * get_unread_user_ids_for_resolved_topic_notifications leaves it unread for (active
 * humans whose policy is "never" auto-read, or "except_followed" while they follow the
 * topic), and the mover. One pass over the members (10,000 in a large channel), the
 * policy asked first: most members read it by policy alone, without their user record.
 */
function resolveNoticeReaders(state: StoreState, notices: MoveNotices): number[] {
  const where: NoticePlace = { channelId: notices.to.id, topic: notices.toTopic, followers: notices.followers };
  return readersAmong(state, state.subscribers.get(notices.from.id), where, notices.actor.id);
}

/** The resolve notice's place, for readersAmong. */
interface NoticePlace {
  readonly channelId: number;
  readonly topic: string;
  readonly followers: ReadonlySet<number> | null;
}

/**
 * resolveNoticeReaders' loop, apart from MoveNotices: V8 deoptimized it on a notices
 * object of a new hidden class ("wrong map"), and the 10,000 members' loop then ran in the
 * interpreter for the next several resolves, 5-10 ms instead of ~0.2 ms.
 */
function readersAmong(
  state: StoreState,
  members: ReadonlySet<number> | undefined,
  where: NoticePlace,
  actorId: number,
): number[] {
  const readBy: number[] = [];
  let mover = false;
  for (const userId of members ?? []) {
    if (unreadResolveNotice(state, where, userId)) continue;
    readBy.push(userId);
    if (userId === actorId) mover = true;
  }
  if (!mover) readBy.push(actorId);
  return readBy;
}

function unreadResolveNotice(state: StoreState, where: NoticePlace, userId: number): boolean {
  const policy = state.settingsOf(userId).resolved_topic_notice_auto_read_policy;
  if (policy !== "never" && policy !== "except_followed") return false;
  const { followers } = where;
  // Followers known (a whole-topic move): a set lookup before the user record.
  if (policy === "except_followed" && followers !== null && !followers.has(userId)) return false;
  const user = state.users.get(userId);
  if (!user || !user.isActive || user.isBot) return false;
  if (policy === "never" || followers !== null) return true;
  return state.userTopics.policyOf(userId, where.channelId, where.topic) === FOLLOWED;
}

/** The topic's messages other than `exclude` (a helper for visibleInNewTopic). */
export function topicMessagesExcept(
  state: StoreState,
  channelId: number,
  topic: string,
  exclude: ReadonlyBitmap,
): ReadonlyBitmap {
  return RoaringBitmap32.andNot(state.bitmaps.get(key.channelTopic(channelId, topic)), exclude);
}
