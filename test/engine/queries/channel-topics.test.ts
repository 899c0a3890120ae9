/**
 * A channel's topic list (queries/channel-topics.ts), derived from the topic bitmaps and
 * kept by a DerivedCache, against a reference that groups the messages GET /messages
 * returns the caller for a channel narrow by folded topic: same topics, same newest IDs,
 * same spellings, same order, after sends, topic and channel moves and deletions, for
 * callers of public, private shared-history and private protected-history channels.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BadRequestError, type ChannelTopic, type Message, type Store } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { rewriteMessages } from "../../../src/engine/actions/message-rewrite.js";
import { getMessageRecord } from "../../../src/engine/storage/message-records.js";
import { channelTopics, channelTopicsAsync, ChannelTopicIndex } from "../../../src/engine/queries/channel-topics.js";
import { ReceivedSets } from "../../../src/engine/received.js";
import { foldTopic } from "../../../src/engine/index/keys.js";
import type { TopicReader } from "../../../src/engine/directory.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t?.cleanup());

const plain = (topics: readonly ChannelTopic[]) => topics.map((x) => ({ name: x.name, maxId: x.maxId }));

/** What the caller can read of the channel, grouped by folded topic, newest spelling, newest first. */
function reference(store: Store, userId: number, channelId: number): ChannelTopic[] {
  const byTopic = new Map<string, ChannelTopic>();
  let anchor: number | "newest" = "newest";
  for (;;) {
    const page: readonly { message: Message }[] = store.getMessages(userId, {
      narrow: [{ operator: "channel", operand: channelId }],
      anchor,
      numBefore: 5000,
      numAfter: 0,
      includeAnchor: anchor === "newest",
    }).messages;
    for (const { message } of [...page].reverse()) {
      const k = foldTopic(message.topic);
      if (!byTopic.has(k)) byTopic.set(k, { name: message.topic, maxId: message.id });
    }
    if (page.length < 5000) break;
    anchor = page[0]!.message.id;
  }
  return [...byTopic.values()].sort((a, b) => b.maxId - a.maxId);
}

function record(store: Store, id: number): Message {
  return getMessageRecord(internals(store).tables, id)!;
}

/** Stores new versions of messages as an edit, move or deletion would (actions/message-rewrite.ts). */
function rewrite(store: Store, changes: [number, ((m: Message) => Message) | null][]): void {
  const state = internals(store);
  const rewrites = changes
    .map(([id, change]) => {
      const before = record(store, id);
      return { before, after: change === null ? null : change(before) };
    })
    // A move to where the message already is changes nothing (and would write an undeclared change).
    .filter(({ before, after }) => after === null || JSON.stringify(after) !== JSON.stringify(before));
  if (rewrites.length > 0) state.write((ctx) => rewriteMessages(state, ctx, rewrites));
}

function world() {
  t = tempStore();
  const seeded = seedRealm(t.store);
  const { owner } = seeded;
  const send = (channel: string, topic: string, content = "hello") =>
    t.store.sendMessage({ senderId: owner.id, to: { type: "channel", channel, topic }, content }).id;
  return { ...seeded, send };
}

