/**
 * @module http/endpoints/register/register
 * POST /register — https://zulip.com/api/register-queue
 * The initial state, by event types: fetch_event_types, else event_types, else all.
 * Each section is gated by the event type Zulip gates it by (fetch_initial_state_data
 * in zerver/lib/events.py); unknown types are ignored, like Zulip. Sections for
 * features parley does not store yet return Zulip's empty value
 * (unstored-sections.ts), and user_settings carries Zulip's defaults
 * (user-settings.ts).
 *
 * The queue is created in the same synchronous step as the snapshot, so no event
 * falls between them (events are delivered synchronously after each commit). Its
 * event_types, narrow, all_public_streams, apply_markdown, client_gravatar and
 * client_capabilities shape what it receives (src/realtime).
 *
 * Deviations: the legacy top-level display and
 * notification settings (update_display_settings, update_global_notifications)
 * are not sent, as Zulip since FL 439. Anonymous (spectator) registration is not
 * offered.
 */
import { z } from "zod";
import { MAX_NARROW_TERMS } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { reminderToWire } from "../../../wire/reminder.js";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../../../wire/version.js";
import { includeSubscribers, unquote } from "../subscriptions/wire-params.js";
import {
  defaultStreamsSection,
  mutedTopicsSection,
  playgroundsSection,
  realmEmojiSection,
  presenceSection,
  realmBotSection,
  realmUserSection,
  recentConversationsSection,
  scheduledMessagesSection,
  starredSection,
  stopWordsSection,
  streamSection,
  subscriptionSection,
  unreadSection,
  userGroupsSection,
  userTopicSection,
  type StateOptions,
} from "./initial-state.js";
import { realmSection } from "./realm-state.js";
import { UNSTORED_SECTIONS, type UnstoredSection } from "./unstored-sections.js";
import { realmUserSettingsDefaultsSection, userSettingsSection } from "./user-settings.js";
import { draftToWire, navigationViewToWire, savedSnippetToWire } from "../../../wire/personal.js";
import { devicesToWire } from "../../../wire/device.js";
import { channelFolderToWire, defaultChannelGroupToWire } from "../../../wire/channel.js";
import { realmDomainToWire } from "../../../wire/realm-domain.js";
import { linkifierToWire } from "../../../wire/linkifier.js";
import { CUSTOM_PROFILE_FIELD_TYPES, profileFieldToWire } from "../../../wire/profile-field.js";

/** Zulip's default idle queue timeout, and what "mobile" means. */
const DEFAULT_IDLE_QUEUE_TIMEOUT = 600;
const MOBILE_IDLE_QUEUE_TIMEOUT = 12 * 3600;
/**
 * The longest idle timeout granted: a day, where Zulip grants 7 days (its
 * MAX_QUEUE_TIMEOUT_SECS). A dead client's queue holds its slot under the per-user and
 * per-realm caps and up to 10,000 events for that long; a day is twice what Zulip's
 * mobile apps ask for ("mobile", 12 h) and covers a desktop left overnight. Like Zulip,
 * a longer request is granted the maximum rather than refused, and the answer's
 * idle_queue_timeout_secs says what was granted.
 */
export const MAX_IDLE_QUEUE_TIMEOUT = 24 * 3600;

/** Bounds event_types and client_capabilities: Zulip has about a hundred event types. */
const MAX_EVENT_TYPES = 1000;

const narrowTerm = z.union([
  z.array(z.string()),
  z.object({ operator: z.string(), operand: z.unknown(), negated: z.boolean().optional() }),
]);

