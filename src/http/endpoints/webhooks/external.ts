/**
 * @module http/endpoints/webhooks/external
 * POST /api/v1/external/{integration}: an incoming webhook (Zulip's webhook_view and
 * check_send_webhook_message). The integration (src/http/webhooks) turns the service's
 * request into a topic and a content; the message is sent as the account whose
 * `api_key` the URL carries, through the engine's send (actions/webhooks):
 * - `stream` (a name, or an ID when all digits) and `topic` (overriding the
 *   integration's) choose the channel; without `stream` the message is a direct
 *   message to the bot's owner;
 * - `only_events` / `exclude_events` (JSON lists of shell patterns) filter the
 *   integrations that name their events, as Zulip's do;
 * - a body that is not JSON, or a missing event header, is refused and the bot's owner
 *   is told (Zulip's texts, at most once a minute per bot).
 *
 * Deviations: POST only (Zulip's views take any method); requests are not counted
 * against the per-user rate limit nor failed keys against the per-address one (the
 * route authenticates itself, after the server's limits ran); the missing-header
 * notice names "your server's administrator" where Zulip names its ZULIP_ADMINISTRATOR
 * address, which parley has no setting for.
 */
import { defineEndpoint } from "../../endpoint.js";
import { InvalidJsonError, MissingEventHeaderError, UnknownRouteError } from "../../errors.js";
import { compoundRef, j, p } from "../../params.js";
import { authenticateWebhook } from "../../webhooks/authenticate.js";
import { fnmatch } from "../../webhooks/fnmatch.js";
import type { WebhookPost, WebhookRequest } from "../../webhooks/integration.js";
import { findIntegration } from "../../webhooks/registry.js";
import type { ExtraHeader } from "../../request.js";

/** GitHub's push payloads with many commits run to hundreds of KB. */
const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

const invalidJsonNotice = (webhookName: string) =>
  `Hi there! It looks like you tried to set up the Zulip ${webhookName} integration,\n` +
  "but didn't correctly configure the webhook to send data in the JSON format\nthat this integration expects!";

function missingHeaderNotice(botName: string, path: string, header: string, integration: string): string {
  return (
    `Hi there!  Your bot ${botName} just sent an HTTP request to ${path} that\n` +
    `is missing the HTTP ${header} header.  Because this header is how\n` +
    `${integration} indicates the event type, this usually indicates a configuration\n` +
    "issue, where you either entered the URL for a different integration, or are running\n" +
    "an older version of the third-party service that doesn't provide that header.\n" +
    "Contact your server's administrator if you need help debugging!\n"
  );
}

/** Zulip's event filter: only_events must match the event, exclude_events must not. */
function filteredOut(post: WebhookPost, only: readonly string[] | undefined, exclude: readonly string[] | undefined) {
  const event = post.eventType;
  if (event === undefined) return false;
  if (only !== undefined && !only.some((pattern) => fnmatch(event, pattern))) return true;
  return exclude !== undefined && exclude.some((pattern) => fnmatch(event, pattern));
}

const CHANNEL_PROBES = [
  { names: "channelName" as const, label: "name", encode: String },
  { names: "channel" as const, label: "ID", encode: String },
];

export default defineEndpoint({
  method: "POST",
  path: "/external/:integration",
  auth: "none",
  body: "raw",
  maxBodyBytes: MAX_WEBHOOK_BODY_BYTES,
  params: {
    api_key: p.str(),
    stream: compoundRef(p.str(), ["channelName", "channel"]).optional(),
    topic: p.str().optional(),
    only_events: p.json(j.stringList()).optional(),
    exclude_events: p.json(j.stringList()).optional(),
    // Read by integrations: GitHub's and GitLab's branch filter, Slack's form-encoded payload,
    // Alertmanager's grouping and description fields.
    branches: p.str().optional(),
    payload: p.str().optional(),
    name: p.str().optional(),
    desc: p.str().optional(),
    use_merge_request_title: p.bool().optional(),
  },
  testing: {
    notRefs: { integration: "an integration's name (json, github, ...), the same list for every caller" },
    probes: { stream: CHANNEL_PROBES },
    sweepBases: [
      { params: { integration: "slack_incoming", api_key: (f) => f.apiKey, payload: JSON.stringify({ text: "x" }) } },
    ],
  },
  handler(ctx, input) {
    const integration = findIntegration(ctx.pathParams["integration"] ?? "");
    if (!integration) throw new UnknownRouteError();
    const sender = authenticateWebhook(ctx.store, ctx.realm, input.api_key);
    const params = new Map<string, string>();
    for (const [name, value] of Object.entries(input))
      if (typeof value === "string" || typeof value === "boolean") params.set(name, String(value));
    const request: WebhookRequest = {
      body: ctx.rawBody ?? Buffer.alloc(0),
      contentType: ctx.head.contentType.split(";")[0]!.trim().toLowerCase(),
      params,
      header: (name) => {
        const value = (ctx.head.extra as Readonly<Record<string, string>>)[name as ExtraHeader];
        return value === undefined || value === "" ? undefined : value;
      },
    };
    let posts: readonly WebhookPost[];
    try {
      posts = integration.parse(request);
    } catch (error) {
      if (error instanceof InvalidJsonError)
        ctx.store.notifyBotOwner(sender.id, invalidJsonNotice(integration.displayName));
      if (error instanceof MissingEventHeaderError)
        ctx.store.notifyBotOwner(
          sender.id,
          missingHeaderNotice(sender.fullName, ctx.head.url, error.data["header"] as string, integration.displayName),
        );
      throw error;
    }
    const stream = input.stream;
    for (const post of posts) {
      if (filteredOut(post, input.only_events, input.exclude_events)) continue;
      ctx.store.sendWebhookMessage(
        sender.id,
        stream === undefined
          ? { type: "owner" }
          : {
              type: "channel",
              channel: /^[0-9]+$/.test(stream) ? Number(stream) : stream,
              topic: input.topic ?? post.topic,
            },
        post.body,
        `Zulip${integration.displayName}Webhook`,
      );
    }
    return {};
  },
});
