/**
 * The invitation path as a person walks it: an administrator invites over the API,
 * the mail goes through the outbox and the sender to a real SMTP server on loopback,
 * and headless Chromium (Debian's, driven by playwright-core) opens the link, fills
 * the join form and submits it; the page's API key then works over the API with the
 * invited role, channels and groups. One browser launch.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import { MailSender } from "../../src/mail/sender.js";
import { fromHeader, transportFor } from "../../src/mail/transports.js";
import { launchChromium } from "../support/chromium.js";
import { startServer, type TestServer } from "../support/http.js";
import { startSmtp, type TestSmtp } from "../support/smtp.js";

let s: TestServer;
let smtp: TestSmtp;
let sender: MailSender;
let browser: Browser;

beforeAll(async () => {
  smtp = await startSmtp();
  const config = { ...DEFAULT_CONFIG, EMAIL_HOST: "127.0.0.1", EMAIL_PORT: smtp.port };
  // Links on 127.0.0.1, which is where the test server listens.
  s = await startServer({ config, externalHost: "127.0.0.1" });
  sender = new MailSender(s.t.store, transportFor(config, s.t.dir), {
    from: (name) => fromHeader(config, "127.0.0.1", name),
  });
  sender.start();
  browser = await launchChromium();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  sender?.stop();
  s?.close();
  await smtp?.close();
});

it("an invitation mailed over SMTP is accepted in a browser, and the new account works with its role, channels and groups", async () => {
  const { owner, secret } = s.seed;
  const group = s.t.store.createGroup(owner.id, { name: "reviewers", description: "", members: [owner.id] });
  const invited = await s.call(owner, "POST", "/invites", {
    invitee_emails: "dana@example.org",
    stream_ids: [secret.id],
    group_ids: [group.id],
    invite_as: 300,
  });
  expect(invited.status, JSON.stringify(invited.body)).toBe(200);

  const mail = await smtp.next();
  expect(mail.envelopeTo).toEqual(["dana@example.org"]);
  const link = /(http:\/\/\S+\/join\/[a-z0-9]+\/)/.exec(mail.text)?.[1];
  expect(link).toMatch(new RegExp(`^${s.base}/join/`));

  const page = await browser.newPage({ javaScriptEnabled: false });
  await page.goto(link!);
  expect(await page.textContent("main")).toContain("dana@example.org");
  await page.fill("#full_name", "Dana Scully");
  await page.fill("#password", "trust no one 1013");
  await Promise.all([page.waitForURL(link!), page.click("button[type=submit]")]);
  const apiKey = (await page.textContent("#api-key"))?.trim() ?? "";
  expect(await page.textContent("#email")).toBe("dana@example.org");
  expect(await page.textContent("#server-url")).toBe(s.base);
  await page.close();

  const dana = s.t.store.findUserByApiKey(apiKey);
  expect(dana).toBeDefined();
  const me = await s.call(dana!, "GET", "/users/me");
  expect(me.body).toMatchObject({ email: "dana@example.org", full_name: "Dana Scully", role: 300 });
  const subs = await s.call(dana!, "GET", "/users/me/subscriptions");
  expect((subs.body["subscriptions"] as { name: string }[]).map((c) => c.name)).toContain("secret");
  const members = await s.call(dana!, "GET", `/user_groups/${group.id}/members`);
  expect(members.body["members"]).toContain(dana!.id);
  const sent = await s.call(dana!, "POST", "/messages", {
    type: "stream",
    to: "secret",
    topic: "hello",
    content: "The truth is out there.",
  });
  expect(sent.status).toBe(200);
}, 120_000);
