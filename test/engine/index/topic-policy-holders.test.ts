/**
 * The topic policy holders (index/topic-policy-holders.ts): the write that stores a
 * policy lists its user under the channel and folded topic; a move and a resolve carry
 * policies for the users listed on the old topic and list them on the new one; a send
 * reads the policies of the topic's holders only, and notifies as before; a store
 * written before them gets them built at its first open; verify finds a policy whose
 * user is not listed.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import { key } from "../../../src/engine/index/keys.js";
import { TOPIC_POLICY_HOLDERS_KEY } from "../../../src/engine/index/topic-policy-holders.js";
import type { User } from "../../../src/engine/types.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

const FOLLOWED = 3;
const UNMUTED = 2;
const MUTED = 1;

let t: TempStore;
afterEach(() => t?.cleanup());

function setup() {
  t = tempStore();
  const seed = seedRealm(t.store);
  const { owner, general } = seed;
  // More users with policies on other topics of the channel: not the moved topic's holders.
  const others = Array.from({ length: 6 }, (_, i) =>
    t.store.createUser({ realmId: seed.realm.id, email: `other${i}@test.dev`, fullName: `Other ${i}` }),
  );
  t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: others.map((u) => u.id) });
  for (const [i, u] of others.entries()) t.store.setTopicPolicy(u.id, general.id, `elsewhere ${i}`, FOLLOWED);
  const holders = (topic: string, channelId = general.id) =>
    [...internals(t.store).bitmaps.get(key.topicPolicyHolders(channelId, topic))].sort((a, b) => a - b);
  const policy = (userId: number, topic: string, channelId = general.id) =>
    internals(t.store).userTopics.policyOf(userId, channelId, topic);
  const send = (sender: User, topic: string, content = "hello", channelId = general.id) =>
    t.store.sendMessage({ senderId: sender.id, to: { type: "channel", channel: channelId, topic }, content }).id;
  /** LMDB reads of single policies (uncached users) while `fn` runs, by user. */
  const policyReads = (fn: () => void): number[] => {
    const state = internals(t.store);
    state.userTopics.clear();
    const spy = vi.spyOn(state.tables.userTopics, "get");
    try {
      fn();
      return [...new Set(spy.mock.calls.map(([k]) => (k as [number, number, string])[0]))].sort((a, b) => a - b);
    } finally {
      spy.mockRestore();
    }
  };
  return { ...seed, others, holders, policy, send, policyReads };
}

const ascending = (...ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);

