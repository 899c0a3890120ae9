/**
 * The update_message audience of a move, asked of every user of the realm at delivery:
 * members of a channel with shared history are answered by membership, and the moved
 * target's record is read once, not once per user (a 10,000-user realm read it 10,000
 * times per move). Who is in it is move-messages-access.test.ts's.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { moveMessages } from "../../support/move.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t?.cleanup());

describe("a move's update_message audience", () => {
  it("reads the moved target's record at most once for the whole realm", () => {
    t = tempStore();
    const { realm, owner, alice, general } = seedRealm(t.store);
    const users: User[] = [];
    for (let i = 0; i < 40; i++)
      users.push(t.store.createUser({ realmId: realm.id, email: `u${i}@test.dev`, fullName: `User ${i}` }));
    // Half of them in "general" (shared history), the rest in no channel of the move.
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: users.slice(0, 20).map((u) => u.id) });
    t.store.subscribe(owner.id, { channels: [{ name: "elsewhere" }], principals: [owner.id, alice.id] });
    const id = t.store.sendMessage({
      senderId: alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "hello",
    }).id;
    const state = internals(t.store);
    const moved = moveMessages(t.store, owner.id, id, { topic: "renamed" });
    expect(moved).not.toBeNull();
    const reads = vi.spyOn(state.tables.messages, "get");
    const members = [owner, alice, ...users].filter((u) => moved!.audience.has(u.id)).map((u) => u.id);
    expect(members).toEqual([owner.id, alice.id, ...users.slice(0, 20).map((u) => u.id)]);
    expect(reads.mock.calls.filter(([key]) => key === id).length).toBeLessThanOrEqual(1);
    expect(general.historyPublicToSubscribers).toBe(true);
  });
});
