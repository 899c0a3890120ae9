/**
 * Missed-message emails end to end: messages sent over HTTP, the batch turned into
 * mail when the user's batching period ends (on an injected clock: the store's and the
 * batcher's move together), and the mail delivered by the mail sender to a real SMTP
 * server on loopback. Each trigger, each setting that turns it off, batching, reading
 * or deleting before the batch goes, and a restart in the middle of a batch.
 */
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import { internals } from "../../src/engine/internal.js";
import type { MissedEmailBatch, User } from "../../src/engine/types.js";
import { MailSender } from "../../src/mail/sender.js";
import { fromHeader, SmtpTransport } from "../../src/mail/transports.js";
import { realmUrl } from "../../src/push/payload.js";
import { ManualClock } from "../../src/realtime/clock.js";
import { MissedEmailBatcher } from "../../src/scheduler/missed-email-batcher.js";
import { startServer, type TestServer } from "../support/http.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../support/smtp.js";

const START_MS = 1_800_000_000_000;
let clock: ManualClock;
let s: TestServer;
let smtp: TestSmtp;

beforeEach(async () => {
  clock = new ManualClock(START_MS);
  s = await startServer({}, { now: () => Math.floor(clock.now() / 1000) });
  smtp = await startSmtp();
});
afterEach(async () => {
  s.close();
  await smtp.close();
});

const base = () => realmUrl(s.server.baseUrl, s.seed.realm);

/** One round of the batcher at the clock's time, then the mail sender to the loopback server. */
async function deliver(): Promise<ReceivedMail[]> {
  const store = s.t.store;
  const batcher = new MissedEmailBatcher(store, (realm) => realmUrl(s.server.baseUrl, realm), { clock });
  batcher.runOnce();
  const transport = new SmtpTransport({ ...DEFAULT_CONFIG, EMAIL_HOST: "127.0.0.1", EMAIL_PORT: smtp.port });
  const sender = new MailSender(store, transport, { from: (n) => fromHeader(DEFAULT_CONFIG, "chat.test", n), clock });
  const before = smtp.received.length;
  await sender.runOnce();
  sender.stop();
  // SMTP carries CRLF line ends.
  return smtp.received
    .slice(before)
    .map((m) => ({ ...m, text: m.text.replace(/\r\n/g, "\n"), html: m.html?.replace(/\r\n/g, "\n") ?? null }));
}

/** Moves both clocks past the default batching period (120 s). */
async function afterBatchingPeriod(): Promise<ReceivedMail[]> {
  clock.advance(121_000);
  return deliver();
}

