/**
 * @module mail/missed-message
 * The missed-message email of one conversation (a channel topic, a one-on-one or a
 * group direct message), in the shape of Zulip's templates/zerver/emails/missed_message.*:
 * its subject lines, the messages with the sender named where the sender changes, the
 * reason line of the most salient trigger, and the footer of a server that does not
 * accept replies by email (parley has no email gateway). Text and HTML bodies.
 */
import { topicNarrowUrl } from "../narrow/url.js";
import type { Channel, EmailTrigger, Message, Realm, User } from "../types.js";
import type { MailInput } from "./outbox.js";

/** Zulip's page on the email gateway, linked from the footer of servers without one. */
export const EMAIL_GATEWAY_HELP_URL = "https://zulip.readthedocs.io/en/latest/production/email-gateway.html";
const RESOLVED_PREFIX = "✔ ";

export interface MissedMessage {
  readonly message: Message;
  readonly sender: User;
  readonly trigger: EmailTrigger;
  readonly mentionedGroupName: string | null;
}

export interface MissedConversation {
  readonly user: User;
  readonly realm: Realm;
  /** The realm's URL (scheme, host, no trailing slash). */
  readonly realmUrl: string;
  /** A channel topic's channel; null for direct messages. */
  readonly channel: Channel | null;
  /** A direct message's other participants (the user left out), by ID. */
  readonly otherParticipants: readonly User[];
  /** Oldest first. */
  readonly messages: readonly MissedMessage[];
  /** The realm's message_content_allowed_in_email_notifications, the user's message_content_in_email_notifications. */
  readonly contentAllowedByRealm: boolean;
  readonly contentAllowedByUser: boolean;
  /** Whether the subject ends with "[realm name]" (realm_name_in_email_notifications_policy). */
  readonly realmNameInSubject: boolean;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => HTML_ESCAPES[c]!);
}

/** Zulip's personal_narrow_url slug: the user's ID, then the name with URL-unsafe runs as "-". */
function personalSlug(user: User): string {
  return `${user.id}-${user.fullName.replace(/[ "%/<>`\u0000-\u001f\u007f]+/g, "-")}`;
}

/** Where "Reply in ..." leads: the topic, or the direct message conversation. */
export function missedNarrowUrl(c: MissedConversation): string {
  if (c.channel !== null)
    return `${c.realmUrl}${topicNarrowUrl(c.channel.id, c.channel.name, c.messages[0]!.message.topic)}`;
  if (c.otherParticipants.length <= 1) {
    const other = c.otherParticipants[0] ?? c.user;
    return `${c.realmUrl}/#narrow/dm/${personalSlug(other)}`;
  }
  return `${c.realmUrl}/#narrow/dm/${c.otherParticipants.map((u) => u.id).join(",")}-group`;
}

/** Zulip's group DM display name: "A and B", "A, B, and C", "A, B, and 3 others". */
function groupDisplayName(others: readonly User[]): string {
  const names = others.map((u) => u.fullName);
  if (names.length === 2) return `${names[0]} and ${names[1]}`;
  if (names.length === 3) return `${names[0]}, ${names[1]}, and ${names[2]}`;
  return `${names.slice(0, 2).join(", ")}, and ${names.length - 2} others`;
}

function distinctSenders(messages: readonly MissedMessage[]): User[] {
  const out = new Map<number, User>();
  for (const m of messages) out.set(m.sender.id, m.sender);
  return [...out.values()];
}

function subjectOf(c: MissedConversation, showContent: boolean): string {
  let subject: string;
  if (!showContent) subject = "New messages";
  else if (c.channel === null && c.otherParticipants.length >= 2)
    subject = `Group DMs with ${groupDisplayName(c.otherParticipants)}`;
  else if (c.channel === null)
    subject = `DMs with ${distinctSenders(c.messages)
      .map((u) => u.fullName)
      .join(", ")}`;
  else {
    const topic = c.messages[0]!.message.topic;
    subject = topic.startsWith(RESOLVED_PREFIX)
      ? `[resolved] #${c.channel.name} > ${topic.slice(RESOLVED_PREFIX.length)}`
      : `#${c.channel.name} > ${topic}`;
  }
  return c.realmNameInSubject ? `${subject} [${c.realm.name}]` : subject;
}