describe("channel topics", () => {
  it("lists a public channel's topics newest first, one per case-folded name, spelled as the newest message", () => {
    const { owner, alice, general, send } = world();
    const lunch1 = send("general", "lunch");
    const empty = send("general", "");
    const other = send("general", "other");
    const lunch2 = send("general", "LUNCH");
    const expected = [
      { name: "LUNCH", maxId: lunch2 },
      { name: "other", maxId: other },
      { name: "", maxId: empty },
    ];
    expect(plain(t.store.channelTopics(alice.id, general.id))).toEqual(expected);
    expect(lunch1).toBeLessThan(empty);
    // Answered from the cache the second time, and after new messages.
    expect(plain(t.store.channelTopics(owner.id, general.id))).toEqual(expected);
    const other2 = send("general", "Other");
    const fresh = send("general", "fresh");
    expect(plain(t.store.channelTopics(alice.id, general.id))).toEqual([
      { name: "fresh", maxId: fresh },
      { name: "Other", maxId: other2 },
      { name: "LUNCH", maxId: lunch2 },
      { name: "", maxId: empty },
    ]);
    expect(plain(t.store.channelTopics(alice.id, general.id))).toEqual(reference(t.store, alice.id, general.id));
  });

  it("lists every topic of a public channel to a member who is not subscribed, and none to a guest", () => {
    const { owner, bob, guest, realm, send } = world();
    t.store.subscribe(owner.id, { channels: [{ name: "random" }], principals: [owner.id] });
    const id = internals(t.store).channelByName.get(`${realm.id}:RANDOM`)!;
    const a = send("random", "a");
    expect(plain(t.store.channelTopics(bob.id, id))).toEqual([{ name: "a", maxId: a }]);
    expect(() => t.store.channelTopics(guest.id, id)).toThrow(new BadRequestError("Invalid channel ID"));
    expect(() => t.store.channelTopics(bob.id, 999_999)).toThrow(new BadRequestError("Invalid channel ID"));
  });

  it("gives a protected-history channel's subscriber the topics of messages they received, at their newest", () => {
    const { owner, alice, bob, secret, send } = world();
    const early = send("secret", "early");
    // Bob joins, hears part of "dinner", leaves while it goes on, and comes back.
    t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [bob.id] });
    const dinner1 = send("secret", "Dinner");
    const shared = send("secret", "shared");
    t.store.unsubscribe(owner.id, ["secret"], [bob.id]);
    expect(() => t.store.channelTopics(bob.id, secret.id)).toThrow(new BadRequestError("Invalid channel ID"));
    const dinner2 = send("secret", "DINNER");
    t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [bob.id] });
    const later = send("secret", "later");

    expect(plain(t.store.channelTopics(owner.id, secret.id))).toEqual([
      { name: "later", maxId: later },
      { name: "DINNER", maxId: dinner2 },
      { name: "shared", maxId: shared },
      { name: "early", maxId: early },
    ]);
    expect(plain(t.store.channelTopics(bob.id, secret.id))).toEqual([
      { name: "later", maxId: later },
      { name: "shared", maxId: shared },
      { name: "Dinner", maxId: dinner1 },
    ]);
    for (const user of [owner, alice, bob])
      expect(plain(t.store.channelTopics(user.id, secret.id))).toEqual(reference(t.store, user.id, secret.id));
  });

  it("refuses a private channel to whoever is not subscribed, administrators included", () => {
    const { owner, alice, bob, realm } = world();
    t.store.subscribe(alice.id, {
      channels: [{ name: "alice-only" }],
      principals: [alice.id],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
    });
    const id = internals(t.store).channelByName.get(`${realm.id}:ALICE-ONLY`)!;
    const m = t.store.sendMessage({
      senderId: alice.id,
      to: { type: "channel", channel: "alice-only", topic: "t" },
      content: "x",
    });
    expect(plain(t.store.channelTopics(alice.id, id))).toEqual([{ name: "t", maxId: m.id }]);
    for (const user of [owner, bob])
      expect(() => t.store.channelTopics(user.id, id)).toThrow(new BadRequestError("Invalid channel ID"));
    // Shared history: a new subscriber sees the topics from before they joined.
    t.store.subscribe(alice.id, { channels: [{ name: "alice-only" }], principals: [bob.id] });
    expect(plain(t.store.channelTopics(bob.id, id))).toEqual([{ name: "t", maxId: m.id }]);
  });

  it("refuses an archived channel", () => {
    const { owner, general } = world();
    const state = internals(t.store);
    const archived: TopicReader = Object.create(state, {
      channelDirectory: {
        value: {
          ...state.channelDirectory,
          get: (id: number) => ({ ...state.channelDirectory.get(id)!, isArchived: true }),
        },
      },
    }) as TopicReader;
    const index = new ChannelTopicIndex(state, state);
    expect(() => channelTopics(archived, new ReceivedSets(state), index, owner, general.id)).toThrow(
      new BadRequestError("Invalid channel ID"),
    );
    index.dispose();
  });

  it("follows topic moves, channel moves, respellings and deletions of cached lists", () => {
    const { owner, alice, general, secret, send } = world();
    const a1 = send("general", "a");
    const a2 = send("general", "a");
    const b1 = send("general", "b");
    const s1 = send("secret", "s");
    const lists = () => ({
      general: plain(t.store.channelTopics(owner.id, general.id)),
      secret: plain(t.store.channelTopics(owner.id, secret.id)),
    });
    expect(lists()).toEqual({
      general: [
        { name: "b", maxId: b1 },
        { name: "a", maxId: a2 },
      ],
      secret: [{ name: "s", maxId: s1 }],
    });
    // The newest message of "a" moves to "b": "a" falls back to its older message.
    rewrite(t.store, [[a2, (m) => ({ ...m, topic: "b" })]]);
    expect(lists().general).toEqual([
      { name: "b", maxId: b1 },
      { name: "a", maxId: a1 },
    ]);
    // "b" respelled at its newest message; then the whole of "a" moves to the private channel.
    rewrite(t.store, [[b1, (m) => ({ ...m, topic: "B" })]]);
    rewrite(t.store, [[a1, (m) => ({ ...m, recipient: { type: "channel", channelId: secret.id } })]]);
    expect(lists()).toEqual({
      general: [{ name: "B", maxId: b1 }],
      secret: [
        { name: "s", maxId: s1 },
        { name: "a", maxId: a1 },
      ],
    });
    // Deleting a topic's last message removes the topic.
    rewrite(t.store, [
      [a1, null],
      [b1, null],
    ]);
    expect(lists()).toEqual({ general: [{ name: "b", maxId: a2 }], secret: [{ name: "s", maxId: s1 }] });
    for (const c of [general.id, secret.id])
      expect(plain(t.store.channelTopics(alice.id, c))).toEqual(reference(t.store, alice.id, c));
    const reopened = t.reopen();
    expect(plain(reopened.channelTopics(owner.id, general.id))).toEqual(lists().general);
  });

  it("agrees with the reference after random sends, moves and deletions read between them", () => {
    const { owner, alice, bob, general, secret, send } = world();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const names = ["x", "X", "y", "", "zed", "Zed", "w"];
    const channels = [general, secret];
    const live: number[] = [];
    let subscribed = false;
    for (let step = 0; step < 400; step++) {
      const r = random(10);
      if (r < 5 || live.length < 5) {
        live.push(send(channels[random(2)]!.name, names[random(names.length)]!));
      } else if (r < 7) {
        const ids = [...new Set([live[random(live.length)]!, live[random(live.length)]!])];
        const topic = names[random(names.length)]!;
        const channelId = channels[random(2)]!.id;
        rewrite(
          t.store,
          ids.map((id) => [id, (m: Message) => ({ ...m, topic, recipient: { type: "channel", channelId } })]),
        );
      } else if (r < 8) {
        const at = random(live.length);
        rewrite(t.store, [[live[at]!, null]]);
        live.splice(at, 1);
      } else if (r < 9) {
        if (subscribed) t.store.unsubscribe(owner.id, ["secret"], [bob.id]);
        else t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [bob.id] });
        subscribed = !subscribed;
      }
      if (step % 7 !== 0) continue;
      for (const user of [owner, alice, bob])
        for (const channel of channels) {
          if (channel === secret && user === bob && !subscribed) continue;
          expect(plain(t.store.channelTopics(user.id, channel.id)), `step ${step}`).toEqual(
            reference(t.store, user.id, channel.id),
          );
        }
    }
  });

  it("builds a list again when more messages arrived than it holds topics", () => {
    const { owner, general, send } = world();
    send("general", "old");
    expect(t.store.channelTopics(owner.id, general.id)).toHaveLength(1);
    const ids: number[] = [];
    t.store.batch(() => {
      for (let i = 0; i < 1100; i++) ids.push(send("general", `t${i % 3}`));
    });
    expect(plain(t.store.channelTopics(owner.id, general.id))).toEqual(reference(t.store, owner.id, general.id));
    expect(t.store.channelTopics(owner.id, general.id)[0]!.maxId).toBe(ids[ids.length - 1]);
  });
});

