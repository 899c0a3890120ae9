/**
 * @module http/webhooks/integrations/slack-incoming
 * Zulip's Slack-compatible incoming webhook (zerver/webhooks/slack_incoming): a
 * Slack message payload, as JSON or as a form field `payload`, becomes Markdown:
 * Block Kit blocks and legacy attachments rendered piece by piece, else the text (after
 * the icon emoji); Slack's `<url|label>` links and `*bold*` / `_italic_` converted. The
 * topic is the `topic` parameter, else the payload's channel without its # or @, else
 * "(no topic)" (stored as the empty topic, as every send of that name is here).
 * A payload with nothing to show posts nothing.
 */
import { BadRequestError, MissingArgumentError } from "../../../engine/index.js";
import { InvalidJsonError } from "../../errors.js";
import type { WebhookIntegration, WebhookRequest } from "../integration.js";
import { Wild } from "../payload.js";

const BLOCK_TYPES = ["actions", "context", "divider", "header", "image", "input", "section"];

function payloadOf(request: WebhookRequest): Wild {
  let text: string;
  if (request.contentType === "application/json") text = request.body.toString("utf8");
  else {
    const form = new URLSearchParams(request.body.toString("utf8"));
    const value = form.get("payload") ?? request.params.get("payload");
    if (value === null || value === undefined) throw new MissingArgumentError("payload");
    text = value;
  }
  const payload = Wild.parse(text);
  if (payload === null) throw new InvalidJsonError();
  return payload;
}

/** Django's URLValidator, roughly: an absolute http(s) or ftp(s) URL with a host. */
function url(value: Wild): string {
  const text = value.str();
  let parsed: URL | null = null;
  try {
    parsed = new URL(text);
  } catch {
    parsed = null;
  }
  if (!parsed || !/^(https?|ftps?):$/.test(parsed.protocol) || parsed.hostname === "")
    throw new BadRequestError(`${value.path} is not a URL`);
  return text;
}

function oneOf(value: Wild, allowed: readonly string[]): string {
  const text = value.str();
  if (!allowed.includes(text)) throw new BadRequestError(`Invalid ${value.path}`);
  return text;
}

/** A text object: {type: plain_text | mrkdwn, text}. */
function textOf(value: Wild, plainOnly = false): string {
  oneOf(value.get("type"), plainOnly ? ["plain_text"] : ["plain_text", "mrkdwn"]);
  return value.get("text").str();
}

const joinPieces = (pieces: readonly string[]): string =>
  pieces
    .map((piece) => piece.trim())
    .filter((piece) => piece !== "")
    .join("\n\n");

function renderElement(element: Wild): string {
  if (element.get("type").str() !== "image") return "";
  return `[${element.get("alt_text").str()}](${url(element.get("image_url"))})`;
}

function fieldsTable(fields: readonly string[]): string {
  // A table cannot hold newlines or pipes: they become spaces.
  const cells = fields.map((text) => text.replace(/\n/g, " ").replace(/\|/g, " "));
  let table = "| | |\n|-|-|\n";
  for (let i = 0; i < cells.length; i += 2) table += `| ${cells[i]} | ${cells[i + 1] ?? ""} |\n`;
  return table;
}

function renderBlock(block: Wild): string {
  const type = oneOf(block.get("type"), BLOCK_TYPES);
  if (type === "context" && block.opt("elements")?.truthy) {
    const pieces = block
      .get("elements")
      .list()
      .map((element) =>
        oneOf(element.get("type"), ["image", "plain_text", "mrkdwn"]) === "image"
          ? renderElement(element)
          : textOf(element),
      );
    return joinPieces(pieces);
  }
  if (type === "divider") return "----";
  if (type === "header") return "## " + textOf(block.get("text"), true);
  if (type === "image") {
    const image = url(block.get("image_url"));
    let alt = block.get("alt_text").str();
    if (block.has("title")) alt = textOf(block.get("title"), true);
    return `[${alt}](${image})`;
  }
  if (type === "section") {
    const pieces: string[] = [];
    if (block.has("text")) pieces.push(textOf(block.get("text")));
    if (block.has("accessory")) pieces.push(renderElement(block.get("accessory")));
    if (block.has("fields")) {
      const fields = block
        .get("fields")
        .list()
        .map((field) => textOf(field));
      pieces.push(fields.length === 1 ? fields[0]! : fieldsTable(fields));
    }
    return joinPieces(pieces);
  }
  return "";
}

