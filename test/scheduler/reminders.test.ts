/**
 * Reminders through the scheduler on a manual clock: Notification Bot's direct message
 * with Zulip's text (channel and direct messages, notes, widgets, a note to oneself,
 * truncation), at its second and once, the reminder leaving the list with its remove
 * event, across a restart; a message deleted meanwhile reminded with the text of
 * creation; a deactivated user's reminder failed without a notice.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineEvent, Store } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { ManualClock } from "../../src/realtime/clock.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let clock: ManualClock;
let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let scheduler: Scheduler;
const T0 = 1_700_000_000;
const URL = "https://chat.example";

beforeEach(() => {
  clock = new ManualClock(T0 * 1000);
  t = tempStore({ now: () => Math.floor(clock.now() / 1000) });
  s = t.store;
  w = seedRealm(s);
  scheduler = new Scheduler(s, { clock });
});
afterEach(() => {
  scheduler.stop();
  t.cleanup();
});

const toChannel = (content: string, topic = "plans", senderId = w.alice.id) =>
  s.sendMessage({ senderId, to: { type: "channel", channel: "general", topic }, content }).id;
const toUsers = (content: string, users: number[], senderId = w.alice.id) =>
  s.sendMessage({ senderId, to: { type: "direct", users }, content }).id;
const remind = (messageId: number, note = "", userId = w.alice.id, deliverAt = T0 + 60) =>
  s.createReminder(userId, { messageId, deliverAt, note, client: "website", realmUrl: URL });

/** The newest message the user can see. */
const newest = (userId = w.alice.id) =>
  s.getMessages(userId, { anchor: "newest", numBefore: 1, numAfter: 0, narrow: [] }).messages[0]!.message;

describe("the reminder's text (Zulip's get_reminder_formatted_content)", () => {
  it("a channel message, with a note, linked absolutely and by its topic", () => {
    const id = toChannel("Let's meet {at} 5");
    const r = remind(id, "ask about it\n\n  ");
    const slug = `${w.general.id}-general`;
    expect(r.content).toBe(
      "You requested a reminder for the following message. Note:\n > ask about it\n\n" +
        `@_**Alice|${w.alice.id}** [said](${URL}/#narrow/channel/${slug}/topic/plans/near/${id}) in ` +
        `[#general > plans](#narrow/channel/${slug}/topic/plans/with/${id}):\n` +
        "```quote\nLet's meet {at} 5\n```",
    );
    expect(r.recipient).toEqual({ type: "direct", userIds: [w.alice.id] });
  });

  it("direct messages: to others, to oneself, widgets", () => {
    const { alice, bob, owner } = w;
    const dm = toUsers("hi Bob", [bob.id]);
    expect(remind(dm).content).toBe(
      "You requested a reminder for the following direct message.\n\n" +
        `@_**Alice|${alice.id}** [said](${URL}/#narrow/dm/${alice.id},${bob.id}/near/${dm}) to @_**Bob|${bob.id}**:\n` +
        "```quote\nhi Bob\n```",
    );
    const group = toUsers("/poll Lunch?", [alice.id, owner.id], bob.id);
    const ids = [alice.id, bob.id, owner.id].sort((a, b) => a - b).join(",");
    expect(remind(group).content).toBe(
      "You requested a reminder for the following direct message.\n\n" +
        `@_**Bob|${bob.id}** [sent](${URL}/#narrow/dm/${ids}-group/near/${group}) a poll to ` +
        `@_**Olive Owner|${owner.id}** and @_**Alice|${alice.id}**.`,
    );
    const self = toUsers("buy milk", [alice.id]);
    expect(remind(self).content).toBe(
      "You requested a reminder for the following direct message.\n\n" +
        `You [sent](${URL}/#narrow/dm/${alice.id}/near/${self}) a note to yourself:\n` +
        "```quote\nbuy milk\n```",
    );
    const todo = toUsers("/todo Chores", [alice.id]);
    expect(remind(todo).content).toBe(
      "You requested a reminder for the following direct message.\n\n" +
        `You [sent](${URL}/#narrow/dm/${alice.id}/near/${todo}) yourself a todo list.`,
    );
  });

  it("a message too long to quote whole is truncated to the message length limit", () => {
    const id = toUsers("x".repeat(10_000), [w.bob.id]);
    const content = remind(id).content;
    expect(content.length).toBe(10_000);
    expect(content.endsWith("x\n[message truncated]\n```")).toBe(true);
  });
});

