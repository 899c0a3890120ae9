/**
 * @module http/endpoints/scheduled-messages/wire-params
 * `to` and `type` of scheduled messages: a channel ID, or a JSON list of user IDs;
 * the four spellings of the type (channel = stream, direct = private).
 */
import { BadRequestError, NotFoundError } from "../../../engine/index.js";
import type { AuthedContext } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export const TYPES = ["direct", "channel", "stream", "private"] as const;
export type WireType = (typeof TYPES)[number];

export const typeParam = () => p.oneOf(TYPES);

/** `to`: a channel ID (or a one-item list) for channel messages, user IDs for direct ones (parseTo). */
export const toParam = () => ref(p.str(), "recipientIds");

export function normalizeType(type: WireType): "channel" | "direct" {
  return type === "channel" || type === "stream" ? "channel" : "direct";
}

/** Zulip's Json[int | list[int]] for `to`. */
export function parseTo(raw: string): number | number[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new BadRequestError("to is not valid JSON");
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  if (Array.isArray(value) && value.every((v) => typeof v === "number" && Number.isSafeInteger(v)))
    return value as number[];
  throw new BadRequestError("to is not an integer or a list of integers");
}

/** A channel message goes to exactly one channel ID. */
export function channelIdOf(to: number | number[]): number {
  if (typeof to === "number") return to;
  if (to.length !== 1) throw new BadRequestError("Expected exactly one channel");
  return to[0]!;
}

export function userIdsOf(to: number | number[]): number[] {
  return typeof to === "number" ? [to] : to;
}

export function scheduledIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["scheduled_message_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new NotFoundError("Scheduled message does not exist");
  return Number(raw);
}
