/**
 * @module http/endpoints/subscriptions/subscribe
 * POST /users/me/subscriptions — https://zulip.com/api/subscribe
 * Subscribes the caller (or `principals`) to channels, creating unknown ones with the
 * optional settings; who may subscribe whom is decided by the engine's subscribe.
 * Response keys of subscribed/already_subscribed are user IDs (FL 289).
 *
 * Per-item `color` colors the new subscriptions (every subscriber's). With
 * send_new_subscription_messages (default true) the Notification Bot tells the people
 * subscribed by the caller, unless more than max_bulk_new_subscription_messages (100)
 * users were newly subscribed; new_subscription_messages_sent says which.
 *
 * Deviations: at most MAX_NEW_CHANNELS_PER_REQUEST (100) channels are created per
 * request (Zulip has no such cap; see wire-params.ts). A caller who may not create
 * channels (a guest) naming a free name is refused as for a channel they cannot see
 * ("Unable to access channel (NAME).", or listed in `unauthorized`), where Zulip answers
 * "Insufficient permission": Zulip's answer tells a guest which private channel names exist.
 */
import { z } from "zod";
import { MAX_BULK_NEW_SUBSCRIPTION_MESSAGES, type ChannelPermissions } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { compoundRef, j, p, ref } from "../../params.js";
import { groupSettingFromWire } from "../../../wire/channel.js";
import {
  checkSubscriptionRows,
  MAX_NEW_CHANNELS_PER_REQUEST,
  MAX_SUBSCRIPTION_CHANNELS,
  MAX_SUBSCRIPTION_PRINCIPALS,
  oneOfLoose,
  retentionDays,
} from "./wire-params.js";

const item = z.object({ name: z.string(), description: z.string().optional(), color: z.string().optional() });

/** Wire parameter -> engine permission field. */
const GROUP_PARAMS = {
  can_add_subscribers_group: "canAddSubscribersGroup",
  can_remove_subscribers_group: "canRemoveSubscribersGroup",
  can_administer_channel_group: "canAdministerChannelGroup",
  can_create_topic_group: "canCreateTopicGroup",
  can_delete_any_message_group: "canDeleteAnyMessageGroup",
  can_delete_own_message_group: "canDeleteOwnMessageGroup",
  can_move_messages_out_of_channel_group: "canMoveMessagesOutOfChannelGroup",
  can_move_messages_within_channel_group: "canMoveMessagesWithinChannelGroup",
  can_resolve_topics_group: "canResolveTopicsGroup",
  can_send_message_group: "canSendMessageGroup",
  can_subscribe_group: "canSubscribeGroup",
} as const satisfies Record<string, keyof ChannelPermissions>;

const groupParam = () => ref(p.json(j.groupSetting()), "groupSetting").optional();

/** Map of user ID -> channel names, keyed by the ID as a string. */
function byUser(map: ReadonlyMap<number, readonly string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [userId, names] of map) out[String(userId)] = [...names];
  return out;
}

