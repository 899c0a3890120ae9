/**
 * Weekly digest emails end to end: activity over HTTP, the digest loop run on an injected
 * clock (the store's and the loop's move together) on and off the realm's digest day, and
 * the mails delivered by the mail sender to a real SMTP server on loopback. Who gets one
 * (away for five days, digests on, something to show), what it holds (hot conversations,
 * new channels), once per digest day, and a restart in the middle of a realm's run.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import { DIGEST_CHUNK_USERS } from "../../src/engine/actions/digest-emails.js";
import type { User } from "../../src/engine/types.js";
import { MailSender } from "../../src/mail/sender.js";
import { fromHeader, SmtpTransport } from "../../src/mail/transports.js";
import { realmUrl } from "../../src/push/payload.js";
import { ManualClock } from "../../src/realtime/clock.js";
import { DigestMailer } from "../../src/scheduler/digest-emails.js";
import { startServer, type TestServer } from "../support/http.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../support/smtp.js";

/** Friday 2027-01-15 08:00 UTC: weekday 4 in Zulip's numbering (Monday 0). */
const START_MS = 1_800_000_000_000;
const DAY_MS = 86_400_000;
const SATURDAY = 5;
let clock: ManualClock;
let s: TestServer;
let smtp: TestSmtp;

beforeEach(async () => {
  clock = new ManualClock(START_MS);
  s = await startServer({}, { now: () => Math.floor(clock.now() / 1000) });
  smtp = await startSmtp();
  // A week on: the seed's channels are no longer new.
  clock.advance(7 * DAY_MS);
});
afterEach(async () => {
  s.close();
  await smtp.close();
});

const base = () => realmUrl(s.server.baseUrl, s.seed.realm);

