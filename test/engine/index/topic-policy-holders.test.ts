/**
 * The topic policy holders (index/topic-policy-holders.ts): the write that stores a
 * policy lists its user under the channel; a move carries policies for the users listed
 * there; a store written before them gets them built at its first open; verify finds a
 * policy whose user is not listed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import { key } from "../../../src/engine/index/keys.js";
import { TOPIC_POLICY_HOLDERS_KEY } from "../../../src/engine/index/topic-policy-holders.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

const FOLLOWED = 3;
const MUTED = 1;

let t: TempStore;
afterEach(() => t?.cleanup());

describe("topic policy holders", () => {
  it("list who set a policy in a channel, and a topic move carries exactly their policies", () => {
    t = tempStore();
    const { owner, alice, bob, general } = seedRealm(t.store);
    const holders = () => [...internals(t.store).bitmaps.get(key.topicPolicyHolders(general.id))];
    const before = holders();
    t.store.setTopicPolicy(alice.id, general.id, "plans", FOLLOWED);
    t.store.setTopicPolicy(bob.id, general.id, "plans", MUTED);
    t.store.setTopicPolicy(bob.id, general.id, "plans", 0);
    // Removing a policy keeps its user listed: a superset is all readers need.
    expect(holders()).toEqual([...new Set([...before, alice.id, bob.id])].sort((a, b) => a - b));
    const first = t.store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: general.id, topic: "plans" },
      content: "hello",
    }).id;
    t.store.updateMessage(owner.id, first, { topic: "later", propagateMode: "change_all" });
    const policy = (userId: number, topic: string) => internals(t.store).userTopics.policyOf(userId, general.id, topic);
    expect(policy(alice.id, "later")).toBe(FOLLOWED);
    expect(policy(alice.id, "plans")).toBe(0);
    expect(policy(bob.id, "later")).toBe(0);
    expect(t.store.verify().problems).toEqual([]);
  });

  it("are built at the first open of a store written without them, and verify finds one missing", () => {
    t = tempStore();
    const { alice, general } = seedRealm(t.store);
    t.store.setTopicPolicy(alice.id, general.id, "plans", FOLLOWED);
    const state = internals(t.store);
    const holderKey = key.topicPolicyHolders(general.id);
    const drop = (tables: typeof state.tables) =>
      tables.env.transactionSync(() => {
        for (const k of [...tables.bitmapChunks.getKeys({ start: [holderKey], end: [holderKey + "\u0000"] })])
          tables.bitmapChunks.removeSync(k);
      });
    drop(state.tables);
    state.tables.meta.removeSync(TOPIC_POLICY_HOLDERS_KEY);
    t.reopen();
    expect([...internals(t.store).bitmaps.get(holderKey)]).toContain(alice.id);
    expect(t.store.verify().problems).toEqual([]);

    drop(internals(t.store).tables);
    internals(t.store).bitmaps.clearCache();
    expect(t.store.verify().problems).toContain(
      `user ${alice.id} has a topic policy in channel ${general.id} that ${holderKey} does not list`,
    );
  });
});
