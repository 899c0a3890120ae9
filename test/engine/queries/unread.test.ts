/**
 * The unread summary (register's unread_msgs), computed from bitmaps by conversation
 * (queries/unread.ts), against a walk over every unread message that reads each one's
 * record: same groups in the same order, same IDs, counts and mentions, on a seeded
 * random history with topics differing only in case, direct and group conversations,
 * muted topics and channels, mentions, a left channel and partial reads.
 */
import { afterEach, expect, it } from "vitest";
import type { Message, Store, UnreadSummary } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { mentionedSet, mutedSet } from "../../../src/engine/narrow/plan.js";
import { unreadSet } from "../../../src/engine/queries/unread.js";
import { ReceivedSets } from "../../../src/engine/received.js";
import { foldTopic, key } from "../../../src/engine/index/keys.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t.cleanup());

/** The per-message walk the summary used to be. */
function reference(store: Store, userId: number): Omit<UnreadSummary, "oldUnreadsMissing"> {
  const state = internals(store);
  const user = state.users.get(userId)!;
  const ctx = { state, received: new ReceivedSets(state), user };
  const muted = mutedSet(ctx, null);
  const personal = new Set([
    ...state.bitmaps.get(key.userFlag(userId, "mentioned")),
    ...state.bitmaps.get(key.userFlag(userId, "group_mentioned")),
  ]);
  const any = mentionedSet(ctx);
  const pms = new Map<number, number[]>();
  const streams = new Map<string, { streamId: number; topic: string; unreadMessageIds: number[] }>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const id of unreadSet(ctx)) {
    const m = state.tables.messages.get(id) as Message;
    if (personal.has(id) || (any.has(id) && !muted.has(id))) mentions.push(id);
    if (m.recipient.type === "channel") {
      const k = `${m.recipient.channelId}:${foldTopic(m.topic)}`;
      const entry = streams.get(k) ?? { streamId: m.recipient.channelId, topic: m.topic, unreadMessageIds: [] };
      entry.unreadMessageIds.push(id);
      streams.set(k, entry);
      if (!muted.has(id)) count++;
      continue;
    }
    count++;
    const members = state.conversations.get(m.recipient.conversationId)!.userIds;
    if (members.length <= 2) {
      const other = members.find((u) => u !== userId) ?? userId;
      pms.set(other, [...(pms.get(other) ?? []), id]);
    } else {
      huddles.set(members.join(","), [...(huddles.get(members.join(",")) ?? []), id]);
    }
  }
  return {
    count,
    pms: [...pms].map(([otherUserId, unreadMessageIds]) => ({ otherUserId, unreadMessageIds })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([userIdsString, unreadMessageIds]) => ({ userIdsString, unreadMessageIds })),
    mentions,
  };
}

it("matches a walk over every unread message", () => {
  t = tempStore();
  const s = t.store;
  const w = seedRealm(s);
  s.subscribe(w.owner.id, {
    channels: [{ name: "third" }, { name: "fourth" }],
    principals: [w.owner.id, w.alice.id, w.bob.id],
  });
  let seed = 12;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const topics = ["alpha", "Alpha", "beta", "gamma", "delta"];
  const senders = [w.owner, w.alice, w.bob];
  const ids: number[] = [];
  for (let i = 0; i < 400; i++) {
    const sender = senders[rand(3)]!;
    const kind = rand(10);
    const mention = rand(8) === 0 ? "@**Bob** " : rand(15) === 0 ? "@**all** " : "";
    if (kind < 7) {
      const channel = ["general", "third", "fourth"][rand(3)]!;
      ids.push(
        s.sendMessage({
          senderId: sender.id,
          to: { type: "channel", channel, topic: topics[rand(topics.length)] },
          content: `${mention}m${i}`,
        }).id,
      );
    } else {
      const users =
        kind === 9
          ? [w.bob.id, w.alice.id, w.owner.id].filter((u) => u !== sender.id)
          : [sender.id === w.bob.id ? w.alice.id : w.bob.id];
      ids.push(s.sendMessage({ senderId: sender.id, to: { type: "direct", users }, content: `${mention}d${i}` }).id);
    }
    if (i === 250) s.unsubscribe(w.bob.id, ["fourth"]);
  }
  s.updateFlags(
    w.bob.id,
    ids.filter(() => rand(3) === 0),
    "read",
    "add",
  );
  const channelId = (name: string) => internals(s).channelByName.get(`${w.realm.id}:${name.toUpperCase()}`)!;
  s.setTopicPolicy(w.bob.id, channelId("general"), "beta", 1);
  s.setChannelMuted(w.bob.id, channelId("third"), true);
  s.setTopicPolicy(w.bob.id, channelId("third"), "gamma", 2);

  const summary = s.unreadSummary(w.bob.id);
  const { oldUnreadsMissing, ...rest } = summary;
  expect(oldUnreadsMissing).toBe(false);
  const expected = reference(s, w.bob.id);
  expect(expected.streams.length).toBeGreaterThan(6);
  expect(expected.pms.length + expected.huddles.length).toBeGreaterThan(1);
  expect(expected.mentions.length).toBeGreaterThan(5);
  expect(rest).toEqual(expected);
});
