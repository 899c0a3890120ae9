/**
 * @module actions/message-report
 * POST /messages/{message_id}/report (Zulip's views/message_report.py and
 * lib/message_report.py): a user reports a message they can read; Notification Bot posts
 * the report, quoting the message, in the realm's moderation request channel, in the
 * topic "<reported user> moderation" (the general chat where the channel allows only it).
 *
 * Zulip writes the report in the realm's language and links a direct message absolutely
 * (the realm's URL); parley's texts are English and the engine knows no URL, so the
 * link is relative, as the move notices' are.
 */
import { canAccessMessage } from "../access.js";
import { BadRequestError } from "../errors.js";
import type { StoreState } from "../state.js";
import type { Channel, Message, User } from "../types.js";
import { topicLinkSyntax } from "./move-notices.js";
import { ensureNotificationBotInTxn, silentMention } from "./notification-bot.js";
import { internalChannelMessage, renderMessage, storeMessage } from "./send-message.js";

/** Zulip's Realm.REPORT_MESSAGE_REASONS: the API's keys and the report's wording. */
export const REPORT_REASONS = {
  spam: "Spam",
  harassment: "Harassment",
  inappropriate: "Inappropriate content",
  norms: "Violates community norms",
  other: "Other reason",
} as const;
export type ReportType = keyof typeof REPORT_REASONS;
export const REPORT_TYPES = Object.keys(REPORT_REASONS) as ReportType[];

/** Zulip's Realm.MAX_REPORT_MESSAGE_EXPLANATION_LENGTH. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
/** Zulip's MAX_MESSAGE_LENGTH less the description and 500 for the report's own words. */
const MAX_QUOTED_LENGTH = 10_000 - MAX_REPORT_DESCRIPTION_LENGTH - 500;
const TRUNCATED = "\n[message truncated]";

export interface MessageReport {
  readonly reportType: ReportType;
  readonly description: string;
}

/** Refusals in Zulip's order: the explanation, the realm's channel, then the message. Returns the report's ID. */
export function reportMessage(state: StoreState, reporter: User, messageId: number, report: MessageReport): number {
  if (report.reportType === "other" && report.description === "")
    throw new BadRequestError("An explanation is required.");
  const realm = state.realms.get(reporter.realmId);
  // A channel setting is stored as a channel's ID, or null for none.
  const channelId = realm?.properties?.moderationRequestChannelId;
  const channel = typeof channelId === "number" ? state.channels.get(channelId) : undefined;
  if (!realm || !channel) throw new BadRequestError("Message reporting is not enabled in this organization.");
  const message =
    Number.isSafeInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? state.messageRecord(messageId)
      : undefined;
  if (!message || !canAccessMessage(state, reporter, message)) throw new BadRequestError("Invalid message(s)");
  const reported = state.users.get(message.senderId);
  if (!reported) throw new BadRequestError("Invalid message(s)");

  const content = reportText(state, reporter, reported, message, report);
  const topic = `${reported.fullName} moderation`;
  return state.write((ctx) => {
    const bot = ensureNotificationBotInTxn(state, ctx, realm);
    const input = internalChannelMessage(state, bot, channel, topic, content, []);
    return storeMessage(state, ctx, input, renderMessage(state, input)).id;
  });
}

function reportText(
  state: StoreState,
  reporter: User,
  reported: User,
  message: Message,
  report: MessageReport,
): string {
  const sentAt = new Date(message.dateSent * 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
  const by = `${silentMention(reporter)} reported a message sent by ${silentMention(reported)}`;
  let header: string;
  let original: string;
  if (message.recipient.type === "channel") {
    const channel = state.channels.get(message.recipient.channelId);
    header = `${by} at <time:${sentAt}>.`;
    original = channel
      ? `Original message at ${messageLinkSyntax(channel, message.topic, message.id)}`
      : "Original message";
  } else {
    const userIds = state.conversations.get(message.recipient.conversationId)?.userIds ?? [];
    const others = userIds.filter((id) => id !== reported.id).map((id) => state.users.get(id));
    const mentions = others.flatMap((u) => (u ? [silentMention(u)] : []));
    if (userIds.length <= 2) {
      // A report of one's own one-on-one message names the other participant (oneself when alone).
      const to = reported.id === reporter.id ? (mentions[0] ?? silentMention(reporter)) : undefined;
      header = to === undefined ? `${by} at <time:${sentAt}>.` : `${by} to ${to} at <time:${sentAt}>.`;
    } else {
      header = `${by} to ${displayList(mentions)} at <time:${sentAt}>.`;
    }
    const slug = [...userIds].sort((a, b) => a - b).join(",") + (userIds.length >= 3 ? "-group" : "");
    original = `[Original message](#narrow/dm/${slug}/near/${message.id})`;
  }
  const quoted =
    message.content.length <= MAX_QUOTED_LENGTH
      ? message.content
      : message.content.slice(0, MAX_QUOTED_LENGTH - TRUNCATED.length) + TRUNCATED;
  const fence = unusedFence(quoted);
  return (
    `${header}\n` +
    "```quote\n" +
    `**${REPORT_REASONS[report.reportType]}**. ${report.description}\n` +
    "```\n\n" +
    `${fence} spoiler ${original}\n${quoted}\n${fence}\n`
  );
}

/** Zulip's get_message_link_syntax: #**channel>topic@id**, or a plain link when the names would break it. */
function messageLinkSyntax(channel: Channel, topic: string, messageId: number): string {
  const topicLink = topicLinkSyntax(channel, topic);
  if (topicLink.startsWith("#**")) return `${topicLink.slice(0, -2)}@${messageId}**`;
  // "[#c > t](#narrow/…/topic/t)" becomes "[#c > t @ 💬](#narrow/…/topic/t/near/id)".
  return topicLink.replace(/\]\((.*)\)$/, (_m, url: string) => ` @ 💬](${url}/near/${messageId})`);
}

/** A fence longer than any fence inside the quoted text, so the quote cannot close it (Zulip's get_unused_fence). */
export function unusedFence(content: string): string {
  let length = 3;
  for (const match of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, match[1]!.length + 1);
  return "`".repeat(length);
}

/** "A", "A and B", "A, B and C". */
export function displayList(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
