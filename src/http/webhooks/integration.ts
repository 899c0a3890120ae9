/**
 * @module http/webhooks/integration
 * What one incoming-webhook integration is: its URL name, the name Zulip shows for it,
 * and how a request becomes the topic and content of its messages (usually one). The
 * integrations are pure functions of the request: posting, the `stream`/`topic`
 * parameters and event filtering are the endpoint's (endpoints/webhooks/external).
 */
import { InvalidJsonError } from "../errors.js";
import { Wild } from "./payload.js";

/** A webhook request as an integration reads it. */
export interface WebhookRequest {
  readonly body: Buffer;
  /** The media type, lowercased, without parameters ("application/json"). */
  readonly contentType: string;
  /** Query string parameters. */
  readonly params: ReadonlyMap<string, string>;
  /** A request header by lowercase name; undefined when absent. */
  header(name: string): string | undefined;
}

/** One message to post. `eventType` is matched against only_events / exclude_events when given. */
export interface WebhookPost {
  readonly topic: string;
  readonly body: string;
  readonly eventType?: string;
}

export interface WebhookIntegration {
  /** The URL segment: /api/v1/external/<name>. */
  readonly name: string;
  /** Zulip's webhook name ("GitHub"): in errors, notices and the client name Zulip<name>Webhook. */
  readonly displayName: string;
  /** Headers of the request the integration reads (copied from the request head). */
  readonly headers?: readonly string[];
  /** The messages to post, in order (none when the request is valid but posts nothing). */
  parse(request: WebhookRequest): readonly WebhookPost[];
}

/** The request body as JSON (Zulip's JsonBodyPayload: read whatever the content type). */
export function jsonBody(request: WebhookRequest): Wild {
  const payload = Wild.parse(request.body.toString("utf8"));
  if (payload === null) throw new InvalidJsonError();
  return payload;
}
