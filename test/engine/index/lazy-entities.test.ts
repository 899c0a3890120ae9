import { afterEach, describe, expect, it } from "vitest";
import { open } from "lmdb";
import { internals } from "../../../src/engine/internal.js";
import { MEMBERS_INDEXED_KEY } from "../../../src/engine/index/conversations.js";
import { UserTopicPolicies } from "../../../src/engine/index/user-topics.js";
import { MAX_DBS } from "../../../src/engine/storage/tables.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

function dmWindow(store: TempStore["store"], userId: number, with_: number[]): number[] {
  return store
    .getMessages(userId, { narrow: [{ operator: "dm", operand: with_ }], anchor: "newest", numBefore: 50, numAfter: 0 })
    .messages.map((m) => m.message.id);
}

describe("conversations read on demand", () => {
  it("a store written before conversation_members gets it built at its next open: DM narrows and sends find the old conversations", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const one = t.store.sendMessage({
      senderId: w.alice.id,
      to: { type: "direct", users: [w.bob.id] },
      content: "one",
    }).id;
    const group = t.store.sendMessage({
      senderId: w.alice.id,
      to: { type: "direct", users: [w.bob.id, w.owner.id] },
      content: "group",
    }).id;
    t.store.close();
    // What an older build left: conversations, no members index, no flag.
    const env = open({ path: t.dir, noSubdir: false, maxDbs: MAX_DBS });
    const members = env.openDB({ name: "conversation_members" });
    const meta = env.openDB({ name: "meta" });
    env.transactionSync(() => {
      for (const key of members.getKeys()) members.removeSync(key);
      meta.removeSync(MEMBERS_INDEXED_KEY);
    });
    void env.close();

    const store = t.reopen();
    expect(store.verify().problems).toEqual([]);
    expect(dmWindow(store, w.bob.id, [w.alice.id])).toEqual([one]);
    expect(dmWindow(store, w.bob.id, [w.alice.id, w.owner.id])).toEqual([group]);
    const again = store.sendMessage({
      senderId: w.bob.id,
      to: { type: "direct", users: [w.alice.id] },
      content: "again",
    });
    expect(store.getMessage(w.bob.id, again.id).message.recipient).toEqual(
      store.getMessage(w.bob.id, one).message.recipient,
    );
    expect(internals(store).conversations.count()).toBe(2);
    expect(store.verify().problems).toEqual([]);
  });

  it("verify reports a conversation missing from conversation_members", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    t.store.sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "one" });
    const tables = internals(t.store).tables;
    tables.env.transactionSync(() => {
      for (const key of tables.conversationMembers.getKeys()) tables.conversationMembers.removeSync(key);
    });
    expect(t.store.verify().problems).toEqual(["conversation_members lacks 1 of 1 conversations"]);
  });

  it("long member lists are keyed by a digest and still found", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const users = Array.from(
      { length: 60 },
      (_, i) => t!.store.createUser({ realmId: w.realm.id, email: `u${i}@test.dev`, fullName: `User ${i}` }).id,
    );
    const first = t.store.sendMessage({
      senderId: w.alice.id,
      to: { type: "direct", users: [...users, w.bob.id] },
      content: "many",
    });
    const store = t.reopen();
    const second = store.sendMessage({
      senderId: w.bob.id,
      to: { type: "direct", users: [w.alice.id, ...users] },
      content: "many again",
    });
    expect(store.getMessage(w.bob.id, second.id).message.recipient).toEqual(
      store.getMessage(w.bob.id, first.id).message.recipient,
    );
    expect(dmWindow(store, w.alice.id, [...users, w.bob.id])).toEqual([first.id, second.id]);
    expect(store.verify().problems).toEqual([]);
  });
});

