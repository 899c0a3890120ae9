/**
 * Change sets: what each committed write changed, released to onChanges before the
 * write's events, for writes that tell clients nothing too; `everything` after a failed
 * write; written to the change log in the same transaction and read back identically;
 * and a write that wrote a table without declaring its kind fails (PARLEY_CHECK_CHANGES).
 */
import { afterEach, describe, expect, it } from "vitest";
import { CHANGE_KINDS, type ChangeSet } from "../../src/engine/index.js";
import { changeSetsSince, changesSince, decodeChangeSet, encodeChangeSet } from "../../src/engine/events/change-log.js";
import { ChangeSetBuilder } from "../../src/engine/events/change-set.js";
import { internals } from "../../src/engine/internal.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore;
afterEach(() => t.cleanup());

/** A change set as plain data, for comparisons (empty parts left out). */
function plain(set: ChangeSet): Record<string, unknown> {
  const out: Record<string, unknown> = { seq: set.seq, everything: set.everything };
  for (const kind of CHANGE_KINDS) {
    const part = set[kind] as ReadonlyMap<number, unknown>;
    if (part.size === 0) continue;
    out[kind] = [...part].sort(([a], [b]) => a - b).map(([id, value]) => [id, plainValue(value)]);
  }
  return out;
}

function plainValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Set) return [...value].sort();
  if (Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = plainValue(v);
  return out;
}

function record(store: TempStore["store"]): ChangeSet[] {
  const seen: ChangeSet[] = [];
  store.onChanges((set) => seen.push(set));
  return seen;
}

