/**
 * @module actions/legacy-muted-topics
 * PATCH /users/me/subscriptions/muted_topics (deprecated; older clients still call it):
 * Zulip's mute_topic and unmute_topic over user topic policies. The channel is named by
 * ID or by name, exactly one. Muting needs access to the channel's content ("Invalid
 * channel ID" / "Invalid channel name '…'" otherwise) and refuses a topic already muted;
 * unmuting works in any channel of the realm (access may have been lost since, as for
 * POST /user_topics) and refuses with "Topic is not muted" when the channel is unknown
 * or the topic is not muted (a followed or unmuted topic is left alone). Events as for
 * any policy change: the deprecated muted_topics list, then user_topic.
 */
import { canAccessChannelContent } from "../access.js";
import { BadRequestError, IncompatibleParametersError, MissingArgumentError } from "../errors.js";
import type { StoreState } from "../state.js";
import type { Channel } from "../types.js";
import { findChannelByName } from "./lookups.js";
import { policyTopicName, topicPolicyOf, writeTopicPolicy } from "./user-topics.js";
import { requireActiveUser } from "./users.js";

const MUTED = 1;
const NOT_MUTED = "Topic is not muted";

export interface LegacyMutedTopicChange {
  readonly channelId?: number;
  readonly channelName?: string;
  readonly topic: string;
  readonly op: "add" | "remove";
}

export function updateLegacyMutedTopic(state: StoreState, userId: number, change: LegacyMutedTopicChange): void {
  const user = requireActiveUser(state, userId);
  const { channelId, channelName, op } = change;
  if (channelId === undefined && channelName === undefined) throw new MissingArgumentError("stream_id");
  if (channelId !== undefined && channelName !== undefined)
    throw new IncompatibleParametersError(["stream_id", "stream"]);
  const found: Channel | undefined =
    channelId !== undefined ? state.channels.get(channelId) : findChannelByName(state, user.realmId, channelName!);
  const channel = found?.realmId === user.realmId ? found : undefined;
  if (op === "add") {
    if (channel === undefined || !canAccessChannelContent(state, user, channel))
      throw new BadRequestError(
        channelId !== undefined ? "Invalid channel ID" : `Invalid channel name '${channelName!.slice(0, 60)}'`,
      );
    const topic = policyTopicName(state, user, change.topic);
    if (topicPolicyOf(state, user.id, channel.id, topic) === MUTED) throw new BadRequestError("Topic already muted");
    state.write((ctx) => writeTopicPolicy(state, ctx, user.id, channel.id, topic, MUTED));
    return;
  }
  if (channel === undefined) throw new BadRequestError(NOT_MUTED);
  const topic = policyTopicName(state, user, change.topic);
  if (topicPolicyOf(state, user.id, channel.id, topic) !== MUTED) throw new BadRequestError(NOT_MUTED);
  state.write((ctx) => writeTopicPolicy(state, ctx, user.id, channel.id, topic, 0));
}
