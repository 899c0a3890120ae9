/**
 * Moves: a case the reference-model property test (narrow.property.test.ts, its
 * mutations) found, kept here as a plain regression.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
beforeEach(() => {
  t = tempStore({ now: () => 1_700_000_000 });
});
afterEach(() => t.cleanup());

function realm() {
  const s = t.store;
  const { realm, owner } = s.createRealm({
    subdomain: "",
    name: "R",
    owner: { email: "owner@test.dev", fullName: "Olive Owner" },
  });
  const ben = s.createUser({ realmId: realm.id, email: "ben@test.dev", fullName: "Ben Birch" });
  return { s, owner, ben };
}

const noNotices = { sendNotificationToOldThread: false, sendNotificationToNewThread: false };

describe("moves", () => {
  it("the resolve notice is unread for a sender the move just made follow the topic, policies cached or not", () => {
    const { s, owner, ben } = realm();
    const c = s.subscribe(owner.id, { channels: [{ name: "general" }], principals: [owner.id, ben.id] })
      .createdChannelIds[0]!;
    const first = s.sendMessage({
      senderId: ben.id,
      to: { type: "channel", channel: c, topic: "lunch" },
      content: "a",
    });
    s.sendMessage({ senderId: owner.id, to: { type: "channel", channel: c, topic: "lunch" }, content: "b" });
    // first_unread reads Ben's topic policies into their cache.
    s.getMessages(ben.id, { anchor: "first_unread", numBefore: 10, numAfter: 10 });
    // Ben's message alone starts the resolved topic: Ben follows it, so its notice stays unread for him.
    s.updateMessage(owner.id, first.id, { topic: "✔ lunch", propagateMode: "change_one", ...noNotices });
    expect(s.userTopics(ben.id).map((p) => [p.topic, p.policy])).toContainEqual(["✔ lunch", 3]);
    const topic = s.getMessages(ben.id, {
      anchor: "newest",
      numBefore: 10,
      numAfter: 0,
      narrow: [["topic", "✔ lunch"]],
    });
    expect(topic.messages.map((m) => [m.message.id, m.flags])).toEqual([
      [first.id, []],
      [first.id + 2, []],
    ]);
  });
});

describe("unread_msgs after a case-only rename", () => {
  it("lists the topic under its oldest unread message's spelling, as Zulip's aggregate_streams does", () => {
    const { s, owner, ben } = realm();
    const c = s.subscribe(owner.id, { channels: [{ name: "general" }], principals: [owner.id, ben.id] })
      .createdChannelIds[0]!;
    const first = s.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: c, topic: "lunch" },
      content: "a",
    });
    const second = s.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: c, topic: "lunch" },
      content: "b",
    });
    expect(s.unreadSummary(ben.id).streams).toEqual([
      { streamId: c, topic: "lunch", unreadMessageIds: [first.id, second.id] },
    ]);
    s.updateMessage(owner.id, first.id, { topic: "Lunch", propagateMode: "change_all", ...noNotices });
    expect(s.unreadSummary(ben.id).streams).toEqual([
      { streamId: c, topic: "Lunch", unreadMessageIds: [first.id, second.id] },
    ]);
  });
});
