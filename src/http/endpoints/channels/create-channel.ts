/**
 * @module http/endpoints/channels/create-channel
 * POST /channels/create — https://zulip.com/api/create-channel
 * A new channel (CHANNEL_ALREADY_EXISTS, 409, for a name in use) with subscribe's
 * creation options and permission rules, and the listed `subscribers` (the creator
 * only if listed). Answers the channel's `id`.
 *
 * Deviations: `send_new_subscription_messages` is not supported (parley sends no
 * "you were subscribed" direct messages) and comes back in
 * ignored_parameters_unsupported.
 */
import {
  CHANNEL_GROUP_SETTINGS,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  type ChannelPermissions,
} from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { groupSettingFromWire } from "../../../wire/channel.js";
import { MAX_SUBSCRIPTION_PRINCIPALS, oneOfLoose, retentionDays } from "../subscriptions/wire-params.js";

const groupParam = () => ref(p.json(j.groupSetting()), "groupSetting").optional();

export default defineEndpoint({
  method: "POST",
  path: "/channels/create",
  auth: "user",
  params: {
    name: p.str({ maxLength: 4 * 60 }),
    description: p.str({ maxLength: MAX_CHANNEL_DESCRIPTION_LENGTH }).optional(),
    subscribers: ref(p.json(j.intList(), { maxItems: MAX_SUBSCRIPTION_PRINCIPALS }), "userList"),
    announce: p.bool().default(false),
    invite_only: p.bool().default(false),
    is_web_public: p.bool().default(false),
    is_default_stream: p.bool().default(false),
    history_public_to_subscribers: p.bool().optional(),
    folder_id: ref(p.int(), "channelFolder").optional(),
    message_retention_days: retentionDays().optional(),
    topics_policy: oneOfLoose([
      "inherit",
      "allow_empty_topic",
      "disable_empty_topic",
      "empty_topic_only",
    ] as const).optional(),
    can_add_subscribers_group: groupParam(),
    can_administer_channel_group: groupParam(),
    can_create_topic_group: groupParam(),
    can_delete_any_message_group: groupParam(),
    can_delete_own_message_group: groupParam(),
    can_move_messages_out_of_channel_group: groupParam(),
    can_move_messages_within_channel_group: groupParam(),
    can_remove_subscribers_group: groupParam(),
    can_resolve_topics_group: groupParam(),
    can_send_message_group: groupParam(),
    can_subscribe_group: groupParam(),
  },
  testing: {
    sweepBases: [{ params: { name: (fixture) => fixture.fresh("new"), subscribers: "[]" } }],
    worst: { valid: { name: "worst", subscribers: "[]" } },
  },
  handler(ctx, input) {
    const permissions: Partial<ChannelPermissions> = {};
    for (const spec of CHANNEL_GROUP_SETTINGS) {
      const value = input[spec.wire as keyof typeof input];
      if (value !== undefined && (typeof value === "number" || (typeof value === "object" && value !== null)))
        permissions[spec.field] = groupSettingFromWire(value as Parameters<typeof groupSettingFromWire>[0]);
    }
    const id = ctx.store.createChannel(ctx.user.id, {
      name: input.name,
      // Zulip does not allow newlines in channel descriptions: they become spaces.
      ...(input.description !== undefined ? { description: input.description.replace(/\r?\n/g, " ") } : {}),
      subscribers: input.subscribers,
      announce: input.announce,
      options: {
        inviteOnly: input.invite_only,
        isWebPublic: input.is_web_public,
        isDefault: input.is_default_stream,
        ...(input.folder_id !== undefined ? { folderId: input.folder_id } : {}),
        ...(input.history_public_to_subscribers !== undefined
          ? { historyPublicToSubscribers: input.history_public_to_subscribers }
          : {}),
        ...(input.message_retention_days !== undefined ? { messageRetentionDays: input.message_retention_days } : {}),
        ...(input.topics_policy !== undefined ? { topicsPolicy: input.topics_policy } : {}),
        permissions,
      },
    });
    return { id };
  },
});