describe("channel topics built a page per turn", () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it("agrees with the reference when sends, moves and deletions land between its pages", async () => {
    const { owner, alice, general, secret, send } = world();
    const state = internals(t.store);
    const live: number[] = [];
    for (let i = 0; i < 40; i++) live.push(send(i % 4 === 0 ? "secret" : "general", `topic ${i % 25}`));
    let seed = 11;
    // The high bits: an LCG's low bits repeat with a short period.
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    for (let round = 0; round < 12; round++) {
      // A fresh index: nothing cached, three topics a page.
      const index = new ChannelTopicIndex(state, state, undefined, 3);
      let answer: readonly ChannelTopic[] | null = null;
      const user = round % 2 === 0 ? owner : alice;
      void channelTopicsAsync(state, new ReceivedSets(state), index, user, general.id).then((a) => (answer = a));
      let turns = 0;
      while (answer === null) {
        const r = random(4);
        if (r === 0) live.push(send("general", `topic ${random(30)}`));
        else if (r === 1) {
          const id = live[random(live.length)]!;
          const channelId = random(3) === 0 ? secret.id : general.id;
          rewrite(t.store, [
            [id, (m) => ({ ...m, topic: `topic ${random(30)}`, recipient: { type: "channel", channelId } })],
          ]);
        } else if (r === 2 && live.length > 10) rewrite(t.store, [[live.splice(random(live.length), 1)[0]!, null]]);
        // Another channel's list read meanwhile takes the moves noted so far.
        channelTopics(state, new ReceivedSets(state), index, owner, secret.id);
        await nextTurn();
        turns++;
      }
      expect(turns, `round ${round}`).toBeGreaterThan(2);
      expect(plain(answer!), `round ${round}`).toEqual(reference(t.store, user.id, general.id));
      // The list it left in the cache follows later changes as any other.
      live.push(send("general", "afterwards"));
      expect(plain(await channelTopicsAsync(state, new ReceivedSets(state), index, user, general.id))).toEqual(
        reference(t.store, user.id, general.id),
      );
    }
  });

  it("filters a protected channel's topics a page per turn, as the one-turn list does", async () => {
    const { owner, alice, bob, secret, send } = world();
    const state = internals(t.store);
    for (let i = 0; i < 20; i++) send("secret", `topic ${i}`);
    t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [bob.id] });
    for (let i = 0; i < 20; i += 3) send("secret", `topic ${i}`);
    for (const user of [owner, alice, bob]) {
      const index = new ChannelTopicIndex(state, state, undefined, 4);
      const paged = await channelTopicsAsync(state, new ReceivedSets(state), index, user, secret.id);
      expect(plain(paged)).toEqual(reference(t.store, user.id, secret.id));
    }
    // Bob joined later: only the topics written to since.
    const index = new ChannelTopicIndex(state, state, undefined, 4);
    expect(await channelTopicsAsync(state, new ReceivedSets(state), index, bob, secret.id)).toHaveLength(7);
  });
});