/** idle_queue_timeout (FL 481): seconds, at least 1, or "mobile"; clamped to MAX_IDLE_QUEUE_TIMEOUT. */
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
    return Math.min(n, MAX_IDLE_QUEUE_TIMEOUT);
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
    presence_last_update_id: p.int().optional(),
    event_types: p.json(j.stringList(), { maxItems: MAX_EVENT_TYPES }).optional(),
    fetch_event_types: p.json(j.stringList(), { maxItems: MAX_EVENT_TYPES }).optional(),
    all_public_streams: p.bool().optional(),
    narrow: ref(
      p.json(z.array(narrowTerm), {
        maxItems: MAX_NARROW_TERMS,
        tooMany: `narrow is too long (limit: ${MAX_NARROW_TERMS} terms)`,
      }),
      "narrow",
    ).default([]),
    client_capabilities: p.json(z.record(z.string(), z.boolean()), { maxItems: MAX_EVENT_TYPES }).default({}),
    idle_queue_timeout: idleQueueTimeout().default(DEFAULT_IDLE_QUEUE_TIMEOUT),
  },
  testing: {
    notRefs: {
      presence_last_update_id: "a position in the presence history the caller polls, not an object",
    },
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
      userListIncomplete: caps["user_list_incomplete"] === true,
    };
    // Zulip's events.py: a last_update_id or the simplified events capability implies the modern format.
    const simplifiedPresence = caps["simplified_presence_events"] === true;
    const slimPresence = input.slim_presence || input.presence_last_update_id !== undefined || simplifiedPresence;
    const unstored = (type: UnstoredSection) => (want(type) ? UNSTORED_SECTIONS[type]() : {});
    const snapshot = {
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: ZULIP_MERGE_BASE,
      ...(want("alert_words") ? { alert_words: store.alertWords(user.id) } : {}),
      ...(want("custom_profile_fields")
        ? {
            custom_profile_fields: store.profileFields(user.id).map(profileFieldToWire),
            custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES,
          }
        : {}),
      ...unstored("onboarding_steps"),
      ...(want("message") ? { max_message_id: store.maxMessageId(user.id) } : {}),
      ...(want("drafts") ? { drafts: store.registerDrafts(user.id).map(draftToWire) } : {}),
      ...(want("device") ? { devices: devicesToWire(store.devices(user.id)) } : {}),
      ...(want("scheduled_messages") ? scheduledMessagesSection(store, realm, user, options) : {}),
      ...(want("reminders") ? { reminders: store.reminders(user.id).map(reminderToWire) } : {}),
      // Zulip leaves the deprecated list out for clients that asked for user_topic.
      ...(want("muted_topics") && (wanted === null || !want("user_topic"))
        ? mutedTopicsSection(store, realm, user)
        : {}),
      ...(want("muted_users") ? { muted_users: store.mutedUsers(user.id) } : {}),
      ...(want("presence")
        ? presenceSection(store, user, slimPresence, input.presence_last_update_id, input.presence_history_limit_days)
        : {}),
      ...(want("realm") ? realmSection(store, realm, ctx.server.baseUrl, ctx.server.config) : {}),
      ...(want("realm_user_settings_defaults") ? realmUserSettingsDefaultsSection(store, user) : {}),
      ...(want("realm_domains") ? { realm_domains: store.realmDomains(user.id).map(realmDomainToWire) } : {}),
      ...(want("realm_emoji") ? realmEmojiSection(store, realm) : {}),
      // Zulip lists linkifiers only to clients that read URL templates (feature level 176).
      ...(want("realm_linkifiers")
        ? {
            realm_linkifiers:
              caps["linkifier_url_template"] === true ? store.linkifiers(user.id).map(linkifierToWire) : [],
          }
        : {}),
      ...unstored("realm_filters"),
      ...(want("realm_playgrounds") ? playgroundsSection(store, realm) : {}),
      ...(want("realm_user_groups") ? userGroupsSection(user, options, ctx.groupJson) : {}),
      ...(want("realm_user") ? realmUserSection(store, realm, user, options, ctx.userJson, ctx.server) : {}),
      ...(want("realm_bot") ? realmBotSection(store, user) : {}),
      ...unstored("realm_embedded_bots"),
      ...unstored("realm_incoming_webhook_bots"),
      ...(want("recent_private_conversations") ? recentConversationsSection(store, user) : {}),
      ...(want("subscription") ? subscriptionSection(store, user, options) : {}),
      ...(want("channel_folders")
        ? { channel_folders: store.channelFolders(user.id, true).map(channelFolderToWire) }
        : {}),
      ...(want("message") && want("update_message_flags") ? unreadSection(store, realm, user, options) : {}),
      ...(want("starred_messages") ? starredSection(store, user) : {}),
      ...(want("stream") && input.include_streams ? streamSection(store, user, options) : {}),
      ...(want("default_streams") ? defaultStreamsSection(store, user) : {}),
      ...(want("default_stream_groups")
        ? {
            realm_default_stream_groups: store
              .defaultChannelGroups(user.id)
              .map((g) => defaultChannelGroupToWire(store, g)),
          }
        : {}),
      ...(want("stop_words") ? stopWordsSection() : {}),
      ...(want("user_settings") ? userSettingsSection(store, user) : {}),
      ...(want("user_status") ? { user_status: store.realmUserStatuses(user.id) } : {}),
      ...(want("user_topic") ? userTopicSection(store, realm, user, options) : {}),
      ...unstored("video_calls"),
      ...unstored("giphy"),
      ...unstored("tenor"),
      ...unstored("klipy"),
      ...unstored("realm_billing"),
      ...(want("navigation_views")
        ? { navigation_views: store.navigationViews(user.id).map(navigationViewToWire) }
        : {}),
      ...(want("saved_snippets") ? { saved_snippets: store.savedSnippets(user.id).map(savedSnippetToWire) } : {}),
    };
    // A bot's default_all_public_streams and default_events_register_stream fill in what the client left out.
    const defaults = store.queueDefaults(user.id);
    const narrow = input.narrow.map((t) => (Array.isArray(t) ? { operator: t[0] ?? "", operand: t[1] } : t));
    const queue = ctx.events.register(user, {
      eventTypes: input.event_types ?? null,
      allPublicStreams: input.all_public_streams ?? defaults.allPublicChannels,
      narrow,
      // By ID, not as a `stream` term: the bot may not see the channel, and Zulip registers anyway.
      ...(narrow.length === 0 && defaults.channelId !== null ? { defaultChannelId: defaults.channelId } : {}),
      applyMarkdown: input.apply_markdown,
      clientGravatar: input.client_gravatar,
      emptyTopicName: options.emptyTopicName,
      streamTypingNotifications: caps["stream_typing_notifications"] === true,
      includeDeactivatedGroups: options.includeDeactivatedGroups,
      presenceFormat: simplifiedPresence ? "modern" : slimPresence ? "slim" : "legacy",
      individualEmojiChanges: caps["individual_emoji_changes"] === true,
      userListIncomplete: options.userListIncomplete,
      bulkMessageDeletion: caps["bulk_message_deletion"] === true,
      linkifierUrlTemplate: caps["linkifier_url_template"] === true,
      archivedChannels: options.archivedChannels,
      idleTimeoutSecs: input.idle_queue_timeout,
    });
    return {
      queue_id: queue.id,
      last_event_id: queue.lastEventId,
      idle_queue_timeout_secs: input.idle_queue_timeout,
      ...snapshot,
    };
  },
});
