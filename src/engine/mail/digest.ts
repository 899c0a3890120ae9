/**
 * @module mail/digest
 * The weekly digest email (Zulip's templates/zerver/emails/digest.*): for someone who
 * has been away, the hot conversations of their channels (each with its first messages,
 * then how many more and who took part) and the channels created meanwhile. Text and
 * HTML bodies; the wording is parley's. Which conversations are hot, and whether there
 * is enough to send at all, is decided in actions/digest-emails.ts.
 */
import { channelNarrowUrl, topicNarrowUrl } from "../narrow/url.js";
import type { Channel, Message, Realm, User } from "../types.js";
import { absoluteHtml, absoluteText, escapeHtml, prependSender } from "./missed-message.js";
import type { MailInput } from "./outbox.js";

export interface DigestConversation {
  readonly channel: Channel;
  /** As the first message of the conversation spells it. */
  readonly topic: string;
  /** The first messages of the conversation (at most two), oldest first. */
  readonly samples: readonly { readonly message: Message; readonly sender: User }[];
  /** Messages by people (not bots) beyond the samples; zero or less: none to mention. */
  readonly moreCount: number;
  /** Names of the people (not bots) who wrote in it, sorted. */
  readonly participants: readonly string[];
}

export interface DigestContent {
  readonly user: User;
  readonly realm: Realm;
  /** The realm's URL (scheme, host, no trailing slash). */
  readonly realmUrl: string;
  readonly conversations: readonly DigestConversation[];
  readonly newChannels: readonly Channel[];
  /** False when the realm or the user keeps message content out of emails: topics and counts only. */
  readonly showContent: boolean;
}

/** Zulip's display_list: "A", "A and B", "A, B and C", or the first `limit` and "N others". */
export function displayList(values: readonly string[], limit: number): string {
  if (values.length <= 1) return values[0] ?? "";
  if (values.length <= limit) return `${values.slice(0, -1).join(", ")} and ${values[values.length - 1]}`;
  const rest = values.length - limit;
  return `${values.slice(0, limit).join(", ")} and ${rest} ${rest === 1 ? "other" : "others"}`;
}

function moreLine(c: DigestConversation): string | null {
  if (c.moreCount <= 0) return null;
  const noun = c.moreCount === 1 ? "message" : "messages";
  return `+ ${c.moreCount} more ${noun} by ${displayList(c.participants, 4)}.`;
}

export function digestMail(d: DigestContent): MailInput {
  const { realmUrl } = d;
  const realmName = d.realm.name;
  const settingsUrl = `${realmUrl}/#settings/notifications`;
  const text: string[] = [`Hi ${d.user.fullName},`, "", `Here is what you missed in ${realmName} while you were away.`];
  const html: string[] = [
    `<p>Hi ${escapeHtml(d.user.fullName)},</p>`,
    `<p>Here is what you missed in ${escapeHtml(realmName)} while you were away.</p>`,
  ];

  if (d.conversations.length > 0) {
    text.push("", "** Hot conversations **");
    html.push("<h2>Hot conversations</h2>");
    for (const c of d.conversations) {
      const header = `#${c.channel.name} > ${c.topic}`;
      const url = `${realmUrl}${topicNarrowUrl(c.channel.id, c.channel.name, c.topic)}`;
      text.push("", header);
      html.push(
        '<div class="digest_conversation">',
        `<div class="digest_header"><a href="${escapeHtml(url)}">${escapeHtml(header)}</a></div>`,
      );
      let previousSender: number | null = null;
      for (const { message, sender } of d.showContent ? c.samples : []) {
        const named = sender.id !== previousSender;
        previousSender = sender.id;
        const plain = absoluteText(message.content, realmUrl);
        const rendered = absoluteHtml(message.renderedContent, realmUrl);
        text.push(named ? `${sender.fullName}: ${plain}` : plain);
        html.push(`<div class="digest_message">${named ? prependSender(rendered, sender.fullName) : rendered}</div>`);
      }
      const more = moreLine(c);
      if (more !== null) {
        text.push(more);
        html.push(`<p>${escapeHtml(more)}</p>`);
      }
      html.push("</div>");
    }
  }

  if (d.newChannels.length > 0) {
    const names = d.newChannels.map((c) => c.name);
    const links = d.newChannels.map(
      (c) => `<a href="${escapeHtml(`${realmUrl}${channelNarrowUrl(c.id, c.name)}`)}">${escapeHtml(c.name)}</a>`,
    );
    text.push("", "** New channels **", `    ${displayList(names, 1000)}.`);
    html.push("<h2>New channels</h2>", `<p>${displayList(links, 1000)}.</p>`);
  }

  text.push("", `Catch up in ${realmName}: ${realmUrl}`, "", "--", "Manage email preferences (digests included):", "");
  text.push(settingsUrl);
  html.push(
    `<p><a href="${escapeHtml(realmUrl)}">Catch up in ${escapeHtml(realmName)}</a>.</p>`,
    `<div class="email-preferences">&mdash;<br /><a href="${escapeHtml(settingsUrl)}">Manage email preferences</a>` +
      " (digests included).</div>",
  );
  return {
    to: [d.user.deliveryEmail],
    subject: `Zulip digest for ${realmName}`,
    fromName: "Zulip digest",
    text: text.join("\n"),
    html: `<!DOCTYPE html>\n<html><body>\n${html.join("\n")}\n</body></html>\n`,
  };
}
