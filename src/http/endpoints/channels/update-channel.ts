/**
 * @module http/endpoints/channels/update-channel
 * PATCH /streams/{stream_id} — https://zulip.com/api/update-stream
 * Name (`new_name`), description, access (`is_private`, `is_web_public`,
 * `history_public_to_subscribers`), `is_default_stream`, `message_retention_days`,
 * `topics_policy`, unarchiving (`is_archived=false`) and every can_*_group setting as
 * {"new": value, "old": value?}. Who may change what is the engine's updateChannel
 * (Zulip's rules, checked before anything is written).
 *
 * Deviations: the request is one write (Zulip commits each kind of change on its own,
 * so a refusal part-way keeps the earlier ones); a value equal to the current one
 * changes nothing and posts no notice (Zulip re-announces an unchanged access policy).
 * The deprecated `stream_post_policy` is not supported and comes back in
 * ignored_parameters_unsupported.
 */
import { z } from "zod";
import {
  CHANNEL_GROUP_SETTINGS,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  type ChannelGroupField,
  type GroupSettingChange,
  type UpdateChannelInput,
} from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { groupSettingFromWire } from "../../../wire/channel.js";
import { checkSettingSize } from "../user-groups/limits.js";
import { oneOfLoose, retentionDays } from "../subscriptions/wire-params.js";
import { channelIdParam } from "./path.js";

const changeSchema = z.object({ new: j.groupSetting(), old: j.groupSetting().optional() }).strict();
const change = () => ref(p.json(changeSchema), "groupSettingChange").optional();

export default defineEndpoint({
  method: "PATCH",
  path: "/streams/:stream_id",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: {
    new_name: p.str({ maxLength: 4 * 60 }).optional(),
    description: p.str({ maxLength: MAX_CHANNEL_DESCRIPTION_LENGTH }).optional(),
    is_private: p.bool().optional(),
    is_web_public: p.bool().optional(),
    history_public_to_subscribers: p.bool().optional(),
    is_default_stream: p.bool().optional(),
    is_archived: p.bool().optional(),
    message_retention_days: retentionDays().optional(),
    topics_policy: oneOfLoose([
      "inherit",
      "allow_empty_topic",
      "disable_empty_topic",
      "empty_topic_only",
    ] as const).optional(),
    // A folder of the realm, or null to take the channel out of its folder.
    folder_id: ref(p.json(z.number().int().nullable()), "channelFolder").optional(),
    can_add_subscribers_group: change(),
    can_administer_channel_group: change(),
    can_create_topic_group: change(),
    can_delete_any_message_group: change(),
    can_delete_own_message_group: change(),
    can_move_messages_out_of_channel_group: change(),
    can_move_messages_within_channel_group: change(),
    can_remove_subscribers_group: change(),
    can_resolve_topics_group: change(),
    can_send_message_group: change(),
    can_subscribe_group: change(),
  },
  testing: {
    // A change that would be refused only after the channel is found: a description.
    sweepBases: [
      { params: { description: "changed" }, for: ["stream_id"] },
      // Group settings of #general: the owner reaches the group lookups; the others are refused before.
      { params: { stream_id: (fixture) => String(fixture.publicChannel) } },
    ],
  },
  handler(ctx, input) {
    const permissions: Partial<Record<ChannelGroupField, GroupSettingChange>> = {};
    for (const spec of CHANNEL_GROUP_SETTINGS) {
      const value = input[spec.wire as keyof typeof input];
      if (value === undefined || value === null || typeof value !== "object") continue;
      const next = groupSettingFromWire(value.new);
      checkSettingSize(`${spec.wire}["new"]`, next);
      permissions[spec.field] = {
        new: next,
        ...(value.old !== undefined ? { old: groupSettingFromWire(value.old) } : {}),
      };
    }
    const update: UpdateChannelInput = {
      ...(input.new_name !== undefined ? { name: input.new_name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.is_private !== undefined ? { isPrivate: input.is_private } : {}),
      ...(input.is_web_public !== undefined ? { isWebPublic: input.is_web_public } : {}),
      ...(input.history_public_to_subscribers !== undefined
        ? { historyPublicToSubscribers: input.history_public_to_subscribers }
        : {}),
      ...(input.is_default_stream !== undefined ? { isDefault: input.is_default_stream } : {}),
      ...(input.is_archived !== undefined ? { isArchived: input.is_archived } : {}),
      ...(input.message_retention_days !== undefined ? { messageRetentionDays: input.message_retention_days } : {}),
      ...(input.topics_policy !== undefined ? { topicsPolicy: input.topics_policy } : {}),
      ...(input.folder_id !== undefined ? { folderId: input.folder_id } : {}),
      permissions,
    };
    ctx.store.updateChannel(ctx.user.id, channelIdParam(ctx), update);
    return {};
  },
});
