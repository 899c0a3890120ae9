/**
 * Invitations over HTTP (seed endpoint 13 and its companions): every rule of
 * POST /invites and POST /invites/multiuse with Zulip's errors and an unchanged
 * store, INVITATION_FAILED with its triples (and the rest invited), the daily limit,
 * GET/DELETE/resend, invites_changed, and the join page (plain form posts, as a
 * browser without JavaScript sends them): the account it creates, expired, revoked
 * and used links. Mail is read from the engine's outbox (no sender runs here).
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import { request as httpRequest } from "node:http";
import { defaultHashPoolLimits, passwordHashPool, type User } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import type { ServerOptions } from "../../src/http/server.js";
import { MailSender } from "../../src/mail/sender.js";
import { fromHeader, transportFor } from "../../src/mail/transports.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { startSmtp, type TestSmtp } from "../support/smtp.js";

let s: TestServer;
let now = 1_700_000_000;

async function boot(options: ServerOptions = {}, config: Partial<typeof DEFAULT_CONFIG> = {}): Promise<void> {
  now = 1_700_000_000;
  s = await startServer({ ...options, config: { ...DEFAULT_CONFIG, ...config } }, { now: () => now });
}

let smtp: TestSmtp | undefined;
afterEach(async () => {
  s?.close();
  await smtp?.close();
  smtp = undefined;
});

const invite = (user: User, params: Record<string, unknown>) =>
  s.call(user, "POST", "/invites", { stream_ids: [], ...params });

/** The key of the newest mail's join link to `to`. */
function linkTo(to: string): string {
  const mail = s.t.store
    .outboxMail()
    .filter((m) => m.to.includes(to))
    .at(-1);
  expect(mail, `a mail to ${to}`).toBeDefined();
  const match = /(http:\/\/\S+\/join\/([a-z0-9]+)\/)/.exec(mail!.text);
  expect(match).not.toBeNull();
  return match![1]!;
}

async function page(
  url: string,
  form?: Record<string, string>,
): Promise<{ status: number; text: string; type: string }> {
  const r = await fetch(url, form ? { method: "POST", body: new URLSearchParams(form) } : {});
  return { status: r.status, text: await r.text(), type: r.headers.get("content-type") ?? "" };
}

function publicBase(): string {
  return s.base.replace("127.0.0.1", "localhost");
}

/** The local part of a link on the test server (mail links carry the server's public host). */
function local(link: string): string {
  return `${s.base}${new URL(link).pathname}`;
}

type Ev = Record<string, unknown> & { type: string };

async function queue(user: User, types: string[]): Promise<string> {
  const r = await s.call(user, "POST", "/register", { event_types: types });
  expect(r.status).toBe(200);
  return r.body["queue_id"] as string;
}

async function events(user: User, queueId: string): Promise<Ev[]> {
  const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
  expect(r.status).toBe(200);
  return (r.body["events"] as Ev[]).filter((e) => e.type !== "heartbeat");
}