async function call(user: User, method: string, path: string, params: Record<string, unknown> = {}) {
  const r = await s.call(user, method, path, params);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function send(user: User, params: Record<string, unknown>): Promise<number> {
  return (await call(user, "POST", "/messages", params))["id"] as number;
}

const toChannel = (topic: string, content: string) => ({ type: "stream", to: "general", topic, content });

describe("missed-message emails", () => {
  it("a direct message: one email after the batching period, Zulip's subject, body, links and no-reply footer", async () => {
    const { alice, bob } = s.seed;
    await send(bob, { type: "direct", to: [alice.id], content: "are you there?" });
    expect(s.t.store.missedEmailBatches()).toEqual([
      {
        userId: alice.id,
        dueAt: START_MS / 1000 + 120,
        items: [{ messageId: expect.any(Number), trigger: "direct_message", mentionedGroupId: null }],
      },
    ]);
    clock.advance(119_000);
    expect(await deliver()).toEqual([]);
    const [mail, more] = await afterBatchingPeriod();
    expect(more).toBeUndefined();
    expect(mail!.envelopeTo).toEqual(["alice@test.dev"]);
    expect(mail!.from).toBe("Zulip notifications <noreply@chat.test>");
    expect(mail!.subject).toBe("DMs with Bob");
    const narrow = `${base()}/#narrow/dm/${bob.id}-Bob`;
    expect(mail!.text).toBe(
      [
        "Bob: are you there?",
        "",
        "--",
        "",
        "Reply in Test Zulip:",
        "",
        narrow,
        "",
        "Do not reply to this email. This Zulip server is not configured to accept",
        "incoming emails. Help:",
        "https://zulip.readthedocs.io/en/latest/production/email-gateway.html",
        "",
        "Manage email preferences:",
        "",
        `${base()}/#settings/notifications`,
      ].join("\n"),
    );
    expect(mail!.html).toContain('<div class="missed_message"><p><b>Bob</b>: are you there?</p></div>');
    expect(mail!.html).toContain(`<a href="${narrow}">Reply in Test Zulip</a>`);
    expect(mail!.html).toContain("This Zulip server is not configured to accept incoming emails");
    expect(s.t.store.missedEmailBatches()).toEqual([]);
  });

  it("a group direct message names the other participants", async () => {
    const { alice, bob, owner } = s.seed;
    await send(bob, { type: "direct", to: [alice.id, owner.id], content: "all three" });
    const mails = await afterBatchingPeriod();
    const toAlice = mails.find((m) => m.envelopeTo[0] === "alice@test.dev")!;
    const others = [owner, bob].sort((a, b) => a.id - b.id);
    expect(toAlice.subject).toBe(`Group DMs with ${others[0]!.fullName} and ${others[1]!.fullName}`);
    expect(toAlice.text).toContain(`${base()}/#narrow/dm/${others.map((u) => u.id).join(",")}-group`);
    expect(mails.map((m) => m.envelopeTo[0]).sort()).toEqual(["alice@test.dev", "owner@test.dev"]);
  });

  it("personal, wildcard and group mentions, followed topics and alert words each send, with Zulip's reason", async () => {
    const { alice, bob } = s.seed;
    await call(alice, "POST", "/user_topics", {
      stream_id: s.seed.general.id,
      topic: "followed",
      visibility_policy: 3,
    });
    await call(alice, "POST", "/users/me/alert_words", { alert_words: JSON.stringify(["pineapple"]) });
    await call(s.seed.owner, "POST", "/user_groups/create", {
      name: "crew",
      description: "",
      members: JSON.stringify([alice.id]),
    });
    await send(bob, toChannel("personal", "hi @**Alice**"));
    await send(bob, toChannel("wildcard", "@**all** standup"));
    await send(bob, toChannel("group", "@*crew* please"));
    await send(bob, toChannel("followed", "news here"));
    await send(bob, toChannel("fruit", "who likes pineapple?"));
    await send(bob, toChannel("nothing", "not for Alice"));
    const mails = (await afterBatchingPeriod()).filter((m) => m.envelopeTo[0] === "alice@test.dev");
    expect(mails.map((m) => [m.subject, m.text.split("\n").find((l) => l.startsWith("You are receiving"))])).toEqual([
      ["#general > personal", "You are receiving this because you were personally mentioned."],
      ["#general > wildcard", "You are receiving this because everyone was mentioned in #general."],
      ["#general > group", "You are receiving this because @crew was mentioned."],
      [
        "#general > followed",
        "You are receiving this because you have email notifications enabled for topics you follow.",
      ],
      ["#general > fruit", "You are receiving this because a message contains one of your alert words."],
    ]);
    expect(mails[0]!.text).toContain(`${base()}/#narrow/channel/${s.seed.general.id}-general/topic/personal`);
  });

  it("each setting turns its trigger off; a user with an active client gets nothing", async () => {
    const { alice, bob, owner } = s.seed;
    await call(alice, "POST", "/user_topics", {
      stream_id: s.seed.general.id,
      topic: "followed",
      visibility_policy: 3,
    });
    await call(alice, "POST", "/users/me/alert_words", { alert_words: JSON.stringify(["pineapple"]) });
    await call(alice, "PATCH", "/settings", {
      enable_offline_email_notifications: false,
      enable_followed_topic_email_notifications: false,
    });
    await call(owner, "PATCH", "/settings", { wildcard_mentions_notify: false });
    await send(bob, { type: "direct", to: [alice.id], content: "dm" });
    await send(bob, toChannel("personal", "hi @**Alice**"));
    await send(bob, toChannel("fruit", "pineapple"));
    await send(bob, toChannel("followed", "news"));
    await send(bob, toChannel("wildcard", "@**all** (owner opted out of wildcards)"));
    // Bob was here a moment ago: his client is active.
    await call(bob, "POST", "/users/me/presence", { status: "active" });
    await send(alice, { type: "direct", to: [bob.id], content: "bob is online" });
    expect(s.t.store.missedEmailBatches()).toEqual([]);
    expect(await afterBatchingPeriod()).toEqual([]);
  });

  it("the organization hiding message content: 'New messages' and no content", async () => {
    const { alice, bob, owner } = s.seed;
    await call(owner, "PATCH", "/realm", { message_content_allowed_in_email_notifications: false });
    await send(bob, { type: "direct", to: [alice.id], content: "secret plans" });
    const [mail] = await afterBatchingPeriod();
    expect(mail!.subject).toBe("New messages");
    expect(mail!.text).not.toContain("secret plans");
    expect(mail!.text).toContain("your organization hides message content in email notifications");
    expect(mail!.text).toContain("View or reply in Test Zulip:");
  });

  it("batching: a second message within the period joins the first one's email", async () => {
    const { alice, bob } = s.seed;
    await send(bob, { type: "direct", to: [alice.id], content: "first" });
    clock.advance(60_000);
    await send(bob, { type: "direct", to: [alice.id], content: "second" });
    expect(s.t.store.missedEmailBatches()[0]!.dueAt).toBe(START_MS / 1000 + 120);
    clock.advance(61_000);
    const mails = await deliver();
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text.startsWith("Bob: first\n\nsecond\n\n--")).toBe(true);
  });

  it("a message read or deleted before the batch goes is left out; nothing is sent when nothing remains", async () => {
    const { alice, bob } = s.seed;
    const read = await send(bob, { type: "direct", to: [alice.id], content: "read it" });
    const deleted = await send(bob, toChannel("t", "@**Alice** deleted"));
    const kept = await send(bob, { type: "direct", to: [alice.id], content: "still unread" });
    await call(alice, "POST", "/messages/flags", { messages: JSON.stringify([read]), op: "add", flag: "read" });
    await call(s.seed.owner, "DELETE", `/messages/${deleted}`);
    const mails = await afterBatchingPeriod();
    expect(mails.map((m) => m.text.split("\n")[0])).toEqual(["Bob: still unread"]);

    await send(bob, { type: "direct", to: [alice.id], content: "later" });
    await call(alice, "POST", "/messages/flags", { messages: JSON.stringify([kept + 1]), op: "add", flag: "read" });
    expect(await afterBatchingPeriod()).toEqual([]);
    expect(s.t.store.missedEmailBatches()).toEqual([]);
    expect(s.t.store.outboxMail()).toEqual([]);
  });

  it("an edit that newly mentions a user adds the message to their email, once", async () => {
    const { alice, bob, owner } = s.seed;
    const id = await send(bob, toChannel("edited", "plain words"));
    const mentioned = await send(bob, toChannel("edited", "hi @**Olive Owner**"));
    expect(s.t.store.missedEmailBatches().map((b) => b.userId)).toEqual([owner.id]);
    await call(bob, "PATCH", `/messages/${id}`, { content: "now @**Alice**" });
    await call(bob, "PATCH", `/messages/${id}`, { content: "still @**Alice**, again" });
    // Owner was mentioned at send: the edit adds nothing for them.
    await call(bob, "PATCH", `/messages/${mentioned}`, { content: "hi @**Olive Owner** edited" });
    expect(s.t.store.missedEmailBatches().map((b) => [b.userId, b.items.map((i) => [i.messageId, i.trigger])])).toEqual(
      [
        [owner.id, [[mentioned, "mentioned"]]],
        [alice.id, [[id, "mentioned"]]],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)),
    );
    const toAlice = (await afterBatchingPeriod()).filter((m) => m.envelopeTo[0] === "alice@test.dev");
    expect(toAlice.map((m) => [m.subject, m.text.split("\n")[0]])).toEqual([
      ["#general > edited", "Bob: still @**Alice**, again"],
    ]);
  });

  it("a restart in the middle of a batch still sends it, once", async () => {
    const { alice, bob } = s.seed;
    await send(bob, { type: "direct", to: [alice.id], content: "before the restart" });
    s.server.close();
    s.t.reopen();
    expect(s.t.store.missedEmailBatches()).toHaveLength(1);
    const mails = await afterBatchingPeriod();
    expect(mails.map((m) => m.subject)).toEqual(["DMs with Bob"]);
    clock.advance(121_000);
    expect(await deliver()).toEqual([]);
  });
  it("a batch keeps one key per message (not rewritten per message); a head with inline items moves to keys and sends", async () => {
    const { alice, bob } = s.seed;
    const tables = internals(s.t.store).tables;
    const first = await send(bob, { type: "direct", to: [alice.id], content: "from an older build" });
    // The batch as a store before schema 4 kept it: the items inside the head.
    tables.env.transactionSync(() => {
      const head = tables.missedEmails.get(alice.id) as MissedEmailBatch;
      tables.missedEmails.putSync(alice.id, { ...head, items: s.t.store.missedEmailBatches()[0]!.items });
      tables.missedEmailItems.removeSync([alice.id, first]);
    });
    const second = await send(bob, { type: "direct", to: [alice.id], content: "second" });
    expect(s.t.store.missedEmailBatches().map((b) => b.items.map((i) => i.messageId))).toEqual([[first, second]]);
    const third = await send(bob, { type: "direct", to: [alice.id], content: "third" });
    // The head's items moved to keys when the batch grew; later messages join as keys of their own.
    expect((tables.missedEmails.get(alice.id) as MissedEmailBatch).items).toEqual([]);
    expect([...tables.missedEmailItems.getKeys({ start: [alice.id], end: [alice.id + 1] })]).toEqual([
      [alice.id, first],
      [alice.id, second],
      [alice.id, third],
    ]);
    expect(s.t.store.missedEmailBatches().map((b) => b.items.map((i) => i.messageId))).toEqual([
      [first, second, third],
    ]);
    const mails = await afterBatchingPeriod();
    expect(mails.map((m) => m.subject)).toEqual(["DMs with Bob"]);
    for (const text of ["from an older build", "second", "third"]) expect(mails[0]!.text).toContain(text);
    expect(s.t.store.missedEmailBatches()).toEqual([]);
    expect([...tables.missedEmailItems.getKeys({ start: [alice.id], end: [alice.id + 1] })]).toEqual([]);
  });
  it("a head with inline items that never grows again is still mailed, and removed", async () => {
    const { alice, bob } = s.seed;
    const tables = internals(s.t.store).tables;
    const only = await send(bob, { type: "direct", to: [alice.id], content: "kept inline" });
    tables.env.transactionSync(() => {
      const head = tables.missedEmails.get(alice.id) as MissedEmailBatch;
      tables.missedEmails.putSync(alice.id, { ...head, items: s.t.store.missedEmailBatches()[0]!.items });
      tables.missedEmailItems.removeSync([alice.id, only]);
    });
    const mails = await afterBatchingPeriod();
    expect(mails.map((m) => m.text.split("\n")[0])).toEqual(["Bob: kept inline"]);
    expect(s.t.store.missedEmailBatches()).toEqual([]);
  });
});

