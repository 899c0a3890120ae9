/**
 * The mail path: the outbox is written with what causes the mail, the sender drains
 * it into a real SMTP server on loopback, retries with backoff while the server is
 * down (on a manual clock) and loses nothing across a restart; without EMAIL_HOST,
 * mail becomes .eml files that `parley mail list` and `parley mail show` print.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import { MailSender } from "../../src/mail/sender.js";
import { FileTransport, fromHeader, SmtpTransport, transportFor } from "../../src/mail/transports.js";
import { ManualClock } from "../../src/realtime/clock.js";
import { run as mailCommand } from "../../tools/commands/mail.js";
import { freePort, startSmtp, type TestSmtp } from "../support/smtp.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

const env = { realmUrl: "http://chat.example:9991", dailyLimit: 100 };
const options = {
  invitedAs: 400,
  channelIds: [],
  groupIds: [],
  includeRealmDefaultSubscriptions: false,
  notifyReferrerOnJoin: true,
  welcomeMessageCustomText: null,
  expiresInMinutes: null,
};
const from = (name: string | null) => fromHeader(DEFAULT_CONFIG, "chat.example", name);

let t: TempStore | undefined;
let smtp: TestSmtp | undefined;
afterEach(async () => {
  await smtp?.close();
  smtp = undefined;
  t?.cleanup();
  t = undefined;
});

function smtpTransport(port: number): SmtpTransport {
  return new SmtpTransport({ ...DEFAULT_CONFIG, EMAIL_HOST: "127.0.0.1", EMAIL_PORT: port }, { timeoutMs: 2000 });
}

describe("the outbox and the SMTP sender", () => {
  it("an invitation's mail is in the outbox with the invitation, and reaches a real SMTP server", async () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    smtp = await startSmtp();
    t.store.inviteUsers(owner.id, "friend@x.dev", options, env);
    expect(t.store.outboxMail()).toHaveLength(1);
    const sender = new MailSender(t.store, smtpTransport(smtp.port), { from, clock: new ManualClock() });
    expect(await sender.runOnce()).toBe(1);
    const mail = await smtp.next();
    expect(mail.envelopeTo).toEqual(["friend@x.dev"]);
    expect(mail.subject).toBe("Olive Owner invited you to join Test");
    expect(mail.from).toBe('"Olive Owner (via parley)" <noreply@chat.example>');
    expect(mail.text).toMatch(/http:\/\/chat\.example:9991\/join\/[a-z0-9]{24}\//);
    expect(t.store.outboxMail()).toEqual([]);
    sender.stop();
  });

  it("a server that is down loses nothing: retried with backoff, kept across a restart, delivered once it is up", async () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    const port = await freePort();
    const clock = new ManualClock();
    const failures: number[] = [];
    const senderOptions = {
      from,
      clock,
      baseBackoffMs: 1000,
      maxBackoffMs: 4000,
      onFailure: () => failures.push(clock.now()),
    };
    t.store.inviteUsers(owner.id, "a@x.dev, b@x.dev", options, env);

    let sender = new MailSender(t.store, smtpTransport(port), senderOptions);
    expect(await sender.runOnce()).toBe(0);
    expect(t.store.outboxMail().map((m) => [m.attempts, m.nextAttemptAt - clock.now(), m.state])).toEqual([
      [1, 1000, "pending"],
      [1, 1000, "pending"],
    ]);
    expect(t.store.outboxMail()[0]!.lastError).toMatch(/ECONNREFUSED/);
    // Not due yet: no attempt.
    expect(await sender.runOnce()).toBe(0);
    expect(failures).toHaveLength(2);
    clock.advance(1000);
    expect(await sender.runOnce()).toBe(0);
    // The backoff doubles, up to its cap.
    expect(t.store.outboxMail().map((m) => [m.attempts, m.nextAttemptAt - clock.now()])).toEqual([
      [2, 2000],
      [2, 2000],
    ]);
    sender.stop();

    // A restart: the outbox is on disk.
    t.reopen();
    expect(t.store.outboxMail().map((m) => m.to[0])).toEqual(["a@x.dev", "b@x.dev"]);
    smtp = await startSmtp(port);
    sender = new MailSender(t.store, smtpTransport(port), senderOptions);
    clock.advance(2000);
    expect(await sender.runOnce()).toBe(2);
    expect(smtp.received.map((m) => m.envelopeTo[0]).sort()).toEqual(["a@x.dev", "b@x.dev"]);
    expect(t.store.outboxMail()).toEqual([]);
    sender.stop();
  });

  it("the polling loop picks up new mail on its own, and a recipient refused for good is marked failed, not retried", async () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    smtp = await startSmtp(0, { rejectRecipients: true });
    const clock = new ManualClock();
    const gaveUp = vi.fn();
    const sender = new MailSender(t.store, smtpTransport(smtp.port), {
      from,
      clock,
      onFailure: (_m, _e, final) => gaveUp(final),
    });
    sender.start();
    // The first (empty) round ends and the loop sleeps.
    await vi.waitFor(() => expect(clock.pendingTimers).toBe(1));
    t.store.inviteUsers(owner.id, "nobody@x.dev", options, env);
    clock.advance(1000);
    await vi.waitFor(() => expect(gaveUp).toHaveBeenCalledWith(true));
    expect(t.store.outboxMail().map((m) => [m.state, m.attempts])).toEqual([["failed", 1]]);
    clock.advance(60 * 60_000);
    expect(await sender.runOnce()).toBe(0);
    expect(gaveUp).toHaveBeenCalledTimes(1);
    sender.stop();
  });
});

describe("without EMAIL_HOST: DATA/outbox and parley mail", () => {
  it("writes each mail as an .eml file that parley mail list and show print", async () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    const transport = transportFor(DEFAULT_CONFIG, t.dir);
    expect(transport).toBeInstanceOf(FileTransport);
    t.store.inviteUsers(owner.id, "Zoë <zoe@x.dev>", options, env);
    const sender = new MailSender(t.store, transport, { from, clock: new ManualClock() });
    expect(await sender.runOnce()).toBe(1);
    sender.stop();
    expect(readdirSync(join(t.dir, "outbox"))).toEqual(["00000001.eml"]);

    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      expect(await mailCommand(["list", "--data", t.dir])).toBe(0);
      expect(lines.pop()).toMatch(/^1\t.+\tzoe@x\.dev\tOlive Owner invited you to join Test$/);
      expect(await mailCommand(["show", "1", "--data", t.dir])).toBe(0);
      const shown = lines.pop()!;
      expect(shown).toContain("Subject: Olive Owner invited you to join Test");
      // The link survives quoted-printable line folding intact.
      expect(shown).toMatch(/\n {4}http:\/\/chat\.example:9991\/join\/[a-z0-9]{24}\/\n/);
      expect(await mailCommand(["show", "2", "--data", t.dir])).toBe(1);
    } finally {
      log.mockRestore();
    }
    expect(await mailCommand(["frobnicate", "--data", t.dir])).toBe(2);
  });
});