export default defineEndpoint({
  method: "POST",
  path: "/users/me/subscriptions",
  auth: "user",
  params: {
    subscriptions: compoundRef(p.json(z.array(item), { maxItems: MAX_SUBSCRIPTION_CHANNELS }), ["channelName"]),
    principals: ref(
      p.json(j.intOrStringList(), { maxItems: MAX_SUBSCRIPTION_PRINCIPALS }),
      "userListOrEmails",
    ).optional(),
    authorization_errors_fatal: p.bool().default(true),
    send_new_subscription_messages: p.bool().default(true),
    announce: p.bool().default(false),
    invite_only: p.bool().optional(),
    is_web_public: p.bool().optional(),
    is_default_stream: p.bool().optional(),
    history_public_to_subscribers: p.bool().optional(),
    message_retention_days: retentionDays().optional(),
    folder_id: ref(p.int(), "channelFolder").optional(),
    topics_policy: oneOfLoose([
      "inherit",
      "allow_empty_topic",
      "disable_empty_topic",
      "empty_topic_only",
    ] as const).optional(),
    can_add_subscribers_group: groupParam(),
    can_remove_subscribers_group: groupParam(),
    can_administer_channel_group: groupParam(),
    can_create_topic_group: groupParam(),
    can_delete_any_message_group: groupParam(),
    can_delete_own_message_group: groupParam(),
    can_move_messages_out_of_channel_group: groupParam(),
    can_move_messages_within_channel_group: groupParam(),
    can_resolve_topics_group: groupParam(),
    can_send_message_group: groupParam(),
    can_subscribe_group: groupParam(),
  },
  testing: {
    probes: { subscriptions: [{ names: "channelName", label: "name", encode: (name) => JSON.stringify([{ name }]) }] },
    sweepBases: [
      { params: {}, for: ["subscriptions"] },
      { params: { subscriptions: JSON.stringify([{ name: "general" }]) }, for: ["principals"] },
      // A new channel, so that its group settings are checked.
      { params: { subscriptions: (fixture) => JSON.stringify([{ name: fixture.fresh("new") }]) } },
    ],
    sweepExceptions: [
      {
        param: "subscriptions",
        scenario: "bob: private places",
        reason:
          "channel names are unique in a realm: an unused name is created, a private channel's name is refused " +
          "('Unable to access channel (NAME).', echoing the caller's own text). Other realms' names are unused " +
          "here and are swept.",
      },
    ],
  },
  handler(ctx, input) {
    checkSubscriptionRows(input.subscriptions.length, input.principals?.length);
    const permissions: Partial<ChannelPermissions> = {};
    for (const [wire, field] of Object.entries(GROUP_PARAMS)) {
      const value = input[wire as keyof typeof GROUP_PARAMS];
      if (value !== undefined) permissions[field] = groupSettingFromWire(value);
    }
    const result = ctx.store.subscribe(ctx.user.id, {
      // Zulip does not allow newlines in channel descriptions: they become spaces.
      channels: input.subscriptions.map((s) => ({
        name: s.name,
        ...(s.description !== undefined ? { description: s.description.replace(/\r?\n/g, " ") } : {}),
        ...(s.color !== undefined ? { color: s.color } : {}),
      })),
      ...(input.principals !== undefined ? { principals: input.principals } : {}),
      authorizationErrorsFatal: input.authorization_errors_fatal,
      newChannel: {
        ...(input.invite_only !== undefined ? { inviteOnly: input.invite_only } : {}),
        ...(input.is_web_public !== undefined ? { isWebPublic: input.is_web_public } : {}),
        ...(input.is_default_stream !== undefined ? { isDefault: input.is_default_stream } : {}),
        ...(input.history_public_to_subscribers !== undefined
          ? { historyPublicToSubscribers: input.history_public_to_subscribers }
          : {}),
        ...(input.message_retention_days !== undefined ? { messageRetentionDays: input.message_retention_days } : {}),
        ...(input.topics_policy !== undefined ? { topicsPolicy: input.topics_policy } : {}),
        ...(input.folder_id !== undefined ? { folderId: input.folder_id } : {}),
        permissions,
      },
      creationMessages: { announce: input.announce },
      maxNewChannels: MAX_NEW_CHANNELS_PER_REQUEST,
      ...(input.send_new_subscription_messages
        ? { subscriptionMessages: { maxUsers: MAX_BULK_NEW_SUBSCRIPTION_MESSAGES } }
        : {}),
    });
    return {
      subscribed: byUser(result.subscribed),
      already_subscribed: byUser(result.alreadySubscribed),
      ...(result.unauthorized.length > 0 && !input.authorization_errors_fatal
        ? { unauthorized: [...result.unauthorized] }
        : {}),
      ...(result.newSubscriptionMessagesSent !== undefined
        ? { new_subscription_messages_sent: result.newSubscriptionMessagesSent }
        : {}),
    };
  },
});
