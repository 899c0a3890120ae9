/**
 * @module http/endpoints/messages/send-message
 * POST /messages — https://zulip.com/api/send-message
 * - `to`: for channel messages a name or ID (plain, or JSON: "general", 5, [5]); for
 *   direct messages a JSON list of user IDs or emails, or comma-separated emails.
 *   Optional, as in Zulip: a channel message without it goes to the sender's
 *   default_sending_stream (a bot's; "Missing channel" without one), a direct message
 *   without it is refused ("Message must have recipients").
 * - queue_id/local_id (local echo) must come together; the sender's event on that
 *   queue carries local_message_id.
 * - automatic_new_visibility_policy (2 unmuted, 3 followed) only when the send changed
 *   the sender's policy for the topic (the engine's automatic policies).
 */
import { BadRequestError, MissingArgumentError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

type ChannelRef = number | string;

/** Zulip's extract_stream_indicator. */
export function parseChannelTo(raw: string): ChannelRef {
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (Array.isArray(value)) {
    if (value.length !== 1) throw new BadRequestError("Expected exactly one channel");
    value = value[0];
  }
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string") return value;
  throw new BadRequestError("Invalid data type for channel");
}

/** Zulip's extract_private_recipients. */
export function parseDirectTo(raw: string): (number | string)[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return raw
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  }
  if (typeof value === "number") return [value];
  if (typeof value === "string")
    return value
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  if (!Array.isArray(value)) throw new BadRequestError("Invalid data type for recipients");
  if (value.every((v) => typeof v === "number" && Number.isInteger(v))) return value as number[];
  if (value.every((v) => typeof v === "string")) return value as string[];
  throw new BadRequestError("Recipient lists may contain emails or user IDs, but not both.");
}

export default defineEndpoint({
  method: "POST",
  path: "/messages",
  auth: "user",
  aliases: { subject: "topic" },
  params: {
    type: p.oneOf(["direct", "channel", "stream", "private"] as const),
    to: ref(p.str(), "recipient").optional(),
    content: p.str(),
    topic: p.str().optional(),
    queue_id: p.str({ maxLength: 64 }).optional(),
    local_id: p.str({ maxLength: 64 }).optional(),
    read_by_sender: p.bool().optional(),
  },
  testing: {
    notRefs: {
      queue_id: "the caller's own event queue, for local echo: another user's queue is not looked up",
      local_id: "the client's own echo ID, returned to it and stored nowhere",
    },
    sweepBases: [
      { params: { type: "stream", topic: "t", content: "x" } },
      { params: { type: "direct", content: "x" } },
    ],
  },
  async handler(ctx, input) {
    if ((input.queue_id === undefined) !== (input.local_id === undefined)) {
      throw new MissingArgumentError(input.queue_id === undefined ? "queue_id" : "local_id");
    }
    const channel = input.type === "channel" || input.type === "stream";
    // Zulip's send_message_backend: a missing `to` is an empty recipient list.
    if (!channel && input.to === undefined) throw new BadRequestError("Message must have recipients");
    // Concurrent sends share one fsync; the answer still waits for the commit.
    const sent = await ctx.store.sendMessageGrouped({
      senderId: ctx.user.id,
      to: channel
        ? { type: "channel", channel: input.to === undefined ? null : parseChannelTo(input.to), topic: input.topic }
        : { type: "direct", users: parseDirectTo(input.to ?? "") },
      content: input.content,
      client: ctx.client,
      ...(input.queue_id !== undefined && input.local_id !== undefined
        ? { origin: { queueId: input.queue_id, localId: input.local_id } }
        : {}),
      ...(input.read_by_sender !== undefined ? { readBySender: input.read_by_sender } : {}),
    });
    return sent.automaticNewVisibilityPolicy === undefined
      ? { id: sent.id }
      : { id: sent.id, automatic_new_visibility_policy: sent.automaticNewVisibilityPolicy };
  },
});