describe("Welcome Bot", () => {
  it("its messages notify no one outside the app (Zulip's disable_external_notifications)", async () => {
    const { owner } = s.seed;
    const store = s.t.store;
    store.setCanCreateUsers(owner.id, true);
    const created = await call(owner, "POST", "/users", {
      email: "newcomer@test.dev",
      password: "correct horse battery staple",
      full_name: "Newcomer",
    });
    await call(owner, "POST", "/realm/test_welcome_bot_custom_message", { welcome_message_custom_text: "Hi!" });
    const newcomer = created["user_id"] as number;
    // Both received Welcome Bot's direct messages, unread, while away.
    expect(store.unreadSummary(newcomer).count).toBeGreaterThan(0);
    expect(store.missedEmailBatches()).toEqual([]);
    expect(store.pushOutboxItems(0, 1000).filter((i) => i.kind === "message")).toEqual([]);
    // Only the welcome mail (send_welcome_emails), no "DMs with Welcome Bot".
    expect((await afterBatchingPeriod()).map((m) => m.subject)).toEqual(["Welcome to Test"]);
  });
});

describe("alert words and push", () => {
  it("a message with one of the user's alert words is a push notification with the alert_word trigger", async () => {
    const { alice, bob } = s.seed;
    const store = s.t.store;
    const deviceId = store.registerClientDevice(alice.id);
    store.registerPushDevice(
      alice.id,
      {
        deviceId,
        pushKey: Buffer.concat([Buffer.from([0x31]), randomBytes(32)]).toString("base64"),
        pushKeyId: randomBytes(4).readUInt32BE(),
        tokenKind: "fcm",
        tokenId: randomBytes(8).toString("base64"),
        bouncerPublicKey: "cHVibGljLWtleQ==",
        encryptedPushRegistration: "c2VhbGVkLXJlZ2lzdHJhdGlvbg==",
      },
      true,
    );
    await call(alice, "POST", "/users/me/alert_words", { alert_words: JSON.stringify(["pineapple"]) });
    const id = await send(bob, toChannel("fruit", "pineapple season"));
    await send(bob, toChannel("fruit", "apples only"));
    const items = store.pushOutboxItems(0, 1000).filter((i) => i.kind === "message");
    expect(items).toMatchObject([{ userId: alice.id, messageId: id, trigger: "alert_word" }]);
    await call(alice, "PATCH", "/settings", { enable_offline_push_notifications: false });
    await send(bob, toChannel("fruit", "more pineapple"));
    expect(store.pushOutboxItems(0, 1000).filter((i) => i.kind === "message")).toHaveLength(1);
  });
});
