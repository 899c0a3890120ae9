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
import { RoaringBitmap32, serializeChunks, type BitmapStore, type ReadonlyBitmap } from "./bitmap-store.js";
import { key } from "./keys.js";
import type { Tables } from "../storage/tables.js";
import type { UserTopic } from "../types.js";

/** Meta key set once every stored topic policy's user is listed in its topic's holders. */
export const TOPIC_POLICY_HOLDERS_KEY = "topicPolicyHoldersByTopicIndexed";

/** Every holders key starts so (key.topicPolicyHolders); ";" follows ":". */
const HOLDERS_PREFIX = "uh:tp:";
const HOLDERS_END = "uh:tp;";

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

/** Users with a stored policy by holders key, in key order (user IDs only: ~900k policies at 10M messages). */
function policyUsersByTopic(tables: Tables): [string, number[]][] {
  const out = new Map<string, number[]>();
  for (const { value } of tables.userTopics.getRange()) {
    const { channelId, topic, userId, policy } = value as UserTopic;
    if (policy === 0) continue;
    const k = key.topicPolicyHolders(channelId, topic);
    const users = out.get(k);
    if (users === undefined) out.set(k, [userId]);
    else users.push(userId);
  }
  // Sorted, so that each write fills neighbouring pages of bitmap_chunks.
  return [...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * At open, before anything reads them: lists the users of every stored policy, once, for
 * a store written before the holders. Their chunks are written straight to bitmap_chunks
 * (through BitmapStore each new key was first looked for on disk and then cached: 3.2 s
 * and 380 MB of a 1M-message store's first open), after clearing what a build that
 * crashed before its flag left.
 */
export function buildTopicPolicyHolders(tables: Tables, write: (body: () => void) => void): void {
  if (tables.meta.get(TOPIC_POLICY_HOLDERS_KEY) === true) return;
  const byTopic = policyUsersByTopic(tables);
  // Several writes bound what one commit holds; the flag goes with the last.
  for (let start = 0; start === 0 || start < byTopic.length; start += BUILD_KEYS_PER_WRITE) {
    const slice = byTopic.slice(start, start + BUILD_KEYS_PER_WRITE);
    const last = start + BUILD_KEYS_PER_WRITE >= byTopic.length;
    write(() => {
      if (start === 0)
        for (const k of [...tables.bitmapChunks.getKeys({ start: [HOLDERS_PREFIX], end: [HOLDERS_END] })])
          tables.bitmapChunks.removeSync(k);
      for (const [k, users] of slice)
        for (const [chunk, bytes] of serializeChunks(new RoaringBitmap32(users)))
          tables.bitmapChunks.putSync([k, chunk], bytes);
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
