/**
 * A channel's first_message_id after a deletion reaches everyone who was told the
 * first one: the events oracle (test/realtime/events-oracle.test.ts) found an
 * administrator of a private channel left with a deleted message's ID.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import type { EngineEvent, EventBatch } from "../../../src/engine/index.js";
import { tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
beforeEach(() => {
  t = tempStore({ now: () => 1_700_000_000 });
});
afterEach(() => t.cleanup());

function audiences(batches: readonly EventBatch[], type: EngineEvent["type"]): number[][] {
  return batches.flatMap((b) => b.deliveries.filter((d) => d.event.type === type).map((d) => [...d.audience].sort()));
}

it("tells the channel's viewers of first_message_id after a deletion, as after the first send", async () => {
  const s = t.store;
  const { realm, owner } = s.createRealm({
    subdomain: "",
    name: "R",
    owner: { email: "owner@test.dev", fullName: "Olive Owner" },
  });
  const admin = s.createUser({ realmId: realm.id, email: "admin@test.dev", fullName: "Ada Admin", role: 200 });
  const bob = s.createUser({ realmId: realm.id, email: "bob@test.dev", fullName: "Bob Birch" });
  const shared = s.subscribe(owner.id, {
    channels: [{ name: "shared" }],
    principals: [owner.id, bob.id],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
  }).createdChannelIds[0]!;
  const seen: EventBatch[] = [];
  s.onEvents((b) => seen.push(b));
  const { id } = s.sendMessage({
    senderId: bob.id,
    to: { type: "channel", channel: shared, topic: "t" },
    content: "x",
  });
  const [onSend] = audiences(seen, "stream");
  expect(onSend).toContain(admin.id);
  seen.length = 0;
  await s.deleteMessage(bob.id, id);
  expect(audiences(seen, "stream")).toEqual([onSend]);
});