describe("topic policy holders", () => {
  it("list who set a policy on each topic (any letter case), and keep a user whose policy was removed", () => {
    const { alice, bob, owner, general, holders } = setup();
    t.store.setTopicPolicy(alice.id, general.id, "plans", FOLLOWED);
    t.store.setTopicPolicy(bob.id, general.id, "Plans", MUTED);
    t.store.setTopicPolicy(owner.id, general.id, "other", UNMUTED);
    expect(holders("plans")).toEqual(ascending(alice.id, bob.id));
    expect(holders("PLANS")).toEqual(ascending(alice.id, bob.id));
    expect(holders("other")).toEqual([owner.id]);
    t.store.setTopicPolicy(bob.id, general.id, "plans", 0);
    // Removing a policy keeps its user listed: a superset is all readers need.
    expect(holders("plans")).toEqual(ascending(alice.id, bob.id));
    expect(holders("never set")).toEqual([]);
    expect(t.store.verify().problems).toEqual([]);
  });

  it("a change_all move carries exactly the old topic's policies, reads only its holders', and lists them on the new topic", () => {
    const { alice, bob, owner, general, others, holders, policy, send, policyReads } = setup();
    const first = send(owner, "plans");
    t.store.setTopicPolicy(alice.id, general.id, "plans", FOLLOWED);
    t.store.setTopicPolicy(bob.id, general.id, "Plans", MUTED);
    const before = holders("plans");
    const reads = policyReads(() =>
      t.store.updateMessage(owner.id, first, { topic: "later", propagateMode: "change_all" }),
    );
    // The old topic's holders (alice, bob, the owner who started it) and nothing of the others' topics.
    for (const userId of reads) expect(before).toContain(userId);
    expect(reads.filter((userId) => others.some((u) => u.id === userId))).toEqual([]);
    expect(policy(alice.id, "later")).toBe(FOLLOWED);
    expect(policy(bob.id, "later")).toBe(MUTED);
    expect(policy(alice.id, "plans")).toBe(0);
    expect(policy(bob.id, "plans")).toBe(0);
    // Exactly the moved policies' users (no policy was ever removed from the new topic).
    expect(holders("later")).toEqual(before);
    expect(t.store.verify().problems).toEqual([]);

    // Merged into a topic that has messages (another spelling of its name): the more visible wins.
    const target = send(owner, "Target");
    t.store.setTopicPolicy(bob.id, general.id, "target", UNMUTED);
    t.store.updateMessage(owner.id, target, { topic: "TARGET", propagateMode: "change_all" });
    // A change of letter case only keeps every policy where it is.
    expect(policy(bob.id, "target")).toBe(UNMUTED);
    t.store.updateMessage(owner.id, first, { topic: "target", propagateMode: "change_all" });
    expect(policy(alice.id, "Target")).toBe(FOLLOWED);
    expect(policy(bob.id, "Target")).toBe(UNMUTED);
    expect(holders("target")).toEqual(expect.arrayContaining([alice.id, bob.id]));
    expect(t.store.verify().problems).toEqual([]);
  });

  it("a resolve lists the moved policies' users on the resolved topic, and a follow-up move finds them", () => {
    const { alice, bob, owner, general, others, holders, policy, send } = setup();
    const first = send(owner, "bug");
    t.store.setTopicPolicy(alice.id, general.id, "bug", FOLLOWED);
    t.store.setTopicPolicy(bob.id, general.id, "bug", MUTED);
    const before = holders("bug");
    expect(before).toEqual(expect.arrayContaining([alice.id, bob.id]));
    t.store.updateMessage(owner.id, first, { topic: "✔ bug", propagateMode: "change_all" });
    expect(policy(alice.id, "✔ bug")).toBe(FOLLOWED);
    expect(policy(bob.id, "✔ bug")).toBe(MUTED);
    expect(holders("✔ bug")).toEqual(before);
    for (const other of others) expect(before).not.toContain(other.id);
    t.store.updateMessage(owner.id, first, { topic: "bug", propagateMode: "change_all" });
    expect(policy(alice.id, "bug")).toBe(FOLLOWED);
    expect(policy(bob.id, "bug")).toBe(MUTED);
    expect(policy(alice.id, "✔ bug")).toBe(0);
    expect(t.store.verify().problems).toEqual([]);
  });

  it("a move to another channel lists the policies' users on the topic there", () => {
    const { alice, owner, general, secret, holders, policy, send } = setup();
    const first = send(owner, "plans");
    t.store.setTopicPolicy(alice.id, general.id, "plans", FOLLOWED);
    t.store.updateMessage(owner.id, first, { channelId: secret.id, propagateMode: "change_all" });
    expect(policy(alice.id, "plans", secret.id)).toBe(FOLLOWED);
    // Alice, and the owner if starting the topic followed it: only those with a policy on it.
    expect(holders("plans", secret.id)).toEqual(holders("plans").filter((u) => policy(u, "plans", secret.id) !== 0));
    expect(holders("plans", secret.id)).toContain(alice.id);
    expect(t.store.verify().problems).toEqual([]);
  });

  it("a deleted topic's policies go and its holders stay a superset; verify is clean", async () => {
    const { alice, bob, owner, general, holders, policy, send } = setup();
    send(owner, "doomed");
    send(alice, "Doomed");
    t.store.setTopicPolicy(alice.id, general.id, "doomed", FOLLOWED);
    t.store.setTopicPolicy(bob.id, general.id, "DOOMED", MUTED);
    const before = holders("doomed");
    expect(before).toEqual(expect.arrayContaining([alice.id, bob.id]));
    expect(await t.store.deleteTopic(owner.id, general.id, "doomed")).toEqual({ complete: true });
    for (const userId of before) expect(policy(userId, "doomed")).toBe(0);
    expect(holders("doomed")).toEqual(before);
    expect(t.store.verify().problems).toEqual([]);
  });

  it("a send reads the policies of the topic's holders only, and notifies followers and not muters as before", () => {
    const { alice, bob, owner, general, others, send, policyReads } = setup();
    const pushDevice = (user: User) => {
      const deviceId = t.store.registerClientDevice(user.id);
      t.store.registerPushDevice(
        user.id,
        {
          deviceId,
          pushKey: Buffer.concat([Buffer.from([0x31]), randomBytes(32)]).toString("base64"),
          pushKeyId: randomBytes(4).readUInt32BE(),
          tokenKind: "fcm",
          tokenId: randomBytes(8).toString("base64"),
          bouncerPublicKey: "cHVibGljLWtleQ==",
          encryptedPushRegistration: "c2VhbGVkLXJlZ2lzdHJhdGlvbg==",
        },
        true,
      );
    };
    pushDevice(alice);
    pushDevice(bob);
    // Bob gets every message of the channel pushed and its wildcard mentions: except where he muted the topic.
    t.store.updateSettings(bob.id, { settings: { enable_stream_push_notifications: true } });
    t.store.setTopicPolicy(alice.id, general.id, "plans", FOLLOWED);
    t.store.setTopicPolicy(bob.id, general.id, "Plans", MUTED);
    const pushes = (id: number) =>
      t.store
        .pushOutboxItems(0, 1000)
        .flatMap((i) => (i.kind === "message" && i.messageId === id ? [[i.userId, i.trigger]] : []));
    const mailed = (id: number) =>
      t.store
        .missedEmailBatches()
        .flatMap((b) => b.items.filter((i) => i.messageId === id).map((i) => [b.userId, i.trigger]));

    let quiet = 0;
    const reads = policyReads(() => (quiet = send(owner, "plans", "just talk")));
    // Alice and bob (the topic's holders) at most: none of the channel's other policy holders.
    for (const other of others) expect(reads).not.toContain(other.id);
    expect(pushes(quiet)).toEqual([[alice.id, "followed_topic_push_notify"]]);
    expect(mailed(quiet)).toEqual([[alice.id, "followed_topic_email_notify"]]);

    const loud = send(owner, "plans", "@**all** look");
    expect(pushes(loud)).toEqual([[alice.id, "stream_wildcard_mentioned_in_followed_topic"]]);
    // Every subscriber is a candidate for a channel-wide mention: bob, who muted the topic, gets nothing.
    expect(mailed(loud).filter(([u]) => u === alice.id || u === bob.id)).toEqual([
      [alice.id, "stream_wildcard_mentioned_in_followed_topic"],
    ]);

    // A follower who left the channel receives nothing there, so is notified of nothing.
    const leaver = others[0]!;
    t.store.setTopicPolicy(leaver.id, general.id, "plans", FOLLOWED);
    t.store.unsubscribe(leaver.id, ["general"]);
    const afterLeaving = send(owner, "plans", "still talking");
    expect(mailed(afterLeaving)).toEqual([[alice.id, "followed_topic_email_notify"]]);

    // The same messages in a topic nobody has a policy on.
    const plain = send(owner, "lunch", "just talk");
    expect(pushes(plain)).toEqual([[bob.id, "stream_push_notify"]]);
    expect(mailed(plain)).toEqual([]);
    const plainLoud = send(owner, "lunch", "@**all** look");
    expect(pushes(plainLoud).sort()).toEqual(
      [
        [alice.id, "stream_wildcard_mentioned"],
        [bob.id, "stream_wildcard_mentioned"],
      ].sort(),
    );
    expect(mailed(plainLoud).map(([u]) => u)).toEqual(expect.arrayContaining([alice.id, bob.id]));
  });

  it("are built at the first open of a store written without them, and verify finds one missing", () => {
    const { alice, bob, general, holders } = setup();
    t.store.setTopicPolicy(alice.id, general.id, "plans", FOLLOWED);
    t.store.setTopicPolicy(bob.id, general.id, "Plans", MUTED);
    t.store.setTopicPolicy(bob.id, general.id, "other", UNMUTED);
    const expected = { plans: holders("plans"), other: holders("other"), elsewhere: holders("elsewhere 3") };
    const drop = (prefix: string) => {
      const { tables } = internals(t.store);
      tables.env.transactionSync(() => {
        for (const k of [...tables.bitmapChunks.getKeys({ start: [prefix], end: [prefix + "\uffff"] })])
          tables.bitmapChunks.removeSync(k);
      });
      internals(t.store).bitmaps.clearCache();
    };
    // A store from before the holders: no holder bitmaps, no marker.
    drop("uh:tp:");
    internals(t.store).tables.meta.removeSync(TOPIC_POLICY_HOLDERS_KEY);
    expect(holders("plans")).toEqual([]);
    // What a build that crashed before its flag left goes: the holders are written again from the table.
    internals(t.store).write(() => {
      internals(t.store).bitmaps.add(key.topicPolicyHolders(general.id, "plans"), 999);
      internals(t.store).bitmaps.add(key.topicPolicyHolders(general.id, "gone"), 999);
    });
    t.reopen();
    expect(holders("gone")).toEqual([]);
    expect(internals(t.store).tables.meta.get(TOPIC_POLICY_HOLDERS_KEY)).toBe(true);
    expect(holders("plans")).toEqual(expected.plans);
    expect(holders("other")).toEqual(expected.other);
    expect(holders("elsewhere 3")).toEqual(expected.elsewhere);
    expect(t.store.verify().problems).toEqual([]);

    drop(key.topicPolicyHolders(general.id, "plans"));
    expect(t.store.verify().problems).toEqual([
      `user ${alice.id} has a policy on topic "plans" in channel ${general.id} that ${key.topicPolicyHolders(general.id, "plans")} does not list`,
      `user ${bob.id} has a policy on topic "Plans" in channel ${general.id} that ${key.topicPolicyHolders(general.id, "plans")} does not list`,
    ]);
  });
});