describe("delivery", () => {
  it("Notification Bot sends it at its second, once; it leaves the list with a remove event", () => {
    const events: EngineEvent[] = [];
    s.onEvents((b) => events.push(...b.deliveries.map((d) => d.event)));
    scheduler.start();
    const id = toChannel("the plan");
    const r = remind(id, "read this");
    expect(s.reminders(w.alice.id).map((x) => x.id)).toEqual([r.id]);
    const before = s.lastMessageId;
    clock.advance(59_999);
    expect(s.lastMessageId).toBe(before);
    clock.advance(1);
    expect(s.lastMessageId).toBe(before + 1);
    const sent = newest();
    const bot = internals(s).users.get(sent.senderId)!;
    expect(bot.fullName).toBe("Notification Bot");
    expect(sent).toMatchObject({ content: r.content, dateSent: T0 + 60, client: "Internal" });
    expect(sent.recipient.type).toBe("direct");
    expect(s.getMessage(w.alice.id, sent.id).flags).not.toContain("read");
    expect(s.reminders(w.alice.id)).toEqual([]);
    expect(internals(s).scheduledMessages.get(r.id)).toMatchObject({ delivered: true, deliveredMessageId: sent.id });
    const kinds = events.map((e) => `${e.type}${"op" in e ? `:${e.op}` : ""}`);
    expect(kinds.filter((k) => k.startsWith("reminders"))).toEqual(["reminders:add", "reminders:remove"]);
    expect(kinds.indexOf("message")).toBeLessThan(kinds.indexOf("reminders:remove"));
    clock.advance(10_000);
    expect(s.lastMessageId).toBe(before + 1);
    // Not a scheduled message: its own endpoints neither list nor delete it.
    expect(s.scheduledMessages(w.alice.id)).toEqual([]);
    expect(() => s.deleteScheduledMessage(w.alice.id, r.id)).toThrow("Scheduled message does not exist");
  });

  it("a reminder due while the server was down goes out once after restart", () => {
    const r = remind(toChannel("before the restart"));
    s = t.reopen();
    clock.advance(120_000);
    const restarted = new Scheduler(s, { clock });
    restarted.start();
    const sent = newest();
    expect(sent.content).toBe(r.content);
    expect(s.reminders(w.alice.id)).toEqual([]);
    const last = s.lastMessageId;
    restarted.stop();
    s = t.reopen();
    new Scheduler(s, { clock }).runOnce();
    expect(s.lastMessageId).toBe(last);
    // The delivered reminder's message is Notification Bot's: verify accepts it.
    expect(s.verify().problems).toEqual([]);
  });

  it("the text is written again at delivery from the message as it is then", () => {
    const id = toChannel("draft plan");
    remind(id);
    s.updateMessage(w.alice.id, id, { content: "final plan" });
    scheduler.runOnce();
    clock.advance(60_000);
    scheduler.runOnce();
    expect(newest().content).toContain("```quote\nfinal plan\n```");
  });

  it("a message deleted meanwhile is reminded with the text of creation", async () => {
    const id = toChannel("soon gone");
    const r = remind(id);
    await s.deleteMessage(w.owner.id, id);
    clock.advance(60_000);
    scheduler.runOnce();
    expect(newest()).toMatchObject({ content: r.content });
    expect(s.reminders(w.alice.id)).toEqual([]);
  });

  it("a deactivated user's reminder fails quietly: no message, failed in the record", () => {
    const r = remind(toChannel("never mind"));
    s.deactivateUser(w.owner.id, w.alice.id);
    const last = s.lastMessageId;
    clock.advance(60_000);
    expect(scheduler.runOnce()).toEqual([
      { scheduledMessageId: r.id, messageId: null, failure: "Account is deactivated" },
    ]);
    expect(s.lastMessageId).toBe(last);
    expect(internals(s).scheduledMessages.get(r.id)).toMatchObject({ failed: true, delivered: false });
  });
});
