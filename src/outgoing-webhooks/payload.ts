/**
 * @module outgoing-webhooks/payload
 * What an outgoing webhook bot's service is sent, and how its answer is read, in
 * Zulip's two interfaces (zerver/lib/outgoing_webhook.py at Zulip 12.0):
 * - generic (1): JSON `{data, message, bot_email, bot_full_name, token, trigger}`,
 *   `message` as GET /messages gives it with apply_markdown=false and
 *   client_gravatar=false, plus `rendered_content`; the answer's `content` (or the
 *   older `response_string`) is posted unless `response_not_required` is set;
 * - Slack-compatible (2): a form of Slack's legacy outgoing webhook fields (channel
 *   messages only); the answer's `text` is posted.
 */
import type { Store, WebhookDelivery } from "../engine/index.js";
import { messageBody } from "../wire/message.js";

/** Zulip's Service.GENERIC and Service.SLACK. */
export const GENERIC_INTERFACE = 1;
export const SLACK_INTERFACE = 2;

export interface RequestBody {
  readonly contentType: string;
  readonly body: string;
}

/** The generic interface's JSON body. */
export function genericRequest(store: Store, delivery: WebhookDelivery): RequestBody {
  const message = messageBody(store, delivery.realm, delivery.message, {
    applyMarkdown: false,
    clientGravatar: false,
    allowEmptyTopicName: true,
  });
  message["rendered_content"] = delivery.message.renderedContent;
  const payload = {
    data: delivery.message.content,
    message,
    bot_email: delivery.bot.email,
    bot_full_name: delivery.bot.fullName,
    token: delivery.service.token,
    trigger: delivery.item.trigger,
  };
  return { contentType: "application/json", body: JSON.stringify(payload) };
}

/**
 * The Slack interface's form body, in Zulip's field order; null for a direct message
 * (Slack's format has no place for one). `realmHost` is Zulip's realm.host.
 */
export function slackRequest(store: Store, delivery: WebhookDelivery, realmHost: string): RequestBody | null {
  const { message, channel } = delivery;
  if (channel === null) return null;
  const sender = store.findUser(message.senderId);
  const form = new URLSearchParams([
    ["token", delivery.service.token],
    ["team_id", `T${delivery.realm.id}`],
    ["team_domain", realmHost],
    ["channel_id", `C${channel.id}`],
    ["channel_name", channel.name],
    ["thread_ts", String(message.dateSent)],
    ["timestamp", String(message.dateSent)],
    ["user_id", `U${message.senderId}`],
    ["user_name", sender?.fullName ?? ""],
    ["text", message.content],
    ["trigger_word", delivery.item.trigger],
    ["service_id", String(delivery.bot.id)],
  ]);
  return { contentType: "application/x-www-form-urlencoded", body: form.toString() };
}

/** What a 2xx answer asks: a message to post (null: none), or a malformed answer. */
export type SuccessReading =
  | { readonly kind: "content"; readonly content: string | null }
  | {
      readonly kind: "invalid";
      readonly error: "Invalid JSON in response" | "Invalid response format";
    };

/** Python's truthiness of a JSON value (Zulip reads response_not_required with it). */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object" && value !== null) return Object.keys(value).length > 0;
  return value !== undefined && value !== false && value !== null && value !== 0 && value !== "";
}

/** Python's str() of a JSON value, as Zulip applies it to `content` and `response_string`. */
export function pythonStr(value: unknown): string {
  return typeof value === "string" ? value : pythonRepr(value);
}

function pythonRepr(value: unknown): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return pythonStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(", ")}]`;
  if (typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonStringRepr(k)}: ${pythonRepr(v)}`)
      .join(", ")}}`;
  return String(value);
}

/** Python's repr() of a str: single quotes unless only double quotes avoid escaping. */
export function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\" || ch === quote) out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + quote;
}

/** Python's repr() of bytes (Zulip shows a failed answer's body so): b'...', non-ASCII as \xNN. */
export function pythonBytesRepr(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString("latin1");
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = `b${quote}`;
  for (const byte of bytes) {
    const ch = String.fromCharCode(byte);
    if (ch === "\\" || ch === quote) out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (byte < 0x20 || byte >= 0x7f) out += `\\x${byte.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + quote;
}

/** Zulip's process_success_response with the interface's process_success. */
export function readSuccess(serviceInterface: number, bodyText: string): SuccessReading {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    return { kind: "invalid", error: "Invalid JSON in response" };
  }
  // zulip_botserver before 2021-05 answered json.dumps("") for "no response required".
  if (json === "") return { kind: "content", content: null };
  if (typeof json !== "object" || json === null || Array.isArray(json))
    return { kind: "invalid", error: "Invalid response format" };
  const answer = json as Record<string, unknown>;
  let content: string | null = null;
  if (serviceInterface === SLACK_INTERFACE) {
    // Zulip posts `text` as is; a non-string there breaks its worker: nothing is posted here.
    if (typeof answer["text"] === "string") content = answer["text"];
  } else if (truthy(answer["response_not_required"])) {
    content = null;
  } else if ("response_string" in answer) {
    content = pythonStr(answer["response_string"]);
  } else if ("content" in answer) {
    content = pythonStr(answer["content"]);
  }
  return { kind: "content", content: content === null || content.trim() === "" ? null : content };
}