describe("change sets", () => {
  it("name what a write changed: messages with their realm and fields, flags per user, reactions", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen = record(t.store);
    const { id } = t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "hi",
    });
    expect(plain(seen[0]!)).toMatchObject({
      message: [[id, { realmId: w.realm.id, fields: ["added"] }]],
      everything: false,
    });
    expect(seen[0]!.seq).toBeGreaterThan(0);
    t.store.updateFlags(w.alice.id, [id], "starred", "add");
    expect(plain(seen[1]!)).toEqual({ seq: seen[1]!.seq, everything: false, flags: [[w.alice.id, [id]]] });
    t.store.addReaction(w.bob.id, id, { emojiName: "smile" });
    expect(plain(seen[2]!)).toMatchObject({ message: [[id, { realmId: w.realm.id, fields: ["reactions"] }]] });
    // The first direct message between two users stores their conversation too.
    const dm = t.store.sendMessage({
      senderId: w.alice.id,
      to: { type: "direct", users: [w.bob.id] },
      content: "psst",
    });
    const conversationId = t.store.findMessageRecord(dm.id)!.recipient;
    expect(conversationId.type).toBe("direct");
    expect(seen[3]!.conversation.get(conversationId.type === "direct" ? conversationId.conversationId : 0)?.op).toBe(
      "added",
    );
  });

  it("name users, subscriptions and groups with the fields that changed", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen = record(t.store);
    t.store.updateUser(w.owner.id, w.alice.id, { fullName: "Alice Liddell" });
    expect(plain(seen[0]!)["user"]).toEqual([[w.alice.id, { op: "changed", fields: ["fullName"] }]]);
    t.store.unsubscribe(w.bob.id, ["general"]);
    expect(plain(seen[1]!)["subscription"]).toEqual([[w.bob.id, [w.general.id]]]);
    const group = t.store.createGroup(w.owner.id, { name: "team", members: [w.alice.id] });
    expect(seen[2]!.group.get(group.id)?.op).toBe("added");
    t.store.setTopicPolicy(w.alice.id, w.general.id, "t", 1);
    expect(plain(seen[3]!)["userTopic"]).toEqual([[w.alice.id, null]]);
  });

  it("are released for writes that emit no client event (and for the one that now does)", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen = record(t.store);
    const events: unknown[] = [];
    t.store.onEvents((batch) => events.push(batch));
    t.store.setNewChannelAnnouncementsChannel(w.realm.id, w.general.id);
    expect(plain(seen[0]!)).toEqual({
      seq: seen[0]!.seq,
      everything: false,
      realm: [[w.realm.id, { op: "changed", fields: ["newChannelAnnouncementsChannelId"] }]],
    });
    t.store.regenerateApiKey(w.bob.id);
    expect(plain(seen[1]!)["user"]).toEqual([[w.bob.id, { op: "changed", fields: ["apiKey"] }]]);
    t.store.updatePresence(w.bob.id, "active");
    expect(plain(seen[2]!)).toEqual({
      seq: 0,
      everything: false,
      presence: [[w.bob.id, { op: "changed", fields: null }]],
    });
    t.store.flushPresence();
    expect(seen[3]!.presence.has(w.bob.id)).toBe(true);
    expect(seen[3]!.seq).toBeGreaterThan(0);
    // The announcements setting has its realm update event and the ping announced presence
    // (an ephemeral event); the API key and the presence flush told no client.
    const types = events.flatMap((b) =>
      (b as { deliveries: { event: { type: string; op?: string } }[] }).deliveries.map(
        (d) => `${d.event.type}${d.event.op === undefined ? "" : `:${d.event.op}`}`,
      ),
    );
    expect(new Set(types)).toEqual(new Set(["realm:update_announcements_channel", "presence"]));
  });

  it("come before the write's events", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const order: string[] = [];
    t.store.onEvents(() => order.push("events"));
    t.store.onChanges(() => order.push("changes"));
    t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
    });
    expect(order).toEqual(["changes", "events"]);
  });

  it("a failed batch releases `everything` and no set of its own", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen = record(t.store);
    expect(() =>
      t.store.batch(() => {
        t.store.sendMessage({
          senderId: w.owner.id,
          to: { type: "channel", channel: "general", topic: "b" },
          content: "undone",
        });
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(seen.map(plain)).toEqual([{ seq: 0, everything: true }]);
  });

  it("a batch is one change set; the change log reads back every released set", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const tables = internals(t.store).tables;
    const before = [...changesSince(tables, 0)].at(-1)?.seq ?? 0;
    const seen = record(t.store);
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
    t.store.markTopicAsRead(w.alice.id, w.general.id, null);
    t.store.updateUser(w.owner.id, w.bob.id, { fullName: "Robert" });
    t.store.setNewChannelAnnouncementsChannel(w.realm.id, null);
    t.store.subscribe(w.owner.id, { channels: [{ name: "fresh" }], principals: [w.alice.id, w.bob.id] });
    t.store.setTopicPolicy(w.bob.id, w.general.id, "t1", 3);
    expect(seen).toHaveLength(6);
    expect(seen[0]!.message.size).toBe(70);
    expect(seen[1]!.flags.get(w.alice.id)).toEqual(sent);
    const logged = [...changeSetsSince(tables, before)];
    expect(logged.map(plain)).toEqual(seen.map(plain));
    // Long ascending ID lists are packed in the log.
    const entries = [...changesSince(tables, before)];
    expect(entries[0]!.entry.set!.some((item) => item.at(-1) instanceof Uint8Array)).toBe(true);
    // A flag change's IDs are written once: the set refers to its event's item.
    expect(entries[1]!.entry.set).toEqual([["flags", w.alice.id, "=", 0]]);
  });

  it("messages named with the same fields share nothing a later field changes; the log groups and reads them back", () => {
    const builder = new ChangeSetBuilder();
    const moved = Array.from({ length: 100 }, (_, i) => 1000 + i);
    for (const id of moved) builder.add({ kind: "message", id, realmId: 1, fields: ["channel", "history"] });
    builder.messages(moved.slice(0, 10), 1, ["deleted"]);
    builder.message(1050, 1, "content");
    builder.message(1050, 2, "topic"); // the first realm named stays
    builder.message(7, 2, "added");
    const set = builder.build(5);
    const fieldsOf = (id: number) => [...set.message.get(id)!.fields].sort();
    expect(fieldsOf(1000)).toEqual(["channel", "deleted", "history"]);
    expect(fieldsOf(1010)).toEqual(["channel", "history"]);
    expect(fieldsOf(1050)).toEqual(["channel", "content", "history", "topic"]);
    expect(set.message.get(1050)!.realmId).toBe(1);
    expect(fieldsOf(1099)).toEqual(["channel", "history"]);
    expect(plainValue(set.message.get(7))).toEqual({ realmId: 2, fields: ["added"] });
    const encoded = encodeChangeSet(set);
    // One item per realm and fields: the 89 untouched moves together, packed.
    expect(encoded).toHaveLength(4);
    expect(plain(decodeChangeSet(5, { at: 1, changes: [], set: encoded }))).toEqual(plain(set));
  });

  it("an entry older than change sets reads as `everything`", () => {
    expect(decodeChangeSet(7, { at: 1, changes: [["message", "add", 3]] })).toMatchObject({ seq: 7, everything: true });
    expect(decodeChangeSet(8, { at: 1, changes: [], set: [["someFutureKind", 1]] })).toMatchObject({
      everything: true,
    });
  });
});

describe("the declared-change check", () => {
  it("fails a write that wrote a table but declared no change of its kind", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const state = internals(t.store);
    const realm = state.realms.get(w.realm.id)!;
    expect(() => state.write(() => state.tables.realms.putSync(realm.id, { ...realm, name: "Sneaky" }))).toThrow(
      /realms.*"realm"/,
    );
    expect(t.store.findRealm(w.realm.id)!.name).toBe(realm.name);
    expect(state.tables.realms.get(realm.id)).toMatchObject({ name: realm.name });
    // Declared, the same write commits.
    state.write((ctx) => {
      state.tables.realms.putSync(realm.id, { ...realm, name: "Open" });
      ctx.changed({ kind: "realm", id: realm.id, fields: ["name"] });
    });
    expect(state.tables.realms.get(realm.id)).toMatchObject({ name: "Open" });
  });

  it("is off when asked", () => {
    t = tempStore({ checkChanges: false });
    const w = seedRealm(t.store);
    const state = internals(t.store);
    const realm = state.realms.get(w.realm.id)!;
    expect(() =>
      state.write(() => state.tables.realms.putSync(realm.id, { ...realm, name: "Unchecked" })),
    ).not.toThrow();
  });
});