/** Zulip's reason line, for the most salient trigger among the messages (its template's order). */
function reasonOf(c: MissedConversation): string | null {
  const triggers = new Set(c.messages.map((m) => m.trigger));
  const where = c.channel ? `#${c.channel.name} > ${c.messages[0]!.message.topic}` : "";
  if (c.messages.some((m) => m.trigger === "mentioned" && m.mentionedGroupName === null))
    return "You are receiving this because you were personally mentioned.";
  const group = c.messages.find((m) => m.mentionedGroupName !== null)?.mentionedGroupName;
  if (group) return `You are receiving this because @${group} was mentioned.`;
  if (triggers.has("topic_wildcard_mentioned_in_followed_topic") || triggers.has("topic_wildcard_mentioned"))
    return `You are receiving this because all topic participants were mentioned in ${where}.`;
  if (triggers.has("stream_wildcard_mentioned_in_followed_topic"))
    return "You are receiving this because you have wildcard mention notifications enabled for topics you follow.";
  if (triggers.has("stream_wildcard_mentioned"))
    return `You are receiving this because everyone was mentioned in #${c.channel?.name ?? ""}.`;
  if (triggers.has("alert_word")) return "You are receiving this because a message contains one of your alert words.";
  if (triggers.has("followed_topic_email_notify"))
    return "You are receiving this because you have email notifications enabled for topics you follow.";
  return null;
}

/** Site-relative links and images (uploads, narrows, emoji) made absolute, as Zulip's relative_to_full_url. */
export function absoluteHtml(html: string, realmUrl: string): string {
  return html.replace(/\b(href|src)="\/(?!\/)/g, `$1="${realmUrl}/`);
}

export function absoluteText(text: string, realmUrl: string): string {
  return text.replace(/(^|[\s(])\/user_uploads\//g, `$1${realmUrl}/user_uploads/`);
}

/** Zulip's prepend_sender_to_message: the sender in bold at the start of the first paragraph. */
export function prependSender(html: string, name: string): string {
  const bold = `<b>${escapeHtml(name)}</b>: `;
  return html.startsWith("<p>") ? `<p>${bold}${html.slice(3)}` : `<p>${bold}</p>${html}`;
}

export function missedMessageMail(c: MissedConversation): MailInput {
  const showContent = c.contentAllowedByRealm && c.contentAllowedByUser;
  const narrowUrl = missedNarrowUrl(c);
  const settingsUrl = `${c.realmUrl}/#settings/notifications`;
  const reason = reasonOf(c);
  const text: string[] = [];
  const html: string[] = [];
  if (showContent) {
    let previousSender: number | null = null;
    for (const m of c.messages) {
      const named = m.sender.id !== previousSender;
      previousSender = m.sender.id;
      const plain = absoluteText(m.message.content, c.realmUrl);
      const rendered = absoluteHtml(m.message.renderedContent, c.realmUrl);
      text.push(named ? `${m.sender.fullName}: ${plain}` : plain, "");
      html.push(`<div class="missed_message">${named ? prependSender(rendered, m.sender.fullName) : rendered}</div>`);
    }
  } else if (!c.contentAllowedByRealm) {
    const help = `${c.realmUrl}/help/hide-message-content-in-emails`;
    text.push(
      "This email does not include message content because your organization hides message content in email " +
        `notifications. See ${help} for more details.`,
      "",
    );
    html.push(
      '<div class="missed_message no-content-explanation">This email does not include message content because ' +
        `your organization <a href="${help}">hides message content</a> in email notifications.</div>`,
    );
  } else {
    const help = `${c.realmUrl}/help/email-notifications#hide-message-content`;
    text.push(
      "This email does not include message content because you have chosen to hide message content in email " +
        `notifications. See ${help} for more details.`,
      "",
    );
    html.push(
      '<div class="missed_message no-content-explanation">This email does not include message content because ' +
        `you have chosen to <a href="${help}">hide message content</a> in email notifications.</div>`,
    );
  }
  const realmName = c.realm.name;
  text.push("--");
  if (reason !== null) text.push(reason);
  text.push("");
  if (showContent) {
    text.push(`Reply in ${realmName} Zulip:`, "", narrowUrl, "");
    text.push(
      "Do not reply to this email. This Zulip server is not configured to accept",
      "incoming emails. Help:",
      EMAIL_GATEWAY_HELP_URL,
      "",
    );
  } else text.push(`View or reply in ${realmName} Zulip:`, "", narrowUrl, "");
  text.push("Manage email preferences:", "", settingsUrl);

  const footer: string[] = ['<div class="email-preferences">&mdash;<br />'];
  if (reason !== null) footer.push(`${escapeHtml(reason)}<br />`);
  const view = showContent ? "Reply in" : "View or reply in";
  footer.push(
    `<a href="${escapeHtml(narrowUrl)}">${view} ${escapeHtml(realmName)} Zulip</a>, or ` +
      `<a href="${escapeHtml(settingsUrl)}">manage email preferences</a>.<br />`,
  );
  if (showContent)
    footer.push(
      "<br />Do not reply to this email. This Zulip server is not configured to accept incoming emails " +
        `(<a href="${EMAIL_GATEWAY_HELP_URL}">help</a>).`,
    );
  footer.push("</div>");
  return {
    to: [c.user.deliveryEmail],
    subject: subjectOf(c, showContent),
    fromName: "Zulip notifications",
    text: text.join("\n"),
    html: `<!DOCTYPE html>\n<html><body>\n${html.join("\n")}\n${footer.join("\n")}\n</body></html>\n`,
  };
}
