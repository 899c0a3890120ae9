/**
 * @module http/endpoints/subscriptions/wire-params
 * Parameter shapes shared by the subscription, channel and register endpoints:
 * strings that clients send either raw or JSON-encoded ("unlimited" or "\"unlimited\""),
 * and Zulip's message_retention_days.
 */
import { z } from "zod";
import { BadRequestError, clip } from "../../../engine/index.js";

/**
 * Deviation: Zulip bounds neither list nor their product. One request writes up to
 * channels x principals subscription rows in one transaction, all on the event loop.
 */
export const MAX_SUBSCRIPTION_ROWS = 1000;
export const MAX_SUBSCRIPTION_CHANNELS = MAX_SUBSCRIPTION_ROWS;
export const MAX_SUBSCRIPTION_PRINCIPALS = MAX_SUBSCRIPTION_ROWS;

/**
 * Deviation: Zulip creates any number of channels in one subscribe request. Each new
 * channel adds a record, its events and the notification bot's first message to the
 * one transaction (about 0.3 ms each on the event loop), so the channels a request may
 * create are capped well below MAX_SUBSCRIPTION_CHANNELS; subscribing to existing
 * channels is not affected.
 */
export const MAX_NEW_CHANNELS_PER_REQUEST = 100;

/** Refuses a channels x principals product over MAX_SUBSCRIPTION_ROWS. */
export function checkSubscriptionRows(channels: number, principals: number | undefined): void {
  if (channels * (principals ?? 1) > MAX_SUBSCRIPTION_ROWS) {
    throw new BadRequestError(
      `Too many subscriptions requested (maximum ${MAX_SUBSCRIPTION_ROWS} channels times principals).`,
    );
  }
}

/** A string sent raw or as JSON text: the JSON quotes are removed. */
export function unquote(raw: string): string {
  const text = raw.trim();
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === "string") return value;
    } catch {
      // not JSON: keep the raw text
    }
  }
  return raw;
}

/** One of fixed strings, sent raw or JSON-encoded; "Invalid {name}" otherwise. */
export function oneOfLoose<T extends string>(values: readonly T[]) {
  return z.string().transform((s, ctx) => {
    const text = unquote(s);
    if ((values as readonly string[]).includes(text)) return text as T;
    ctx.addIssue({ code: "custom", message: "Invalid {var}" });
    return z.NEVER;
  });
}

/**
 * Zulip's parse_message_retention_days for channels: "realm_default" -> null (the
 * organization's setting), "unlimited" -> -1, a positive integer -> days.
 * Zulip reports anything else as "Bad value for 'message_retention_days': <value>"
 * (code REQUEST_VARIABLE_INVALID; the engine has no such code, so BAD_REQUEST here).
 */
export function retentionDays() {
  return z.string().transform((s, ctx): number | null => {
    const text = unquote(s).trim();
    if (text === "realm_default") return null;
    if (text === "unlimited") return -1;
    if (/^\d+$/.test(text)) {
      const n = Number(text);
      if (Number.isSafeInteger(n) && n > 0) return n;
    }
    ctx.addIssue({ code: "custom", message: `Bad value for '{var}': ${clip(text)}` });
    return z.NEVER;
  });
}

/** include_subscribers: true, false or "partial" (FL 412); "partial" is served as true. */
export const includeSubscribers = () =>
  oneOfLoose(["true", "false", "partial"] as const).transform((v) => v !== "false");
