/**
 * The engine's import actions for what `parley import` carries beyond messages
 * (invitations, presence, scheduled messages and reminders in every state): written as
 * given, and every malformed or foreign input refused with a 400 that changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ImportedInvite, ImportedScheduledMessage, Store } from "../../../src/engine/index.js";
import { expectFailsUnchanged } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

const NOW = 1_700_000_000;
let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;

beforeEach(() => {
  t = tempStore({ now: () => NOW });
  s = t.store;
  w = seedRealm(s);
});
afterEach(() => t.cleanup());

const bad = (message: string) => ({ code: "BAD_REQUEST", message });

describe("importInvite", () => {
  const invite = (overrides: Partial<ImportedInvite> = {}): ImportedInvite => ({
    kind: "email",
    email: "new@test.dev",
    invitedById: w.owner.id,
    invitedAs: 400,
    channelIds: [w.general.id],
    groupIds: [],
    includeRealmDefaultSubscriptions: false,
    notifyReferrerOnJoin: true,
    welcomeMessageCustomText: null,
    invitedAt: NOW - 100,
    expiresAt: NOW + 3600,
    key: "abcdefghijklmnopqrstuvwx",
    status: "pending",
    ...overrides,
  });

  it("keeps the key, times and status: the old link opens the join page", () => {
    const made = s.importInvite(w.realm.id, invite());
    expect(s.usableInvite(w.realm.id, "abcdefghijklmnopqrstuvwx").id).toBe(made.id);
    expect(s.listInvites(w.owner.id)).toEqual([
      expect.objectContaining({ invitedAt: NOW - 100, expiresAt: NOW + 3600 }),
    ]);
  });

  it("refuses a key in use or of another form, a foreign channel, inviter or role, changing nothing", () => {
    s.importInvite(w.realm.id, invite());
    const other = s.createRealm({ subdomain: "other", name: "Other", owner: { email: "o@o.dev", fullName: "Oscar" } });
    const elsewhere = s.subscribe(other.owner.id, { channels: [{ name: "theirs" }] }).createdChannelIds[0]!;
    const key = "zyxwvutsrqponmlkjihgfedc";
    const cases: [Partial<ImportedInvite>, string][] = [
      [{}, "Invalid confirmation key"],
      [{ key: "short" }, "Invalid confirmation key"],
      [{ key, channelIds: [elsewhere] }, "Invalid channel"],
      [{ key, invitedById: other.owner.id }, "Invalid inviter"],
      [{ key, invitedAs: 500 as ImportedInvite["invitedAs"] }, "Invalid invited_as"],
      [{ key, email: "not an address" }, "Invalid email"],
      [{ key, kind: "multiuse" }, "Invalid email"],
    ];
    for (const [change, message] of cases)
      expectFailsUnchanged(s, () => s.importInvite(w.realm.id, invite(change)), bad(message));
  });
});

describe("restorePresence", () => {
  it("sets the exported times exactly (a ping would round them) and refuses bots and bad times", () => {
    s.restorePresence(w.alice.id, NOW - 30, NOW - 10);
    expect(s.userPresence(w.owner.id, w.alice.id)).toMatchObject({ lastActive: NOW - 30, lastConnected: NOW - 10 });
    const bot = s.createUser({
      realmId: w.realm.id,
      email: "b-bot@test.dev",
      fullName: "Beep",
      bot: { type: 1, ownerId: w.alice.id },
    });
    expect(() => s.restorePresence(bot.id, null, NOW)).toThrow("Presence is not supported for bot users.");
    expect(() => s.restorePresence(w.bob.id, null, Number.NaN)).toThrow("Invalid presence times");
  });
});

describe("importScheduledMessage", () => {
  const scheduled = (overrides: Partial<ImportedScheduledMessage> = {}): ImportedScheduledMessage => ({
    to: { type: "channel", channelId: w.general.id, topic: "later" },
    content: "hello",
    deliverAt: NOW - 3600,
    client: "website",
    failed: false,
    failureMessage: null,
    delivered: false,
    deliveredMessageId: null,
    ...overrides,
  });

  it("keeps a failed one whose channel the sender lost, and a delivered one with its message", () => {
    const sent = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
    });
    s.unsubscribe(w.owner.id, ["secret"], [w.alice.id]);
    const failed = s.importScheduledMessage(
      w.alice.id,
      scheduled({
        to: { type: "channel", channelId: w.secret.id, topic: "t" },
        failed: true,
        failureMessage: "Not authorized",
      }),
    );
    const delivered = s.importScheduledMessage(w.alice.id, scheduled({ delivered: true, deliveredMessageId: sent.id }));
    expect(s.scheduledMessageRecords(w.alice.id)).toEqual([
      expect.objectContaining({ id: failed.id, failed: true, failureMessage: "Not authorized", delivered: false }),
      expect.objectContaining({ id: delivered.id, delivered: true, deliveredMessageId: sent.id }),
    ]);
    // Neither is due: the next delivery round sends nothing.
    expect(s.deliverDueScheduledMessages(NOW + 10)).toEqual([]);
  });

  it("refuses a pending one the sender may not send, and another realm's message, changing nothing", () => {
    s.unsubscribe(w.owner.id, ["secret"], [w.alice.id]);
    const other = s.createRealm({ subdomain: "other", name: "Other", owner: { email: "o@o.dev", fullName: "Oscar" } });
    s.subscribe(other.owner.id, { channels: [{ name: "theirs" }] });
    const foreign = s.sendMessage({
      senderId: other.owner.id,
      to: { type: "channel", channel: "theirs", topic: "t" },
      content: "y",
    });
    let refusal = "";
    try {
      s.importScheduledMessage(w.alice.id, scheduled({ to: { type: "channel", channelId: w.secret.id, topic: "t" } }));
    } catch (error) {
      refusal = (error as Error).message;
    }
    expect(refusal).not.toBe("");
    expect(s.scheduledMessageRecords(w.alice.id)).toEqual([]);
    expectFailsUnchanged(
      s,
      () => s.importScheduledMessage(w.alice.id, scheduled({ delivered: true, deliveredMessageId: foreign.id })),
      bad("Invalid message(s)"),
    );
  });
});
