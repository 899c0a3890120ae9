/**
 * @module index/topic-policy-holders
 * Per channel and folded topic, the users who have ever had a policy (follow, mute,
 * unmute) on that topic: key.topicPolicyHolders is a bitmap of user IDs, added to in the
 * write that stores a policy (actions/user-topics.ts writeTopicPolicy, the only writer of
 * user_topics rows: POST /user_topics, the automatic policies, a move carrying policies
 * to the new topic). A superset (a user whose policy was removed, by them, a move or a
 * topic's deletion, stays listed), which is all readers need: a user not listed has
 * policy 0 on the topic, so it is not read.
 *
 * Why per topic: a move or a resolve carries the old topic's policies to the new one,
 * and a send to a channel looks at the topic's followers for their missed-message email.
 * Listed per channel, both asked every user who had a policy on any topic of it (~940 of
 * a 10,000-user realm's busiest channel, an LMDB read each) for the one topic. The
 * user_topics rows cannot be range-read by topic: their key starts with the user.
 *
 * Stores written before these holders get them built once, at their first open by this
 * code (one scan of the user_topics table); verify checks every policy's user is listed.
 * Earlier builds listed holders per channel (uh:topic-policies:<channel>): no reader is
 * left, and those few keys are left where they are.
 */
import { RoaringBitmap32, type BitmapStore, type ReadonlyBitmap } from "./bitmap-store.js";
import { key } from "./keys.js";
import type { Tables } from "../storage/tables.js";
import type { UserTopic } from "../types.js";

/** Meta key set once every stored topic policy's user is listed in its topic's holders. */
export const TOPIC_POLICY_HOLDERS_KEY = "topicPolicyHoldersByTopicIndexed";

/** Keys written per transaction by the build: a 10M-message store has ~900k policies, mostly one per topic. */
const BUILD_KEYS_PER_WRITE = 20_000;

interface BitmapReader {
  get(key: string): ReadonlyBitmap;
}

/** Who may have a policy on the topic (any spelling of it: the key folds). Live: do not mutate. */
export function topicPolicyHolders(bitmaps: BitmapReader, channelId: number, topic: string): ReadonlyBitmap {
  return bitmaps.get(key.topicPolicyHolders(channelId, topic));
}

/** Stored policies by holders key (one scan of the table). */
function policiesByTopic(tables: Tables): Map<string, UserTopic[]> {
  const out = new Map<string, UserTopic[]>();
  for (const { value } of tables.userTopics.getRange()) {
    const record = value as UserTopic;
    if (record.policy === 0) continue;
    const k = key.topicPolicyHolders(record.channelId, record.topic);
    const listed = out.get(k);
    if (listed === undefined) out.set(k, [record]);
    else listed.push(record);
  }
  return out;
}

/** At open: lists the users of every stored policy, once, for a store written before the holders. */
export function buildTopicPolicyHolders(tables: Tables, bitmaps: BitmapStore, write: (body: () => void) => void): void {
  if (tables.meta.get(TOPIC_POLICY_HOLDERS_KEY) === true) return;
  const byTopic = [...policiesByTopic(tables)];
  // Several writes bound what one commit holds; the flag goes with the last, so a crash
  // before it builds again from the start (adding a listed user again changes nothing).
  for (let start = 0; start === 0 || start < byTopic.length; start += BUILD_KEYS_PER_WRITE) {
    const slice = byTopic.slice(start, start + BUILD_KEYS_PER_WRITE);
    const last = start + BUILD_KEYS_PER_WRITE >= byTopic.length;
    write(() => {
      for (const [k, records] of slice) bitmaps.addAll(k, new RoaringBitmap32(records.map((r) => r.userId)));
      if (last) tables.meta.putSync(TOPIC_POLICY_HOLDERS_KEY, true);
    });
  }
}

/** For verify: stored policies whose user their topic's holders do not list. */
export function unlistedTopicPolicies(tables: Tables, bitmaps: BitmapStore): string[] {
  const problems: string[] = [];
  for (const [k, records] of policiesByTopic(tables)) {
    const listed = bitmaps.loadFromDisk(k);
    for (const { userId, channelId, topic } of records)
      if (!listed.has(userId))
        problems.push(
          `user ${userId} has a policy on topic ${JSON.stringify(topic)} in channel ${channelId} that ${k} does not list`,
        );
  }
  return problems;
}
