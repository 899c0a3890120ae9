/**
 * @module http/endpoints/register/register
 * POST /register — https://zulip.com/api/register-queue
 * The initial state, by event types: fetch_event_types, else event_types, else all.
 * Sections served: realm, realm_user, subscription, stream, default_streams,
 * realm_user_groups, user_topic, message (max_message_id), message together with
 * update_message_flags (unread_msgs), starred_messages. Unknown types are ignored,
 * like Zulip.
 *
 * The queue is created in the same synchronous step as the snapshot, so no event
 * falls between them (events are delivered synchronously after each commit). Its
 * event_types, narrow, all_public_streams, apply_markdown, client_gravatar and
 * client_capabilities shape what it receives (src/realtime).
 *
 * Deviations: slim_presence and presence_history_limit_days are validated and
 * otherwise ignored (no presence yet). Sections not listed above (presence,
 * user_settings, drafts, realm_emoji, ...) are absent. Anonymous (spectator)
 * registration is not offered.
 */
import { z } from "zod";
import { defineEndpoint } from "../../endpoint.js";
import { j, p } from "../../params.js";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../../version.js";
import { includeSubscribers, unquote } from "../subscriptions/wire-params.js";
import {
  defaultStreamsSection,
  realmSection,
  realmUserSection,
  scheduledMessagesSection,
  starredSection,
  streamSection,
  subscriptionSection,
  unreadSection,
  userGroupsSection,
  userTopicSection,
  type StateOptions,
} from "./initial-state.js";

/** Zulip's default and largest idle queue timeouts, and what "mobile" means. */
const DEFAULT_IDLE_QUEUE_TIMEOUT = 600;
const MAX_IDLE_QUEUE_TIMEOUT = 7 * 24 * 3600;
const MOBILE_IDLE_QUEUE_TIMEOUT = 12 * 3600;

const narrowTerm = z.union([z.array(z.string()), z.object({ operator: z.string(), operand: z.unknown(), negated: z.boolean().optional() })]);

/** idle_queue_timeout (FL 481): seconds from 1 to 7 days, or "mobile". */
const idleQueueTimeout = () =>
  z.string().transform((s, ctx) => {
    const text = unquote(s).trim();
    if (text === "mobile") return MOBILE_IDLE_QUEUE_TIMEOUT;
    if (!/^-?\d+$/.test(text)) {
      ctx.addIssue({ code: "custom", message: "Invalid {var}" });
      return z.NEVER;
    }
    const n = Number(text);
    if (n < 1) ctx.addIssue({ code: "custom", message: "{var} is too small" });
    else if (n > MAX_IDLE_QUEUE_TIMEOUT) ctx.addIssue({ code: "custom", message: "{var} is too large" });
    return n;
  });

export default defineEndpoint({
  method: "POST",
  path: "/register",
  auth: "user",
  params: {
    apply_markdown: p.bool().default(false),
    client_gravatar: p.bool().default(true),
    include_subscribers: includeSubscribers().default(false),
    include_streams: p.bool().default(true),
    slim_presence: p.bool().default(false),
    presence_history_limit_days: p.int({ min: 0 }).optional(),
    event_types: p.json(j.stringList()).optional(),
    fetch_event_types: p.json(j.stringList()).optional(),
    all_public_streams: p.bool().default(false),
    narrow: p.json(z.array(narrowTerm)).default([]),
    client_capabilities: p.json(z.record(z.string(), z.boolean())).default({}),
    idle_queue_timeout: idleQueueTimeout().default(DEFAULT_IDLE_QUEUE_TIMEOUT),
  },
  handler(ctx, input) {
    const { store, realm, user } = ctx;
    const types = input.fetch_event_types ?? input.event_types;
    const wanted = types === undefined ? null : new Set(types);
    const want = (type: string) => wanted === null || wanted.has(type);
    const caps = input.client_capabilities;
    const options: StateOptions = {
      clientGravatar: input.client_gravatar,
      includeSubscribers: input.include_subscribers,
      emptyTopicName: caps["empty_topic_name"] === true,
      archivedChannels: caps["archived_channels"] === true,
      includeDeactivatedGroups: caps["include_deactivated_groups"] === true,
    };
    const snapshot = {
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: ZULIP_MERGE_BASE,
      ...(want("realm") ? realmSection(realm, ctx.server.baseUrl) : {}),
      ...(want("realm_user") ? realmUserSection(store, user, options) : {}),
      ...(want("subscription") ? subscriptionSection(store, user, options) : {}),
      ...(want("stream") && input.include_streams ? streamSection(store, user, options) : {}),
      ...(want("default_streams") ? defaultStreamsSection(store, user) : {}),
      ...(want("realm_user_groups") ? userGroupsSection(store, user, options) : {}),
      ...(want("user_topic") ? userTopicSection(store, user) : {}),
      ...(want("message") ? { max_message_id: store.maxMessageId(user.id) } : {}),
      ...(want("message") && want("update_message_flags") ? unreadSection(store, realm, user, options) : {}),
      ...(want("starred_messages") ? starredSection(store, user) : {}),
      ...(want("scheduled_messages") ? scheduledMessagesSection(store, realm, user, options) : {}),
    };
    const queue = ctx.events.register(user, {
      eventTypes: input.event_types ?? null,
      allPublicStreams: input.all_public_streams,
      narrow: input.narrow.map((t) => (Array.isArray(t) ? { operator: t[0] ?? "", operand: t[1] } : t)),
      applyMarkdown: input.apply_markdown,
      clientGravatar: input.client_gravatar,
      emptyTopicName: options.emptyTopicName,
      streamTypingNotifications: caps["stream_typing_notifications"] === true,
      includeDeactivatedGroups: options.includeDeactivatedGroups,
      idleTimeoutSecs: input.idle_queue_timeout,
    });
    return { queue_id: queue.id, last_event_id: queue.lastEventId, idle_queue_timeout_secs: input.idle_queue_timeout, ...snapshot };
  },
});
