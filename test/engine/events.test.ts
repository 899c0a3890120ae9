/**
 * The engine's typed events: released after commit with their audiences computed under
 * the access rules, one change-log sequence number per write (batches included),
 * nothing for failed writes, nothing while opening a store.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { EventBatch } from "../../src/engine/index.js";
import { changeLogIds, changesSince, packIds, unpackIds } from "../../src/engine/events/change-log.js";
import { internals } from "../../src/engine/internal.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore;
afterEach(() => t.cleanup());

function record(store: TempStore["store"]): EventBatch[] {
  const seen: EventBatch[] = [];
  store.onEvents((batch) => seen.push(batch));
  return seen;
}

const audience = (batch: EventBatch, i = 0) => [...batch.deliveries[i]!.audience].sort((a, b) => a - b);

describe("engine events", () => {
  it("a private channel's message reaches its subscribers only; a DM its participants", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen = record(t.store);
    t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "secret", topic: "x" },
      content: "hidden",
    });
    const message = seen.find((b) => b.deliveries.some((d) => d.event.type === "message"))!;
    const delivery = message.deliveries.find((d) => d.event.type === "message")!;
    expect([...delivery.audience].sort((a, b) => a - b)).toEqual([w.owner.id, w.alice.id]);
    expect(delivery.audience.has(w.bob.id)).toBe(false);
    expect(delivery.audience.has(w.guest.id)).toBe(false);
    seen.length = 0;
    t.store.sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "hi" });
    expect(audience(seen[0]!)).toEqual([w.alice.id, w.bob.id].sort((a, b) => a - b));
  });

  it("a new public channel is announced to users who can see it (not guests, not another realm)", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const other = t.store.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "o@other.dev", fullName: "Other Owner" },
    });
    const seen = record(t.store);
    t.store.subscribe(w.alice.id, { channels: [{ name: "fresh" }] });
    const create = seen[0]!.deliveries.find((d) => d.event.type === "stream")!;
    const who = [...create.audience];
    expect(who).toContain(w.bob.id);
    expect(who).not.toContain(w.guest.id);
    expect(who).not.toContain(other.owner.id);
  });

  it("one change-log sequence number per write, in the same transaction; a batch is one write", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen = record(t.store);
    const before = [...changesSince(internals(t.store).tables, 0)].length;
    t.store.batch(() => {
      for (let i = 0; i < 3; i++)
        t.store.sendMessage({
          senderId: w.owner.id,
          to: { type: "channel", channel: "general", topic: "b" },
          content: `m${i}`,
        });
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.deliveries.filter((d) => d.event.type === "message")).toHaveLength(3);
    const log = [...changesSince(internals(t.store).tables, 0)];
    expect(log).toHaveLength(before + 1);
    expect(log[log.length - 1]!.seq).toBe(seen[0]!.seq);
    expect(log[log.length - 1]!.entry.changes.filter((c) => c[0] === "message")).toHaveLength(3);
  });

  it("a long flag change is logged packed and reads back as the same IDs; a short one as plain IDs", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const sent: number[] = [];
    t.store.batch(() => {
      for (let i = 0; i < 70; i++)
        sent.push(
          t.store.sendMessage({
            senderId: w.owner.id,
            to: { type: "channel", channel: "general", topic: `t${i % 3}` },
            content: `m${i}`,
          }).id,
        );
    });
    const seen = record(t.store);
    const lastItem = () => [...changesSince(internals(t.store).tables, 0)].at(-1)!.entry.changes[0]!;
    expect(t.store.markTopicAsRead(w.alice.id, w.general.id, null).updatedCount).toBe(70);
    const packed = lastItem();
    expect(packed.slice(0, 2)).toEqual(["update_message_flags", "add:read"]);
    expect(packed[2]).toBeInstanceOf(Uint8Array);
    expect(changeLogIds(packed)).toEqual(sent);
    const released = seen[0]!.deliveries[0]!.event;
    expect(released.type === "update_message_flags" ? released.messages : null).toEqual(sent);
    t.store.updateFlags(w.alice.id, sent.slice(0, 2), "starred", "add");
    expect(lastItem()).toEqual(["update_message_flags", "add:starred", ...sent.slice(0, 2)]);
    expect(changeLogIds(lastItem())).toEqual(sent.slice(0, 2));
  });

  it("packed ID lists round-trip, gaps of every varint length included", () => {
    const ids = [1, 2, 130, 20_000, 2_000_000, 300_000_000, 0xffffffff];
    expect(unpackIds(packIds(ids))).toEqual(ids);
    expect(packIds([5, 6, 7]).length).toBe(3);
    expect(unpackIds(packIds([]))).toEqual([]);
  });

  it("a failed batch or write releases nothing; opening a store releases nothing", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen = record(t.store);
    expect(() =>
      t.store.batch(() => {
        t.store.sendMessage({
          senderId: w.owner.id,
          to: { type: "channel", channel: "general", topic: "b" },
          content: "kept?",
        });
        throw new Error("abort the batch");
      }),
    ).toThrow("abort the batch");
    expect(() =>
      t.store.sendMessage({ senderId: w.owner.id, to: { type: "channel", channel: "nope", topic: "b" }, content: "x" }),
    ).toThrow();
    expect(seen).toEqual([]);
    const reopened = t.reopen();
    const after = record(reopened);
    expect(after).toEqual([]);
  });

  it("a listener that throws does not undo the write or stop other listeners", () => {
    const errors: unknown[] = [];
    t = tempStore({ onListenerError: (e) => errors.push(e) });
    const w = seedRealm(t.store);
    t.store.onEvents(() => {
      throw new Error("listener bug");
    });
    const seen = record(t.store);
    const { id } = t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "b" },
      content: "x",
    });
    expect(t.store.getMessage(w.owner.id, id).message.content).toBe("x");
    expect(seen).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });

  it("flag changes go to their user, with message_details when marking unread", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const { id } = t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "topic a" },
      content: "x",
    });
    t.store.updateFlags(w.alice.id, [id], "read", "add");
    const seen = record(t.store);
    t.store.updateFlags(w.alice.id, [id], "read", "remove");
    const d = seen[0]!.deliveries[0]!;
    expect([...d.audience]).toEqual([w.alice.id]);
    expect(d.event).toMatchObject({ type: "update_message_flags", op: "remove", flag: "read", messages: [id] });
    if (d.event.type !== "update_message_flags") throw new Error("unexpected event");
    expect(d.event.messageDetails?.get(id)).toMatchObject({
      recipient: { type: "channel", channelId: w.general.id },
      topic: "topic a",
    });
  });

  it("a message event's flags for each recipient equal what GET /messages then reports", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    t.store.createGroup(w.owner.id, { name: "team", members: [w.bob.id] });
    const seen = record(t.store);
    for (const content of ["hi @**Alice** and @*team*", "hey @**all**", "@**topic** ping", "plain"]) {
      seen.length = 0;
      const { id } = t.store.sendMessage({
        senderId: w.owner.id,
        to: { type: "channel", channel: "general", topic: "f" },
        content,
        client: "website",
      });
      const d = seen[0]!.deliveries.find((x) => x.event.type === "message")!;
      if (d.event.type !== "message") throw new Error("unexpected event");
      for (const userId of d.audience)
        expect([content, userId, [...d.event.flagsFor(userId)]]).toEqual([
          content,
          userId,
          [...t.store.getMessage(userId, id).flags],
        ]);
    }
  });
});
