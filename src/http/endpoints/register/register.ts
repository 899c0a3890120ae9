/**
 * @module http/endpoints/register/register
 * POST /register — https://zulip.com/api/register-queue
 * The initial state, by event types: fetch_event_types, else event_types, else all.
 * Sections served: realm, realm_user, subscription, stream, default_streams,
 * realm_user_groups, user_topic, message (max_message_id), message together with
 * update_message_flags (unread_msgs), starred_messages. Unknown types are ignored,
 * like Zulip.
 *
 * Deviations: there is no event queue yet: queue_id is a fresh random string that
 * GET /events does not know, and last_event_id is -1. narrow, all_public_streams,
 * apply_markdown, slim_presence and presence_history_limit_days are validated and
 * otherwise ignored (they only shape events and presence). Sections not listed above
 * (presence, user_settings, drafts, realm_emoji, ...) are absent. Anonymous
 * (spectator) registration is not offered.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { MAX_NARROW_TERMS } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p } from "../../params.js";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../../version.js";
import { includeSubscribers, unquote } from "../subscriptions/wire-params.js";
import { maxMessageIdFor } from "../../views/user.js";
import {
  defaultStreamsSection,
  realmSection,
  realmUserSection,
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

/** Bounds event_types and client_capabilities: Zulip has about a hundred event types. */
const MAX_EVENT_TYPES = 1000;

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
    event_types: p.json(j.stringList(), { maxItems: MAX_EVENT_TYPES }).optional(),
    fetch_event_types: p.json(j.stringList(), { maxItems: MAX_EVENT_TYPES }).optional(),
    all_public_streams: p.bool().default(false),
    narrow: p.json(z.array(narrowTerm), { maxItems: MAX_NARROW_TERMS, tooMany: `narrow is too long (limit: ${MAX_NARROW_TERMS} terms)` }).default([]),
    client_capabilities: p.json(z.record(z.string(), z.boolean()), { maxItems: MAX_EVENT_TYPES }).default({}),
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
    return {
      queue_id: randomUUID(),
      last_event_id: -1,
      idle_queue_timeout_secs: input.idle_queue_timeout,
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
      ...(want("message") ? { max_message_id: maxMessageIdFor(store, user.id) } : {}),
      ...(want("message") && want("update_message_flags") ? unreadSection(store, realm, user, options) : {}),
      ...(want("starred_messages") ? starredSection(store, user) : {}),
    };
  },
});