/** One round of the digest loop at the clock's time, then the mail sender to the loopback server. */
async function digest(): Promise<ReceivedMail[]> {
  const store = s.t.store;
  const mailer = new DigestMailer(store, (realm) => realmUrl(s.server.baseUrl, realm), { clock });
  await mailer.runOnce();
  mailer.stop();
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

async function call(user: User, method: string, path: string, params: Record<string, unknown> = {}) {
  const r = await s.call(user, method, path, params);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const say = (user: User, topic: string, content: string) =>
  call(user, "POST", "/messages", { type: "stream", to: "general", topic, content });

/** Digests on Saturdays; Bob is here (active now), the others away; a week of traffic in #general. */
async function busyWeek(): Promise<void> {
  const { owner, bob } = s.seed;
  await call(owner, "PATCH", "/realm", { digest_emails_enabled: true, digest_weekday: SATURDAY });
  await call(bob, "POST", "/users/me/presence", { status: "active" });
  await say(bob, "lunch", "pizza at noon?");
  await say(bob, "lunch", "or **sushi**");
  await say(owner, "lunch", "sushi");
  await say(owner, "lunch", "see you there");
  await say(bob, "release", "shipped 2.0");
  await call(owner, "POST", "/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "design" }]) });
  await call(owner, "POST", "/users/me/subscriptions", {
    subscriptions: JSON.stringify([{ name: "board" }]),
    invite_only: true,
  });
}

describe("digest emails", () => {
  it("on the digest day, an away user gets hot conversations and new channels, once", async () => {
    await busyWeek();
    // Friday: not the digest day.
    expect(await digest()).toEqual([]);
    clock.advance(DAY_MS);
    const mails = await digest();
    // Bob was active two days ago; the guest has no channel and no web-public channel is new.
    expect(mails.map((m) => m.envelopeTo[0]).sort()).toEqual(["alice@test.dev", "owner@test.dev"]);
    const mail = mails.find((m) => m.envelopeTo[0] === "alice@test.dev")!;
    expect(mail.from).toBe("Zulip digest <noreply@chat.test>");
    expect(mail.subject).toBe("Zulip digest for Test");
    const { general } = s.seed;
    expect(mail.text).toBe(
      [
        "Hi Alice,",
        "",
        "Here is what you missed in Test while you were away.",
        "",
        "** Hot conversations **",
        "",
        "#general > lunch",
        "Bob: pizza at noon?",
        "or **sushi**",
        "+ 2 more messages by Bob and Olive Owner.",
        "",
        "#general > release",
        "Bob: shipped 2.0",
        "",
        "** New channels **",
        "    design.",
        "",
        `Catch up in Test: ${base()}`,
        "",
        "--",
        "Manage email preferences (digests included):",
        "",
        `${base()}/#settings/notifications`,
      ].join("\n"),
    );
    expect(mail.html).toContain(
      `<a href="${base()}/#narrow/channel/${general.id}-general/topic/lunch">#general &gt; lunch</a>`,
    );
    expect(mail.html).toContain('<div class="digest_message"><p><b>Bob</b>: pizza at noon?</p></div>');
    expect(mail.html).toContain('<div class="digest_message"><p>or <strong>sushi</strong></p></div>');
    expect(mail.html).toMatch(/<a href="[^"]+\/#narrow\/channel\/\d+-design">design<\/a>/);
    expect(mail.html).not.toContain("board");

    // Later the same day, and the next day: nothing more.
    clock.advance(3_600_000);
    expect(await digest()).toEqual([]);
    clock.advance(DAY_MS);
    expect(await digest()).toEqual([]);
    // The next Saturday: last week's traffic is older than five days, so there is nothing to show.
    clock.advance(6 * DAY_MS);
    expect(await digest()).toEqual([]);
  });

  it("picks the two conversations with the most people, then the longest, four at most", async () => {
    const { owner, alice, bob, guest } = s.seed;
    await call(owner, "PATCH", "/realm", { digest_emails_enabled: true, digest_weekday: SATURDAY });
    await call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "general" }]),
      principals: JSON.stringify([guest.id]),
    });
    await call(alice, "PATCH", "/settings", { enable_digest_emails: false });
    // long: 5 messages by one person; wide: 3 people; pair: 2 people; one, two: 1 message each.
    for (let i = 0; i < 5; i++) await say(bob, "long", `long ${i}`);
    await say(bob, "wide", "w1");
    await say(owner, "wide", "w2");
    await say(guest, "wide", "w3");
    await say(bob, "pair", "p1");
    await say(owner, "pair", "p2");
    await say(bob, "one", "o1");
    await say(owner, "two", "t1");
    await say(owner, "two", "t2");
    clock.advance(DAY_MS);
    const mails = await digest();
    // Alice turned digests off.
    expect(mails.map((m) => m.envelopeTo[0]).sort()).toEqual(["bob@test.dev", "guest@test.dev", "owner@test.dev"]);
    const headers = mails[0]!.text.split("\n").filter((l) => l.startsWith("#general > "));
    expect(headers).toEqual(["#general > wide", "#general > pair", "#general > long", "#general > two"]);
    expect(mails[0]!.text).toContain("+ 3 more messages by Bob.");
  });

  it("sends nothing when the organization turns digests off, or when the user is here", async () => {
    await busyWeek();
    const { owner, alice } = s.seed;
    clock.advance(DAY_MS);
    await call(alice, "POST", "/users/me/presence", { status: "active" });
    await call(owner, "POST", "/users/me/presence", { status: "active" });
    expect(await digest()).toEqual([]);
    await call(owner, "PATCH", "/realm", { digest_emails_enabled: false });
    clock.advance(7 * DAY_MS);
    await say(owner, "lunch", "anyone?");
    expect(await digest()).toEqual([]);
  });

  it("leaves message content out where the user hides it from emails", async () => {
    await busyWeek();
    await call(s.seed.alice, "PATCH", "/settings", { message_content_in_email_notifications: false });
    clock.advance(DAY_MS);
    const mail = (await digest()).find((m) => m.envelopeTo[0] === "alice@test.dev")!;
    expect(mail.text).toContain("#general > lunch\n+ 2 more messages by Bob and Olive Owner.");
    expect(mail.text).not.toContain("pizza");
    expect(mail.html).not.toContain("pizza");
  });

  it("a restart in the middle of a realm's run sends the rest, and nobody's twice", async () => {
    const { owner, realm, general } = s.seed;
    await call(owner, "PATCH", "/realm", { digest_emails_enabled: true, digest_weekday: SATURDAY });
    const store = s.t.store;
    const extra = Array.from({ length: DIGEST_CHUNK_USERS + 10 }, (_, i) =>
      store.createUser({ realmId: realm.id, email: `reader${i}@test.dev`, fullName: `Reader ${i}` }),
    );
    store.subscribe(owner.id, { channels: [{ name: general.name }], principals: extra.map((u) => u.id) });
    await say(owner, "news", "big news");
    clock.advance(DAY_MS);
    // The first write of the run, then the process ends.
    const first = store.sendDigestChunk(Math.floor(clock.now() / 1000), () => base(), store.newDigestCache());
    // Thirty people looked at (the guest among them, with nothing to show): a part of the run.
    expect(first).toBe(DIGEST_CHUNK_USERS - 1);
    s.server.close();
    s.t.reopen();
    const mailer = new DigestMailer(s.t.store, () => base(), { clock });
    expect(await mailer.runOnce()).toBe(extra.length + 3 - first!);
    // Counted in the outbox (delivery is the mail sender's, shown above): 43 SMTP sessions take seconds.
    const recipients = s.t.store
      .outboxMail()
      .filter((m) => m.subject === "Zulip digest for Test")
      .map((m) => m.to[0]);
    // Alice, Bob, the owner (who wrote, but is not active by presence) and the readers; the guest has no channel.
    expect(recipients).toHaveLength(extra.length + 3);
    expect(new Set(recipients).size).toBe(recipients.length);
    expect(await mailer.runOnce()).toBe(0);
    mailer.stop();
  });
});