describe("topic policies read per user on demand", () => {
  it("a tiny cache evicts users and every answer still matches what was written, across a reopen", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const state = internals(t.store);
    const small = new UserTopicPolicies(state.tables, 600);
    const users = [w.owner.id, w.alice.id, w.bob.id];
    const expected = new Map<string, number>();
    let step = 0;
    for (let round = 0; round < 4; round++) {
      for (const userId of users) {
        for (let i = 0; i < 5; i++) {
          const policy = (step++ * 7 + userId) % 4;
          const topic = `Topic ${i}`;
          t.store.setTopicPolicy(userId, w.general.id, topic, policy);
          expected.set(`${userId}:${i}`, policy);
          small.apply({ userId, channelId: w.general.id, topic, policy: policy as 0 | 1 | 2 | 3, lastUpdated: 0 });
          // Touch another user's list so that lists are cached, evicted and reread.
          small.of(users[(userId + i) % users.length]!);
        }
      }
    }
    const check = (store: TempStore["store"], policies: UserTopicPolicies) => {
      const fresh = internals(store).userTopics;
      for (const userId of users) {
        for (let i = 0; i < 5; i++) {
          const want = expected.get(`${userId}:${i}`)!;
          expect(fresh.policyOf(userId, w.general.id, `TOPIC ${i}`)).toBe(want);
          expect(policies.policyOf(userId, w.general.id, `topic ${i}`)).toBe(want);
          expect(policies.of(userId).get(`${w.general.id}:TOPIC ${i}`)?.policy ?? 0).toBe(want);
        }
        expect(
          store
            .userTopics(userId)
            .map((u) => [u.topic, u.policy])
            .sort(),
        ).toEqual(
          [...expected]
            .filter(([k, p]) => k.startsWith(`${userId}:`) && p !== 0)
            .map(([k, p]) => [`Topic ${k.split(":")[1]}`, p])
            .sort(),
        );
      }
    };
    check(t.store, small);
    expect(small.cached().length).toBeLessThan(users.length);
    const reopened = t.reopen();
    check(reopened, internals(reopened).userTopics);
  });

  it("a group commit that fails leaves no uncommitted automatic follow in a cached list", async () => {
    let fail = false;
    t = tempStore({
      commitHook: () => {
        if (fail) throw new Error("injected commit failure");
      },
    });
    const w = seedRealm(t.store);
    t.store.setTopicPolicy(w.alice.id, w.general.id, "older", 1);
    // Listing them (as register does) caches Alice's list.
    expect(t.store.userTopics(w.alice.id).map((u) => u.topic)).toEqual(["older"]);
    expect(
      internals(t.store)
        .userTopics.cached()
        .map(([id]) => id),
    ).toContain(w.alice.id);
    fail = true;
    const send = (content: string) =>
      t!.store.sendMessageGrouped({
        senderId: w.alice.id,
        to: { type: "channel", channel: "general", topic: "fresh" },
        content,
      });
    const results = await Promise.allSettled([send("one"), send("two")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(internals(t.store).userTopics.policyOf(w.alice.id, w.general.id, "fresh")).toBe(0);
    expect(t.store.userTopics(w.alice.id).map((u) => u.topic)).toEqual(["older"]);
    // The same send now commits and follows the topic it starts.
    await send("three");
    expect(
      t.store
        .userTopics(w.alice.id)
        .map((u) => [u.topic, u.policy])
        .sort(),
    ).toEqual([
      ["fresh", 3],
      ["older", 1],
    ]);
  });

  it("a user's per-policy lists and muted channels follow every change (first_unread's muting reads them)", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const topics = internals(t.store).userTopics;
    const state = internals(t.store);
    const listed = (policy: number) =>
      topics
        .withPolicy(w.alice.id, policy)
        .map((u) => u.topic)
        .sort();
    t.store.setTopicPolicy(w.alice.id, w.general.id, "a", 1);
    t.store.setTopicPolicy(w.alice.id, w.general.id, "b", 3);
    expect(listed(1)).toEqual(["a"]);
    expect(listed(3)).toEqual(["b"]);
    t.store.setTopicPolicy(w.alice.id, w.general.id, "a", 3);
    t.store.setTopicPolicy(w.alice.id, w.general.id, "c", 1);
    expect(listed(1)).toEqual(["c"]);
    expect(listed(3)).toEqual(["a", "b"]);
    t.store.setTopicPolicy(w.alice.id, w.general.id, "b", 0);
    expect(listed(3)).toEqual(["a"]);

    expect(state.mutedChannelsOf(w.alice.id)).toEqual([]);
    t.store.setChannelMuted(w.alice.id, w.general.id, true);
    expect(state.mutedChannelsOf(w.alice.id)).toEqual([w.general.id]);
    // Muting the channel hides "general" messages from first_unread except in followed topic "a".
    const inMuted = t.store.sendMessage({
      senderId: w.bob.id,
      to: { type: "channel", channel: "general", topic: "other" },
      content: "muted",
    }).id;
    const followed = t.store.sendMessage({
      senderId: w.bob.id,
      to: { type: "channel", channel: "general", topic: "a" },
      content: "followed",
    }).id;
    const anchorOf = () =>
      t!.store.getMessages(w.alice.id, { narrow: [], anchor: "first_unread", numBefore: 0, numAfter: 0 }).anchor;
    t.store.updateFlags(
      w.alice.id,
      t.store
        .getMessages(w.alice.id, { narrow: [], anchor: "newest", numBefore: 1000, numAfter: 0 })
        .messages.map((m) => m.message.id)
        .filter((id) => id < inMuted),
      "read",
      "add",
    );
    expect(anchorOf()).toBe(followed);
    t.store.setChannelMuted(w.alice.id, w.general.id, false);
    expect(state.mutedChannelsOf(w.alice.id)).toEqual([]);
    expect(anchorOf()).toBe(inMuted);
  });
});
