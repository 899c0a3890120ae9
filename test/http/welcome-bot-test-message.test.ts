/**
 * POST /realm/test_welcome_bot_custom_message over HTTP: the permission matrix (owner,
 * administrator, moderator, member, guest, bots, another realm's owner), Zulip's checks
 * of the text, and the message itself: a direct message from the Welcome Bot to the
 * caller only, with the custom text, reaching the caller's queue.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLE, type User } from "../../src/engine/index.js";
import {
  basicAuth,
  encodeParams,
  expectRejectedUnchanged,
  rawRequest,
  startServer,
  type TestServer,
} from "../support/http.js";

let s: TestServer;
let admin: User;
let moderator: User;
let adminBot: User;
let memberBot: User;
let queen: User;

beforeAll(async () => {
  s = await startServer();
  const { store } = s.t;
  const realmId = s.seed.realm.id;
  admin = store.createUser({ realmId, email: "admin@test.dev", fullName: "Ada Admin", role: ROLE.ADMINISTRATOR });
  moderator = store.createUser({ realmId, email: "mod@test.dev", fullName: "Mo Moderator", role: ROLE.MODERATOR });
  const bot = (email: string, role: (typeof ROLE)[keyof typeof ROLE]) =>
    store.createUser({
      realmId,
      email,
      fullName: email.split("@")[0]!,
      role,
      bot: { type: 1, ownerId: s.seed.owner.id },
    });
  adminBot = bot("admin-bot@test.dev", ROLE.ADMINISTRATOR);
  memberBot = bot("member-bot@test.dev", ROLE.MEMBER);
  queen = store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen" },
  }).owner;
});
afterAll(() => s.close());

const PATH = "/realm/test_welcome_bot_custom_message";
const NOT_ADMIN = [400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator"] as const;
const send = (user: User, text: unknown) => s.call(user, "POST", PATH, { welcome_message_custom_text: text });

/** The message as `reader` sees it, or the refusal. */
const fetchMessage = (reader: User, id: number) => s.call(reader, "GET", `/messages/${id}`);

describe("POST /realm/test_welcome_bot_custom_message", () => {
  it("administrators only (bots by their role); the others are refused and nothing changes", async () => {
    const { owner, alice, guest } = s.seed;
    for (const caller of [moderator, alice, guest, memberBot])
      await expectRejectedUnchanged(s, () => send(caller, "Hello"), ...NOT_ADMIN);
    for (const caller of [owner, admin, adminBot]) {
      const r = await send(caller, "Hello");
      expect(r.status).toBe(200);
      expect(r.body["message_id"]).toEqual(expect.any(Number));
    }
  });

  it("sends the Welcome Bot's direct message with the custom text to the caller alone", async () => {
    const reg = await s.call(admin, "POST", "/register", { event_types: ["message"] });
    const r = await send(admin, "Read **#general** first.");
    expect(r.status).toBe(200);
    const id = r.body["message_id"] as number;
    const seen = await fetchMessage(admin, id);
    expect(seen.body["message"]).toMatchObject({
      sender_email: "welcome-bot@zulip.com",
      sender_full_name: "Welcome Bot",
      type: "private",
      display_recipient: [
        expect.objectContaining({ email: "admin@test.dev" }),
        expect.objectContaining({ email: "welcome-bot@zulip.com" }),
      ],
    });
    const content = (seen.body["message"] as Record<string, unknown>)["content"];
    expect(content).toContain("A message from the administrators of");
    expect(content).toContain("<strong>#general</strong> first.");
    // Nobody else may read it, not even the realm's owner.
    expect((await fetchMessage(s.seed.owner, id)).status).toBe(400);
    const events = await s.call(admin, "GET", "/events", {
      queue_id: reg.body["queue_id"],
      last_event_id: reg.body["last_event_id"],
      dont_block: true,
    });
    const messages = (events.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] === "message");
    expect(messages.map((e) => (e["message"] as Record<string, unknown>)["id"])).toEqual([id]);
  });

  it("another realm's administrator gets the message from their own realm's Welcome Bot", async () => {
    const r = await rawRequest(
      s.base,
      "POST",
      PATH,
      {
        Host: "bee.localhost",
        Authorization: basicAuth(s.t.store.getUser(queen.id)),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      encodeParams({ welcome_message_custom_text: "Buzz" }).toString(),
    );
    expect(r.status).toBe(200);
    const id = r.body["message_id"] as number;
    const { message } = s.t.store.getMessage(queen.id, id);
    expect(message.content).toContain("administrators of Bee");
    const sender = s.t.store.getUser(message.senderId);
    expect(sender).toMatchObject({ realmId: queen.realmId, email: "welcome-bot@zulip.com" });
    expect((await fetchMessage(admin, id)).status).toBe(400);
  });

  it("refuses an empty, missing or too long text, changing nothing; whitespace is sent as given", async () => {
    await expectRejectedUnchanged(s, () => send(admin, ""), 400, "BAD_REQUEST", "Message must not be empty");
    await expectRejectedUnchanged(
      s,
      () => s.call(admin, "POST", PATH),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'welcome_message_custom_text' argument",
    );
    await expectRejectedUnchanged(
      s,
      () => send(admin, "x".repeat(8001)),
      400,
      "BAD_REQUEST",
      "welcome_message_custom_text is too long (limit: 8000 characters)",
    );
    // Refused by the message's own checks before the Welcome Bot is created (a realm without one yet).
    const bee = s.t.store.createRealm({
      subdomain: "wasp",
      name: "Wasp",
      owner: { email: "owner@wasp.test", fullName: "Wasp Owner" },
    }).owner;
    const asWasp = () =>
      rawRequest(
        s.base,
        "POST",
        PATH,
        {
          Host: "wasp.localhost",
          Authorization: basicAuth(s.t.store.getUser(bee.id)),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        encodeParams({ welcome_message_custom_text: "a\0b" }).toString(),
      );
    await expectRejectedUnchanged(s, asWasp, 400, "BAD_REQUEST", "Message must not contain null bytes");
    expect((await send(admin, "🐝".repeat(8000))).status).toBe(200);
    expect((await send(admin, " ")).status).toBe(200);
  });
});