function renderAttachment(attachment: Wild): string {
  const pieces: string[] = [];
  const present = (key: string): Wild | undefined => {
    const value = attachment.opt(key);
    return value?.truthy ? value : undefined;
  };
  const title = present("title");
  if (title) {
    const link = present("title_link");
    pieces.push(link ? `## [${title.str()}](${url(link)})` : `## ${title.str()}`);
  }
  const pretext = present("pretext");
  if (pretext) pieces.push(pretext.str());
  const text = present("text");
  if (text) pieces.push(text.str());
  if (attachment.has("fields")) {
    const lines: string[] = [];
    for (const field of attachment.get("fields").list()) {
      const fieldTitle = field.opt("title");
      const value = field.opt("value");
      if (fieldTitle?.truthy && value?.truthy) lines.push(`*${fieldTitle.str()}*: ${value.str()}`);
      else if (fieldTitle?.truthy) lines.push(`*${fieldTitle.str()}*`);
      else if (value?.truthy) lines.push(value.str());
    }
    pieces.push(lines.join("\n"));
  }
  const blocks = present("blocks");
  if (blocks) pieces.push(...blocks.list().map(renderBlock));
  const image = present("image_url");
  if (image) pieces.push(`[](${url(image)})`);
  const footer = present("footer");
  if (footer) pieces.push(footer.str());
  const ts = present("ts");
  if (ts) pieces.push(`<time:${ts.int()}>`);
  return joinPieces(pieces);
}

/** Slack's `<https://x|label>` links as Markdown links. */
export function replaceLinks(text: string): string {
  return text.replace(/<([\p{L}\p{N}_]+?:\/\/.*?)\|(.*?)>/gu, "[$2]($1)");
}

/** Slack's `*bold*` and `_italic_` in Zulip's Markdown (`**bold**`, `*italic*`). */
export function replaceFormatting(text: string): string {
  const bold = /([^\p{L}\p{N}_]|^)\*(?!\s+)([^*\n]+)(?<!\s)\*((?=[^\p{L}\p{N}_])|$)/gu;
  const italic = /([^\p{L}\p{N}_]|^)_(?!\s+)([^_\n]+)(?<!\s)_((?=[^\p{L}\p{N}_])|$)/gu;
  return text.replace(bold, "$1**$2**$3").replace(italic, "$1*$2*$3");
}

export const slackIncomingIntegration: WebhookIntegration = {
  name: "slack_incoming",
  displayName: "SlackIncoming",
  parse(request) {
    const payload = payloadOf(request);
    let topic = request.params.get("topic");
    if (topic === undefined && payload.has("channel")) topic = payload.get("channel").str().replace(/^[@#]/, "");
    topic ??= "(no topic)";
    const pieces: string[] = [];
    const blocks = payload.opt("blocks");
    if (blocks?.truthy) pieces.push(...blocks.list().map(renderBlock));
    const attachments = payload.opt("attachments");
    if (attachments?.truthy) pieces.push(...attachments.list().map(renderAttachment));
    let body = joinPieces(pieces);
    const text = payload.opt("text");
    if (body === "" && text?.truthy) {
      const emoji = payload.opt("icon_emoji");
      if (emoji?.truthy) body = emoji.str() + " ";
      body = (body + text.str()).trim();
    }
    if (body === "") return [];
    return [{ topic, body: replaceFormatting(replaceLinks(body).trim()) }];
  },
};