describe("POST /invites", () => {
  it("invites comma and newline lists (with display names), mails each a link on the realm's URL, lists them and tells admins and the inviter", async () => {
    await boot();
    const { owner, alice, bob } = s.seed;
    const qOwner = await queue(owner, ["invites_changed"]);
    const qAlice = await queue(alice, ["invites_changed"]);
    const qBob = await queue(bob, ["invites_changed"]);
    const r = await invite(alice, {
      invitee_emails: "new1@test.dev, Carol <new2@test.dev>\nnew3@test.dev,,new1@test.dev",
      stream_ids: [s.seed.general.id],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const mails = s.t.store.outboxMail();
    expect(mails.map((m) => m.to[0]).sort()).toEqual(["new1@test.dev", "new2@test.dev", "new3@test.dev"]);
    expect(mails[0]!.subject).toBe("Alice invited you to join Test");
    // Links are on the realm's public URL (EXTERNAL_HOST, else localhost and the bound port).
    expect(linkTo("new2@test.dev")).toMatch(new RegExp(`^${publicBase()}/join/[a-z0-9]{24}/$`));

    const listed = await s.call(alice, "GET", "/invites");
    const invites = listed.body["invites"] as Record<string, unknown>[];
    expect(invites).toHaveLength(3);
    expect(invites[0]).toMatchObject({
      invited_by_user_id: alice.id,
      invited: now,
      expiry_date: now + 14_400 * 60,
      invited_as: 400,
      is_multiuse: false,
      notify_referrer_on_join: true,
    });
    // Bob controls none of them; the owner (an administrator) sees all.
    expect((await s.call(bob, "GET", "/invites")).body["invites"]).toEqual([]);
    expect((await s.call(owner, "GET", "/invites")).body["invites"]).toHaveLength(3);

    expect(await events(owner, qOwner)).toEqual([{ type: "invites_changed", id: 0 }]);
    expect(await events(alice, qAlice)).toEqual([{ type: "invites_changed", id: 0 }]);
    expect(await events(bob, qBob)).toEqual([]);
  });

  it("null expiry never expires; an explicit expiry is minutes from now", async () => {
    await boot();
    await invite(s.seed.owner, { invitee_emails: "a@x.dev", invite_expires_in_minutes: null });
    await invite(s.seed.owner, { invitee_emails: "b@x.dev", invite_expires_in_minutes: 30 });
    const invites = (await s.call(s.seed.owner, "GET", "/invites")).body["invites"] as Record<string, unknown>[];
    expect(invites.map((i) => [i["email"], i["expiry_date"]])).toEqual([
      ["a@x.dev", null],
      ["b@x.dev", now + 1800],
    ]);
  });

  it("refuses every rule with Zulip's error and changes nothing", async () => {
    await boot();
    const { owner, alice, bob, guest, secret, general } = s.seed;
    const store = s.t.store;
    const group = store.createGroup(owner.id, { name: "ops", description: "", members: [owner.id] });
    const moderator = store.createUser({
      realmId: s.seed.realm.id,
      email: "mod@test.dev",
      fullName: "Mo Mod",
      role: 300,
    });
    const bot = store.createUser({
      realmId: s.seed.realm.id,
      email: "bot@test.dev",
      fullName: "A Bot",
      bot: { type: 1, ownerId: alice.id },
    });
    const admin = store.createUser({
      realmId: s.seed.realm.id,
      email: "admin@test.dev",
      fullName: "Ada Admin",
      role: 200,
    });
    const cases: [User, Record<string, unknown>, string, string][] = [
      [guest, { invitee_emails: "x@y.dev" }, "BAD_REQUEST", "Not allowed for guest users"],
      [bot, { invitee_emails: "x@y.dev" }, "BAD_REQUEST", "This endpoint does not accept bot requests."],
      [alice, { invitee_emails: "x@y.dev", invite_as: 500 }, "BAD_REQUEST", "Invalid invite_as"],
      [admin, { invitee_emails: "x@y.dev", invite_as: 100 }, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"],
      [alice, { invitee_emails: "x@y.dev", invite_as: 200 }, "BAD_REQUEST", "Must be an organization administrator"],
      [
        moderator,
        { invitee_emails: "x@y.dev", invite_as: 300 },
        "BAD_REQUEST",
        "Must be an organization administrator",
      ],
      [alice, { invitee_emails: "" }, "BAD_REQUEST", "You must specify at least one email address."],
      [
        bob,
        { invitee_emails: "x@y.dev", stream_ids: [secret.id] },
        "BAD_REQUEST",
        `Invalid channel ID ${secret.id}. No invites were sent.`,
      ],
      [
        alice,
        { invitee_emails: "x@y.dev", stream_ids: [999_999] },
        "BAD_REQUEST",
        "Invalid channel ID 999999. No invites were sent.",
      ],
      [alice, { invitee_emails: "x@y.dev", group_ids: [group.id] }, "BAD_REQUEST", "Insufficient permission"],
      [alice, { invitee_emails: "x@y.dev", group_ids: [999_999] }, "BAD_REQUEST", "Invalid user group"],
      [
        alice,
        { invitee_emails: "x@y.dev", welcome_message_custom_text: "hi" },
        "BAD_REQUEST",
        "Must be an organization administrator",
      ],
      [
        owner,
        { invitee_emails: "x@y.dev", welcome_message_custom_text: "é".repeat(8001) },
        "BAD_REQUEST",
        "welcome_message_custom_text is too long (limit: 8000 characters)",
      ],
      [
        owner,
        { invitee_emails: "x@y.dev", invite_expires_in_minutes: 0 },
        "BAD_REQUEST",
        "Invalid invite_expires_in_minutes",
      ],
      [
        owner,
        { invitee_emails: "x@y.dev", invite_expires_in_minutes: "soon" },
        "BAD_REQUEST",
        "invite_expires_in_minutes is not valid JSON",
      ],
      [owner, { invitee_emails: "x@y.dev", stream_ids: "[1," }, "BAD_REQUEST", "stream_ids is not valid JSON"],
      [
        owner,
        { invitee_emails: "x@y.dev", stream_ids: undefined },
        "REQUEST_VARIABLE_MISSING",
        "Missing 'stream_ids' argument",
      ],
    ];
    for (const [user, params, code, msg] of cases)
      await expectRejectedUnchanged(s, () => invite(user, params), 400, code, msg);
    // A member may add subscribers to public channels; the default channels are always allowed.
    expect((await invite(alice, { invitee_emails: "ok@y.dev", stream_ids: [general.id] })).status).toBe(200);
  });

  it("INVITATION_FAILED: invalid addresses stop everything; existing accounts are skipped and the rest invited", async () => {
    await boot();
    const { owner, alice, bob } = s.seed;
    s.t.store.setUserActive(bob.id, false);
    const bad = await expectRejectedUnchanged(
      s,
      () => invite(owner, { invitee_emails: "fine@x.dev, not-an-address, alice@test.dev" }),
      400,
      "INVITATION_FAILED",
      "Some emails did not validate, so we didn't send any invitations.",
    );
    expect(bad).toMatchObject({
      errors: [
        ["not-an-address", "Invalid address.", false],
        ["alice@test.dev", "Already has an account.", false],
      ],
      sent_invitations: false,
      daily_limit_reached: false,
      license_limit_reached: false,
    });
    const none = await expectRejectedUnchanged(
      s,
      () => invite(owner, { invitee_emails: "ALICE@test.dev\nbob@test.dev" }),
      400,
      "INVITATION_FAILED",
      "We weren't able to invite anyone.",
    );
    expect(none["errors"]).toEqual([
      ["ALICE@test.dev", "Already has an account.", false],
      ["bob@test.dev", "Account has been deactivated.", true],
    ]);

    const some = await invite(owner, { invitee_emails: `${alice.email}, fresh@x.dev` });
    expect(some.status).toBe(400);
    expect(some.body).toMatchObject({
      code: "INVITATION_FAILED",
      msg: "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      errors: [[alice.email, "Already has an account.", false]],
      sent_invitations: true,
    });
    expect(s.t.store.outboxMail().map((m) => m.to[0])).toEqual(["fresh@x.dev"]);
  });

  it("stops at the realm's daily limit, resends included", async () => {
    await boot({}, { INVITES_DEFAULT_REALM_DAILY_MAX: 3 });
    const { owner } = s.seed;
    expect((await invite(owner, { invitee_emails: "a@x.dev,b@x.dev" })).status).toBe(200);
    const limited = await expectRejectedUnchanged(
      s,
      () => invite(owner, { invitee_emails: "c@x.dev,d@x.dev" }),
      400,
      "INVITATION_FAILED",
      "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
    );
    expect(limited).toMatchObject({ errors: [], sent_invitations: false, daily_limit_reached: true });
    const [first] = (await s.call(owner, "GET", "/invites")).body["invites"] as { id: number }[];
    expect((await s.call(owner, "POST", `/invites/${first!.id}/resend`)).status).toBe(200);
    await expectRejectedUnchanged(
      s,
      () => s.call(owner, "POST", `/invites/${first!.id}/resend`),
      400,
      "INVITATION_FAILED",
      /limits the number of invitations/,
    );
    // A day later the window is empty again.
    now += 86_401;
    expect((await invite(owner, { invitee_emails: "c@x.dev,d@x.dev" })).status).toBe(200);
  });
});

describe("revoking, resending and reusable links", () => {
  it("a member revokes and resends only their own invitations; administrators any but an owner's", async () => {
    await boot();
    const { owner, alice, bob } = s.seed;
    const admin = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "admin@test.dev",
      fullName: "Ada Admin",
      role: 200,
    });
    await invite(alice, { invitee_emails: "a@x.dev" });
    await invite(owner, { invitee_emails: "o@x.dev", invite_as: 100 });
    const [mine, owners] = (await s.call(owner, "GET", "/invites")).body["invites"] as { id: number }[];
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "DELETE", `/invites/${mine!.id}`),
      400,
      "BAD_REQUEST",
      "Must be an organization administrator",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "POST", `/invites/${mine!.id}/resend`),
      400,
      "BAD_REQUEST",
      "Must be an organization administrator",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(admin, "DELETE", `/invites/${owners!.id}`),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization owner",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", "/invites/999999"),
      400,
      "BAD_REQUEST",
      "No such invitation",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", "/invites/abc"),
      400,
      "BAD_REQUEST",
      "No such invitation",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", `/invites/multiuse/${mine!.id}`),
      400,
      "BAD_REQUEST",
      "No such invitation",
    );

    const before = s.t.store.outboxMail().length;
    expect((await s.call(alice, "POST", `/invites/${mine!.id}/resend`)).status).toBe(200);
    expect(s.t.store.outboxMail()).toHaveLength(before + 1);
    const link = linkTo("a@x.dev");
    expect((await s.call(admin, "DELETE", `/invites/${mine!.id}`)).status).toBe(200);
    expect(((await s.call(owner, "GET", "/invites")).body["invites"] as unknown[]).length).toBe(1);
    await expectRejectedUnchanged(
      s,
      () => s.call(admin, "DELETE", `/invites/${mine!.id}`),
      400,
      "BAD_REQUEST",
      "No such invitation",
    );
    const revoked = await page(local(link));
    expect(revoked.status).toBe(410);
    expect(revoked.type).toMatch(/^text\/html/);
    expect(revoked.text).toContain("This invitation has been revoked.");
  });

  it("reusable links: administrators only, listed with their link, revocable once", async () => {
    await boot();
    const { owner, alice } = s.seed;
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "POST", "/invites/multiuse", {}),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    const r = await s.call(owner, "POST", "/invites/multiuse", {
      invite_as: 600,
      stream_ids: [s.seed.general.id],
      invite_expires_in_minutes: 60,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const link = r.body["invite_link"] as string;
    expect(link).toMatch(new RegExp(`^${publicBase()}/join/[a-z0-9]{24}/$`));
    const [listed] = (await s.call(owner, "GET", "/invites")).body["invites"] as Record<string, unknown>[];
    expect(listed).toMatchObject({ is_multiuse: true, link_url: link, invited_as: 600, expiry_date: now + 3600 });
    expect(listed!["email"]).toBeUndefined();
    await expectRejectedUnchanged(
      s,
      () => s.call(owner, "DELETE", `/invites/${String(listed!["id"])}`),
      400,
      "BAD_REQUEST",
      "No such invitation",
    );
    expect((await s.call(owner, "DELETE", `/invites/multiuse/${String(listed!["id"])}`)).status).toBe(200);
    await expectRejectedUnchanged(
      s,
      () => s.call(owner, "DELETE", `/invites/multiuse/${String(listed!["id"])}`),
      400,
      "BAD_REQUEST",
      "Invitation has already been revoked",
    );
    expect((await page(local(link))).status).toBe(410);
  });
});

