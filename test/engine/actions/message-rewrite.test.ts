/**
 * The one primitive every edit, move and deletion stores through: after a rewrite the
 * narrows answer from the new version, verify (which rebuilds every derived index from
 * the records) finds no difference, and a reopen reads the same.
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import { rewriteMessages } from "../../../src/engine/actions/message-rewrite.js";
import { getMessageRecord } from "../../../src/engine/storage/message-records.js";
import type { Message, Store } from "../../../src/engine/index.js";
import type { ChangeSet } from "../../../src/engine/events/change-set.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t?.cleanup());

function ids(store: Store, userId: number, narrow: unknown): number[] {
  return store
    .getMessages(userId, { narrow, anchor: "newest", numBefore: 100, numAfter: 0 })
    .messages.map((v) => v.message.id);
}

function record(store: Store, id: number): Message {
  return getMessageRecord(internals(store).tables, id)!;
}

describe("rewriteMessages", () => {
  it("moves a message's topic, channel and search terms and deletes another, keeping verify clean", () => {
    t = tempStore();
    const { owner, general, secret } = seedRealm(t.store);
    const send = (channel: string, topic: string, content: string) =>
      t.store.sendMessage({ senderId: owner.id, to: { type: "channel", channel, topic }, content }).id;
    const a = send("general", "lunch", "pizza today");
    const b = send("general", "lunch", "pasta tomorrow");
    const c = send("general", "other", "pizza again");
    const state = internals(t.store);

    state.write((ctx) => {
      const before = record(t.store, a);
      rewriteMessages(state, ctx, [
        {
          before,
          after: {
            ...before,
            recipient: { type: "channel", channelId: secret.id },
            topic: "✔ dinner",
            content: "salad today",
            renderedContent: "<p>salad today</p>",
          },
        },
        { before: record(t.store, c), after: null },
      ]);
    });

    const topic = (channel: string, name: string) => [
      { operator: "channel", operand: channel },
      { operator: "topic", operand: name },
    ];
    expect(ids(t.store, owner.id, topic("general", "lunch"))).toEqual([b]);
    expect(ids(t.store, owner.id, topic("secret", "✔ dinner"))).toEqual([a]);
    expect(ids(t.store, owner.id, [{ operator: "is", operand: "resolved" }])).toEqual([a]);
    expect(ids(t.store, owner.id, [{ operator: "search", operand: "pizza" }])).toEqual([]);
    expect(ids(t.store, owner.id, [{ operator: "search", operand: "salad" }])).toEqual([a]);
    expect(ids(t.store, owner.id, [{ operator: "channel", operand: "general" }])).toEqual([b]);
    expect(record(t.store, c)).toBeUndefined();
    expect(t.store.verify().differences).toEqual([]);
    expect(t.store.verify().problems).toEqual([]);
    expect(general.id).not.toBe(secret.id);

    const store = t.reopen();
    expect(ids(store, owner.id, topic("secret", "✔ dinner"))).toEqual([a]);
    expect(ids(store, owner.id, [])).toEqual([a, b]);
    expect(store.verify().differences).toEqual([]);
  });

  it("names each rewritten message in the write's change set with the fields it changed, interleaved or not", () => {
    t = tempStore();
    const { owner, secret } = seedRealm(t.store);
    const send = (content: string) =>
      t.store.sendMessage({ senderId: owner.id, to: { type: "channel", channel: "general", topic: "t" }, content }).id;
    const [m1, e, m2, d, m3] = ["one", "two", "three", "four", "five"].map(send) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const state = internals(t.store);
    const sets: ChangeSet[] = [];
    const stop = state.onChanges((changes) => sets.push(changes));
    state.write((ctx) => {
      const moved = (id: number) => {
        const before = record(t.store, id);
        return { before, after: { ...before, recipient: { type: "channel" as const, channelId: secret.id } } };
      };
      const edited = record(t.store, e);
      // Moves, an edit and a deletion interleaved: the plan declares them grouped by fields.
      rewriteMessages(state, ctx, [
        moved(m1),
        { before: edited, after: { ...edited, content: "deux", renderedContent: "<p>deux</p>" } },
        moved(m2),
        { before: record(t.store, d), after: null },
        moved(m3),
      ]);
    });
    stop();
    const fields = (id: number) => [...(sets[0]!.message.get(id)?.fields ?? [])].sort();
    for (const id of [m1, m2, m3]) expect(fields(id)).toEqual(["channel"]);
    expect(fields(e)).toEqual(["content"]);
    expect(fields(d)).toEqual(["deleted"]);
    expect(ids(t.store, owner.id, [{ operator: "channel", operand: "secret" }])).toEqual([m1, m2, m3]);
  });

  it("changes nothing when the write fails", () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    const a = t.store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: "general", topic: "lunch" },
      content: "pizza",
    }).id;
    const state = internals(t.store);
    expect(() =>
      state.write((ctx) => {
        rewriteMessages(state, ctx, [{ before: record(t.store, a), after: null }]);
        throw new Error("refused later in the same write");
      }),
    ).toThrow("refused later");
    expect(ids(t.store, owner.id, [{ operator: "search", operand: "pizza" }])).toEqual([a]);
    expect(record(t.store, a).content).toBe("pizza");
    expect(t.store.verify().differences).toEqual([]);
  });

  it("refreshes a reader's received sets when a message leaves or joins their channels", () => {
    t = tempStore();
    const { owner, bob, secret } = seedRealm(t.store);
    const send = (channel: string, content: string) =>
      t.store.sendMessage({ senderId: owner.id, to: { type: "channel", channel, topic: "t" }, content }).id;
    const inGeneral = send("general", "one");
    const inSecret = send("secret", "two");
    const state = internals(t.store);
    // Bob (general only) reads first: his received sets are cached from here on.
    expect(ids(t.store, bob.id, [])).toEqual([inGeneral]);
    expect(t.store.unreadSummary(bob.id).count).toBe(1);
    state.write((ctx) => {
      const out = record(t.store, inGeneral);
      const into = record(t.store, inSecret);
      rewriteMessages(state, ctx, [
        { before: out, after: { ...out, recipient: { type: "channel", channelId: secret.id } } },
        {
          before: into,
          after: {
            ...into,
            recipient: { type: "channel", channelId: out.recipient.type === "channel" ? out.recipient.channelId : 0 },
          },
        },
      ]);
    });
    expect(ids(t.store, bob.id, [])).toEqual([inSecret]);
    expect(t.store.unreadSummary(bob.id).streams.flatMap((s) => s.unreadMessageIds)).toEqual([inSecret]);
  });

  it("writes message_meta only when the place changes (a content edit's commit touches one table fewer)", () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    const id = t.store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: "general", topic: "lunch" },
      content: "pizza",
    }).id;
    const meta = internals(t.store).tables.messageMeta;
    const put = meta.putSync.bind(meta);
    const written: unknown[] = [];
    meta.putSync = (key: number, value: unknown) => {
      written.push(key);
      return put(key, value);
    };
    t.store.updateMessage(owner.id, id, { content: "pasta" });
    expect(written).toEqual([]);
    // A move writes it (and Notification Bot's notice, another message, its own).
    t.store.updateMessage(owner.id, id, { topic: "dinner" });
    expect(written.filter((key) => key === id)).toEqual([id]);
    const { recipient } = record(t.store, id);
    // With the topic registry row it now names (actions/topic-registry).
    const { topicRef } = record(t.store, id);
    expect(meta.get(id)).toEqual([recipient.type === "channel" ? recipient.channelId : null, "dinner", topicRef]);
    expect(t.store.verify().differences).toEqual([]);
  });
});
