/**
 * @module markdown/channels
 * Channel, topic and message links: `#**channel**`, `#**channel>topic**` and
 * `#**channel>topic@123**`. The most specific form is tried first; a channel the
 * sender cannot see is left for the other inline rules, so it renders as
 * `#<strong>channel</strong>` like Zulip and leaks nothing about the channel.
 */
import type { StateInline } from "markdown-it";
import type { RenderChannel, RenderContext } from "../engine/render.js";
import { escapeAttr, escapeText } from "./escape.js";
import { mayStartMention } from "./mentions.js";
import { channelNarrowUrl, messageNarrowUrl, topicNarrowUrl } from "../engine/index.js";
import { pushInlineHtml } from "./raw-html.js";
import { renderStateOf } from "./render-state.js";

/** Bound on names: keeps each attempt O(1) so hostile input stays linear. */
const MAX_NAME = 200;
const MESSAGE_LINK_RE = new RegExp(String.raw`#\*\*([^*>]{1,${MAX_NAME}})>([^*]{1,${MAX_NAME}})@(\d{1,20})\*\*`, "y");
const TOPIC_LINK_RE = new RegExp(String.raw`#\*\*([^*>]{1,${MAX_NAME}})>([^*]{1,${MAX_NAME}})\*\*`, "y");
const CHANNEL_LINK_RE = new RegExp(String.raw`#\*\*([^*]{1,${MAX_NAME}})\*\*`, "y");

interface LinkMatch {
  readonly end: number;
  readonly html: string;
}

function execAt(re: RegExp, state: StateInline): RegExpExecArray | null {
  re.lastIndex = state.pos;
  const match = re.exec(state.src);
  return match && state.pos + match[0].length <= state.posMax ? match : null;
}

function anchor(className: string, channel: RenderChannel, href: string, text: string, withId: boolean): string {
  const idAttr = withId ? ` data-stream-id="${escapeAttr(String(channel.id))}"` : "";
  return `<a class="${className}"${idAttr} href="${escapeAttr(href)}">${escapeText(text)}</a>`;
}

function findChannelLink(state: StateInline, context: RenderContext): LinkMatch | null {
  const end = (m: RegExpExecArray): number => state.pos + m[0].length;

  const message = execAt(MESSAGE_LINK_RE, state);
  const messageChannel = message && context.findChannelByName(message[1] ?? "");
  if (message && messageChannel) {
    const topic = message[2] ?? "";
    const messageId = message[3] ?? "";
    const href = messageNarrowUrl(messageChannel.id, messageChannel.name, topic, messageId);
    // Zulip's message links carry no data-stream-id.
    const html = anchor("message-link", messageChannel, href, `#${messageChannel.name} > ${topic} @ 💬`, false);
    return { end: end(message), html };
  }

  const topicLink = execAt(TOPIC_LINK_RE, state);
  const topicChannel = topicLink && context.findChannelByName(topicLink[1] ?? "");
  if (topicLink && topicChannel) {
    const topic = topicLink[2] ?? "";
    const href = topicNarrowUrl(topicChannel.id, topicChannel.name, topic);
    return {
      end: end(topicLink),
      html: anchor("stream-topic", topicChannel, href, `#${topicChannel.name} > ${topic}`, true),
    };
  }

  const channelLink = execAt(CHANNEL_LINK_RE, state);
  const channel = channelLink && context.findChannelByName(channelLink[1] ?? "");
  if (channelLink && channel) {
    const href = channelNarrowUrl(channel.id, channel.name);
    return { end: end(channelLink), html: anchor("stream", channel, href, `#${channel.name}`, true) };
  }
  return null;
}

/** markdown-it inline rule for everything starting with `#`. */
export function channelLinkRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */) return false;
  if (!mayStartMention(state.src, state.pos)) return false;
  const link = findChannelLink(state, renderStateOf(state.env).context);
  if (!link) return false;
  if (!silent) pushInlineHtml(state, link.html);
  state.pos = link.end;
  return true;
}