describe("the join page", () => {
  it("creates the account with the invited role, channels, realm defaults and groups; tells the referrer; welcomes with the custom text; the link then is used", async () => {
    await boot();
    const { owner, general, secret } = s.seed;
    const store = s.t.store;
    const group = store.createGroup(owner.id, { name: "ops", description: "", members: [owner.id] });
    const announcements = store.subscribe(owner.id, {
      channels: [{ name: "announce" }],
      newChannel: { isDefault: true },
    });
    expect(announcements.createdChannelIds).toHaveLength(1);
    const q = await queue(owner, ["realm_user", "invites_changed"]);
    const r = await invite(owner, {
      invitee_emails: "newbie@x.dev",
      stream_ids: [secret.id],
      group_ids: [group.id],
      invite_as: 300,
      include_realm_default_subscriptions: true,
      welcome_message_custom_text: "Read #**general** first.",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const link = local(linkTo("newbie@x.dev"));

    const form = await page(link);
    expect(form.status).toBe(200);
    expect(form.text).toContain("newbie@x.dev");
    expect(form.text).toContain('<form method="post"');
    const weak = await page(link, { full_name: "New Bie", password: "abc" });
    expect(weak.status).toBe(400);
    expect(weak.text).toContain("The password is too weak.");
    expect(weak.text).toContain('value="New Bie"');
    const badName = await page(link, { full_name: "x", password: "correct horse battery" });
    expect(badName.text).toContain("Name too short!");

    const done = await page(link, { full_name: "New Bie", password: "correct horse battery" });
    expect(done.status).toBe(200);
    const apiKey = /<code id="api-key">([A-Za-z0-9]+)<\/code>/.exec(done.text)?.[1];
    expect(apiKey).toBeDefined();
    expect(done.text).toContain(`<code id="server-url">${publicBase()}</code>`);

    const user = store.findUserByApiKey(apiKey!)!;
    expect(user).toMatchObject({ email: "newbie@x.dev", fullName: "New Bie", role: 300 });
    expect(store.passwordOf(user.id)?.algorithm).toBe("scrypt");
    const subs = store
      .subscriptionLists(user.id, false)
      .subscribed.map((x) => x.channel.name)
      .sort();
    expect(subs).toEqual(["announce", "secret"]);
    expect(store.groupMembers(owner.id, group.id, true)).toContain(user.id);
    expect(general.id).toBeDefined();

    // The new account works over the API.
    const me = await s.call(user, "GET", "/users/me");
    expect(me.body).toMatchObject({ email: "newbie@x.dev", role: 300 });
    const dms = await s.call(user, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      apply_markdown: false,
      narrow: [{ operator: "is", operand: "dm" }],
    });
    const texts = (dms.body["messages"] as { content: string; sender_email: string }[]).map((m) => [
      m.sender_email,
      m.content,
    ]);
    expect(texts.map(([from]) => from)).toEqual(["welcome-bot@zulip.com", "welcome-bot@zulip.com"]);
    expect(texts[1]![1]).toContain("Read #**general** first.");
    const ownerDms = await s.call(owner, "GET", "/messages", {
      anchor: "newest",
      num_before: 1,
      num_after: 0,
      apply_markdown: false,
      narrow: [{ operator: "is", operand: "dm" }],
    });
    const [notice] = ownerDms.body["messages"] as { content: string; sender_email: string }[];
    expect(notice).toMatchObject({ sender_email: "notification-bot@zulip.com" });
    expect(notice!.content).toContain(`@_**New Bie|${user.id}** accepted your invitation`);

    const got = await events(owner, q);
    expect(
      got.some(
        (e) => e.type === "realm_user" && e["op"] === "add" && (e["person"] as { user_id: number }).user_id === user.id,
      ),
    ).toBe(true);
    expect(got.some((e) => e.type === "invites_changed")).toBe(true);
    expect((await s.call(owner, "GET", "/invites")).body["invites"]).toEqual([]);

    const again = await page(link, { full_name: "Someone Else", password: "correct horse battery" });
    expect(again.status).toBe(410);
    expect(again.text).toContain("This link has already been used.");
  });

  it("expired and unknown links get a clear page; a reusable link asks for the address and stays usable", async () => {
    await boot();
    const { owner } = s.seed;
    await invite(owner, { invitee_emails: "late@x.dev", invite_expires_in_minutes: 10 });
    const link = local(linkTo("late@x.dev"));
    now += 601;
    const expired = await page(link);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain("This link has expired.");
    const before = JSON.stringify(internals(s.t.store).users.size);
    expect((await page(link, { full_name: "Too Late", password: "correct horse battery" })).status).toBe(410);
    expect(JSON.stringify(internals(s.t.store).users.size)).toBe(before);
    const unknown = await page(`${s.base}/join/nosuchkey/`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("This link is not valid.");
    expect((await page(`${s.base}/join/<script>/`)).status).toBe(404);
    expect((await fetch(link, { method: "DELETE" })).status).toBe(405);

    const multi = local((await s.call(owner, "POST", "/invites/multiuse", {})).body["invite_link"] as string);
    expect((await page(multi)).text).toContain('name="email"');
    const taken = await page(multi, {
      email: "alice@test.dev",
      full_name: "Alice Two",
      password: "correct horse battery",
    });
    expect(taken.status).toBe(400);
    expect(taken.text).toContain("Already has an account.");
    for (const email of ["one@x.dev", "two@x.dev"]) {
      const ok = await page(multi, { email, full_name: "Multi User", password: "correct horse battery" });
      expect(ok.status).toBe(200);
      expect(s.t.store.findUserByEmail(s.seed.realm.id, email)?.role).toBe(400);
    }
  });
});

interface PageAnswer {
  readonly status: number;
  readonly text: string;
  readonly retryAfter: string | null;
}

const limits = (byAddress: number, byLink: number) => ({
  joinLimit: {
    byAddress: { requests: byAddress, windowSeconds: 3600 },
    byLink: { requests: byLink, windowSeconds: 3600 },
  },
});

describe("join page limits and hashing (hardening item 6)", () => {
  const FORM = { full_name: "New Person", password: "correct horse battery" };

  /** A join post from a given loopback address (the whole of 127/8 reaches the server). */
  function postFrom(localAddress: string, url: string, form: Record<string, string>): Promise<PageAnswer> {
    const body = new URLSearchParams(form).toString();
    const { hostname: host, port, pathname: path } = new URL(url);
    return new Promise((resolve, reject) => {
      const headers = { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": body.length };
      const req = httpRequest({ host, port, path, method: "POST", localAddress, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, text, retryAfter: res.headers["retry-after"] ?? null });
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  async function multiuseLink(): Promise<string> {
    const r = await s.call(s.seed.owner, "POST", "/invites/multiuse", {});
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return local(r.body["invite_link"] as string);
  }

  const userCount = () => internals(s.t.store).users.size;

  it("checks the whole form before hashing: a refused form never reaches scrypt", async () => {
    await boot();
    const link = await multiuseLink();
    const started = passwordHashPool.started;
    const refused: [Record<string, string>, string][] = [
      [{ ...FORM }, "Invalid address."],
      [{ ...FORM, email: "not an address" }, "Invalid address."],
      [{ ...FORM, email: "alice@test.dev" }, "Already has an account."],
      [{ ...FORM, email: "fresh@x.dev", full_name: "x" }, "Name too short!"],
      [{ ...FORM, email: "fresh@x.dev", full_name: "" }, "Name too short!"],
      [{ ...FORM, email: "fresh@x.dev", password: "abc" }, "The password is too weak."],
      [{ ...FORM, email: "fresh@x.dev", password: "fresh@x.dev" }, "The password is too weak."],
      [{ ...FORM, email: "fresh@x.dev", password: "p".repeat(101) }, "Password is too long (limit: 100 characters)."],
    ];
    const before = userCount();
    for (const [form, reason] of refused) {
      const r = await page(link, form);
      expect(r.status, reason).toBe(400);
      expect(r.text).toContain(reason.replace("'", "&#39;"));
    }
    expect(passwordHashPool.started - started).toBe(0);
    expect(userCount()).toBe(before);
    expect((await page(link, { ...FORM, email: "fresh@x.dev" })).status).toBe(200);
    expect(passwordHashPool.started - started).toBe(1);
  });

  it("limits submissions per client address before looking at them, and leaves other addresses alone", async () => {
    await boot(limits(3, 100));
    const link = await multiuseLink();
    expect((await postFrom("127.0.0.1", link, { ...FORM, email: "bad" })).status).toBe(400);
    expect((await postFrom("127.0.0.1", `${s.base}/join/nosuchkey/`, FORM)).status).toBe(404);
    expect((await postFrom("127.0.0.1", link, { ...FORM, email: "one@x.dev" })).status).toBe(200);
    const started = passwordHashPool.started;
    const before = userCount();
    const limited = await postFrom("127.0.0.1", link, { ...FORM, email: "two@x.dev" });
    expect(limited.status).toBe(429);
    expect(limited.text).toContain("Too many sign-up attempts from your network.");
    // One submission back every 20 minutes.
    expect(Number(limited.retryAfter)).toBeGreaterThan(1100);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(1200);
    expect(passwordHashPool.started).toBe(started);
    expect(userCount()).toBe(before);
    expect((await postFrom("127.0.0.2", link, { ...FORM, email: "two@x.dev" })).status).toBe(200);
  });

  it("limits complete forms per link: junk posts do not use up a link, other links are unaffected", async () => {
    await boot(limits(100, 2));
    const link = await multiuseLink();
    for (let i = 0; i < 5; i++) {
      expect((await page(link, { ...FORM, email: `junk${i}@x.dev`, full_name: "" })).status).toBe(400);
    }
    for (const email of ["a1@x.dev", "a2@x.dev"]) expect((await page(link, { ...FORM, email })).status).toBe(200);
    const started = passwordHashPool.started;
    const before = userCount();
    const limited = await page(link, { ...FORM, email: "a3@x.dev" });
    expect(limited.status).toBe(429);
    expect(limited.text).toContain("Too many accounts are being created with this link.");
    expect(passwordHashPool.started).toBe(started);
    expect(userCount()).toBe(before);
    expect((await page(await multiuseLink(), { ...FORM, email: "a3@x.dev" })).status).toBe(200);
  });

  it("answers 429 with Retry-After while the hash pool is full, and gives the link its attempt back", async () => {
    await boot(limits(100, 1));
    const link = await multiuseLink();
    passwordHashPool.configure({ concurrency: 1, maxQueued: 0 });
    let open = (): void => undefined;
    const held = passwordHashPool.run(() => new Promise<void>((resolve) => (open = resolve)));
    const before = userCount();
    try {
      const busy = await postFrom("127.0.0.1", link, { ...FORM, email: "late@x.dev" });
      expect(busy.status).toBe(429);
      expect(busy.retryAfter).toBe("1");
      expect(busy.text).toContain("The server is busy.");
      expect(userCount()).toBe(before);
    } finally {
      open();
      await held;
      passwordHashPool.configure(defaultHashPoolLimits());
    }
    expect((await page(link, { ...FORM, email: "late@x.dev" })).status).toBe(200);
  });
});

describe("email changes (PATCH /settings email)", () => {
  it("mails a confirmation link to the new address and changes nothing until it is opened; opening it changes the email once", async () => {
    await boot();
    const { alice, bob } = s.seed;
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "PATCH", "/settings", { email: "not an address" }),
      400,
      "BAD_REQUEST",
      "Invalid address.",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "PATCH", "/settings", { email: bob.email }),
      400,
      "BAD_REQUEST",
      "Already has an account.",
    );
    const q = await queue(bob, ["realm_user"]);
    const r = await s.call(alice, "PATCH", "/settings", { email: "alice@new.dev" });
    expect(r.status).toBe(200);
    expect(s.t.store.getUser(alice.id).email).toBe("alice@test.dev");
    const mail = s.t.store.outboxMail().find((m) => m.to[0] === "alice@new.dev")!;
    const link = /(http:\/\/\S+\/accounts\/confirm_new_email\/[a-z0-9]+\/)/.exec(mail.text)![1]!;
    expect(await events(bob, q)).toEqual([]);

    const opened = await page(local(link));
    expect(opened.status).toBe(200);
    expect(opened.text).toContain("alice@new.dev");
    expect(s.t.store.getUser(alice.id)).toMatchObject({ email: "alice@new.dev", deliveryEmail: "alice@new.dev" });
    expect((await s.call({ ...alice, email: "alice@new.dev" }, "GET", "/users/me")).status).toBe(200);
    const got = await events(bob, q);
    // Zulip's three updates in its order (the same write as an owner's change): the address, the Gravatar that follows
    // it, the API email.
    expect(got.map((e) => e["person"])).toEqual([
      { user_id: alice.id, delivery_email: "alice@new.dev" },
      expect.objectContaining({ user_id: alice.id, avatar_source: "G" }),
      { user_id: alice.id, new_email: "alice@new.dev" },
    ]);
    // The old address hears of it.
    expect(s.t.store.outboxMail().some((m) => m.to[0] === "alice@test.dev" && m.subject.includes("has changed"))).toBe(
      true,
    );
    const reused = await page(local(link));
    expect(reused.status).toBe(410);
    expect(reused.text).toContain("already been used");
  });

  it("limits changes per user as Zulip's email_change_by_user (2 an hour, 5 a day): no mail over it", async () => {
    smtp = await startSmtp();
    const config = { EMAIL_HOST: "127.0.0.1", EMAIL_PORT: smtp.port };
    await boot({ now: () => now * 1000 }, config);
    const { alice, bob } = s.seed;
    const from = (name: string | null) => fromHeader(DEFAULT_CONFIG, "localhost", name);
    const sender = new MailSender(s.t.store, transportFor({ ...DEFAULT_CONFIG, ...config }, s.t.dir), { from });
    const deliver = async (): Promise<string[]> => {
      await sender.runOnce();
      return smtp!.received.map((m) => m.envelopeTo.join());
    };
    const changeTo = (email: string) => s.call(alice, "PATCH", "/settings", { email });
    expect((await changeTo("a1@new.dev")).status).toBe(200);
    // Refused addresses and the current one are checked first and use up nothing.
    expect((await changeTo("not an address")).status).toBe(400);
    expect((await changeTo(alice.email)).status).toBe(200);
    expect((await changeTo("a2@new.dev")).status).toBe(200);
    const LIMITED = "API usage exceeded rate limit";
    const limited = await expectRejectedUnchanged(s, () => changeTo("a3@new.dev"), 429, "RATE_LIMIT_HIT", LIMITED);
    expect(limited["retry-after"]).toBeCloseTo(3600, 0);
    const again = await changeTo("a3@new.dev");
    expect(again.headers.get("retry-after")).toBe("3600.000");
    // A refused change takes the rest of its request with it.
    const withName = () => s.call(alice, "PATCH", "/settings", { email: "a3@new.dev", full_name: "Alice Else" });
    await expectRejectedUnchanged(s, withName, 429, "RATE_LIMIT_HIT", LIMITED);
    expect((await s.call(bob, "PATCH", "/settings", { email: "b1@new.dev" })).status).toBe(200);
    expect(await deliver()).toEqual(["a1@new.dev", "a2@new.dev", "b1@new.dev"]);

    now += 3600;
    expect((await changeTo("a3@new.dev")).status).toBe(200);
    expect((await changeTo("a4@new.dev")).status).toBe(200);
    now += 3600;
    expect((await changeTo("a5@new.dev")).status).toBe(200);
    // Five in a day: the hourly window has room, the daily one does not until the first leaves it.
    const daily = await expectRejectedUnchanged(s, () => changeTo("a6@new.dev"), 429, "RATE_LIMIT_HIT", LIMITED);
    expect(daily["retry-after"]).toBeCloseTo(86_400 - 7200, 0);
    expect((await deliver()).slice(3)).toEqual(["a3@new.dev", "a4@new.dev", "a5@new.dev"]);
    sender.stop();
  });

  it("an expired confirmation link changes nothing", async () => {
    await boot();
    await s.call(s.seed.alice, "PATCH", "/settings", { email: "alice@later.dev" });
    const mail = s.t.store.outboxMail().find((m) => m.to[0] === "alice@later.dev")!;
    const link = /(http:\/\/\S+\/accounts\/confirm_new_email\/[a-z0-9]+\/)/.exec(mail.text)![1]!;
    now += 86_401;
    const r = await page(local(link));
    expect(r.status).toBe(410);
    expect(r.text).toContain("This link has expired.");
    expect(s.t.store.getUser(s.seed.alice.id).email).toBe("alice@test.dev");
  });
});
