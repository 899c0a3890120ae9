/**
 * @module index/topic-policy-holders
 * Per channel, the users who have ever had a topic policy (follow, mute, unmute) in it:
 * key.topicPolicyHolders is a bitmap of user IDs, added to in the write that stores a
 * policy (actions/user-topics.ts writeTopicPolicy). A superset (a user whose policies
 * were all removed stays listed), which is all readers need.
 *
 * Why: a move or a resolve carries the old topic's policies to the new one, and asking
 * every user of a 10,000-user realm for their policy on the topic was an LMDB read each,
 * twice a move (~30 ms of a 60 ms resolve). The topic_users rows cannot be range-read
 * by channel: their key starts with the user.
 *
 * Stores written before the holders existed get them built once, at their first open by
 * this code (one scan of the user_topics table); verify checks every policy's user is listed.
 */
import { RoaringBitmap32, type Bitmap, type BitmapStore } from "./bitmap-store.js";
import { key } from "./keys.js";
import type { Tables } from "../storage/tables.js";
import type { UserTopic } from "../types.js";

/** Meta key set once every stored topic policy's user is listed in its channel's holders. */
export const TOPIC_POLICY_HOLDERS_KEY = "topicPolicyHoldersIndexed";

/** Users with a stored policy, by channel (one scan of the table). */
function policyUsersByChannel(tables: Tables): Map<number, Bitmap> {
  const out = new Map<number, Bitmap>();
  for (const { value } of tables.userTopics.getRange()) {
    const record = value as UserTopic;
    if (record.policy === 0) continue;
    let users = out.get(record.channelId);
    if (users === undefined) out.set(record.channelId, (users = new RoaringBitmap32()));
    users.add(record.userId);
  }
  return out;
}

/** At open: lists the users of every stored policy, once, for a store written before the holders. */
export function buildTopicPolicyHolders(tables: Tables, bitmaps: BitmapStore, write: (body: () => void) => void): void {
  if (tables.meta.get(TOPIC_POLICY_HOLDERS_KEY) === true) return;
  const byChannel = policyUsersByChannel(tables);
  write(() => {
    for (const [channelId, users] of byChannel) bitmaps.addBitmap(key.topicPolicyHolders(channelId), users);
    tables.meta.putSync(TOPIC_POLICY_HOLDERS_KEY, true);
  });
}

/** For verify: stored policies whose user their channel's holders do not list. */
export function unlistedTopicPolicies(tables: Tables, bitmaps: BitmapStore): string[] {
  const problems: string[] = [];
  for (const [channelId, users] of policyUsersByChannel(tables)) {
    const listed = bitmaps.loadFromDisk(key.topicPolicyHolders(channelId));
    for (const userId of RoaringBitmap32.andNot(users, listed))
      problems.push(
        `user ${userId} has a topic policy in channel ${channelId} that ${key.topicPolicyHolders(channelId)} does not list`,
      );
  }
  return problems;
}
