/**
 * User status over HTTP (Zulip's update-status, update-status-for-user and
 * get-user-status): text and emoji (Unicode, custom, Zulip's extra emoji), the
 * deprecated `away` as presence_enabled, who may set whose, Zulip's errors with nothing
 * changed, user_status events to the realm, register's user_status, and zulip-flutter's
 * decoders on all of it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { decodeSnapshotSections, decodeUserStatusEvent } from "../support/flutter-decoders.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

type Ev = Record<string, unknown> & { type: string };

const setOwn = (user: User, params: Record<string, unknown>) => server.call(user, "POST", "/users/me/status", params);
const statusOf = async (viewer: User, userId: number) =>
  (await server.call(viewer, "GET", `/users/${userId}/status`)).body;
const registered = async (user: User) =>
  (await server.call(user, "POST", "/register", { fetch_event_types: ["user_status", "muted_users"] })).body;
const queue = async (user: User, types: string[]) =>
  (await server.call(user, "POST", "/register", { event_types: types })).body["queue_id"] as string;
const events = async (user: User, q: string) =>
  (await server.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
    "events"
  ] as Ev[];
const ofType = (evs: Ev[], type: string) => evs.filter((e) => e.type === type);

function makeBot(owner: User): User {
  return server.t.store.createUser({
    realmId: owner.realmId,
    email: `bot${Math.random().toString(36).slice(2)}@test.dev`,
    fullName: "Helper",
    bot: { type: 1, ownerId: owner.id },
  });
}

function otherRealmUser(): User {
  const { owner } = server.t.store.createRealm({
    subdomain: "elsewhere",
    name: "Elsewhere",
    owner: { email: "eve@else.dev", fullName: "Eve" },
  });
  return owner;
}

describe("POST /users/me/status", () => {
  it("sets text and emoji for every kind of human user; GET, register and events show them", async () => {
    const { owner, alice, guest, bob } = server.seed;
    const q = await queue(bob, ["user_status"]);
    for (const user of [owner, alice, guest]) {
      const r = await setOwn(user, { status_text: "  in a meeting  ", emoji_name: "car" });
      expect(r.body).toEqual({ result: "success", msg: "" });
    }
    const car = { emoji_name: "car", emoji_code: "1f697", reaction_type: "unicode_emoji" };
    expect(await statusOf(bob, alice.id)).toMatchObject({ status: { status_text: "in a meeting", ...car } });
    const sections = await registered(bob);
    expect(sections["user_status"]).toEqual({
      [owner.id]: { status_text: "in a meeting", ...car },
      [alice.id]: { status_text: "in a meeting", ...car },
      [guest.id]: { status_text: "in a meeting", ...car },
    });
    const evs = ofType(await events(bob, q), "user_status");
    expect(evs.map(({ id: _id, ...e }) => e)).toEqual(
      [owner, alice, guest].map((u) => ({ type: "user_status", user_id: u.id, status_text: "in a meeting", ...car })),
    );
    // zulip-flutter decodes the events and the section.
    for (const e of evs)
      expect(decodeUserStatusEvent(e).change.emoji).toEqual({
        name: "car",
        code: "1f697",
        reactionType: "unicode_emoji",
      });
    expect(decodeSnapshotSections(sections).userStatuses.get(alice.id)?.text).toBe("in a meeting");
  });

  it("changes only what is given; an empty emoji_name or status_text clears, as the event says", async () => {
    const { alice, bob } = server.seed;
    await setOwn(alice, { status_text: "lunch", emoji_name: "zulip" });
    expect((await statusOf(bob, alice.id))["status"]).toEqual({
      status_text: "lunch",
      emoji_name: "zulip",
      emoji_code: "zulip",
      reaction_type: "zulip_extra_emoji",
    });
    await setOwn(alice, { status_text: "dinner" });
    expect((await statusOf(bob, alice.id))["status"]).toMatchObject({ status_text: "dinner", emoji_name: "zulip" });
    const q = await queue(bob, ["user_status"]);
    await setOwn(alice, { emoji_name: "" });
    await setOwn(alice, { status_text: "" });
    const evs = ofType(await events(bob, q), "user_status").map(({ id: _id, ...e }) => e);
    expect(evs).toEqual([
      { type: "user_status", user_id: alice.id, emoji_name: "", emoji_code: "", reaction_type: "unicode_emoji" },
      { type: "user_status", user_id: alice.id, status_text: "" },
    ]);
    expect(evs.map((e) => decodeUserStatusEvent(e).change)).toEqual([
      { text: undefined, emoji: null },
      { text: null, emoji: undefined },
    ]);
    expect((await statusOf(bob, alice.id))["status"]).toEqual({});
    expect((await registered(bob))["user_status"]).toEqual({});
  });

  it("takes the realm's custom emoji by name, and by name, code and type", async () => {
    const { owner, alice, bob } = server.seed;
    const emoji = server.t.store.addRealmEmoji(owner.id, {
      name: "parrot",
      fileName: "a".repeat(16) + ".png",
      isAnimated: false,
    });
    await setOwn(alice, { emoji_name: "parrot" });
    expect((await statusOf(bob, alice.id))["status"]).toEqual({
      emoji_name: "parrot",
      emoji_code: String(emoji.id),
      reaction_type: "realm_emoji",
    });
    const r = await setOwn(bob, { emoji_name: "parrot", emoji_code: String(emoji.id), reaction_type: "realm_emoji" });
    expect(r.status).toBe(200);
  });

  it("away=true turns presence_enabled off (user_settings event) and reports away; away=false back", async () => {
    const { alice, bob } = server.seed;
    const q = await queue(alice, ["user_settings", "user_status"]);
    await setOwn(alice, { away: true });
    expect((await statusOf(bob, alice.id))["status"]).toEqual({ away: true });
    expect((await registered(bob))["user_status"]).toEqual({ [alice.id]: { away: true } });
    const settings = (await server.call(alice, "POST", "/register", { fetch_event_types: ["user_settings"] })).body[
      "user_settings"
    ] as Record<string, unknown>;
    expect(settings["presence_enabled"]).toBe(false);
    await setOwn(alice, { away: false });
    expect((await statusOf(bob, alice.id))["status"]).toEqual({});
    const evs = (await events(alice, q)).map(({ id: _id, ...e }) => e);
    expect(evs).toEqual([
      { type: "user_settings", op: "update", property: "presence_enabled", value: false },
      { type: "user_status", user_id: alice.id, away: true },
      { type: "user_settings", op: "update", property: "presence_enabled", value: true },
      { type: "user_status", user_id: alice.id, away: false },
    ]);
  });

  it("refuses bad input with Zulip's errors and changes nothing", async () => {
    const { alice } = server.seed;
    const cases: [Record<string, unknown>, string][] = [
      [{}, "Client did not pass any new values."],
      [{ status_text: "x".repeat(61) }, "status_text is too long (limit: 60 characters)"],
      [
        { status_text: "In a meeting", emoji_code: "1f4bb" },
        "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
      ],
      [{ reaction_type: "unicode_emoji" }, "Client did not pass any new values."],
      [
        { away: false, reaction_type: "unicode_emoji" },
        "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
      ],
      [{ status_text: "In a meeting", emoji_code: "1f4bb", emoji_name: "invalid" }, "Emoji 'invalid' does not exist"],
      [{ emoji_name: "invalid" }, "Emoji 'invalid' does not exist"],
      [{ emoji_code: "1f4bb", emoji_name: "car" }, "Invalid emoji name."],
      [{ emoji_code: "1f4bb", emoji_name: "car", reaction_type: "realm_emoji" }, "Invalid custom emoji."],
      [{ emoji_code: "zulip", emoji_name: "car", reaction_type: "zulip_extra_emoji" }, "Invalid emoji name."],
      [{ emoji_code: "1f697", emoji_name: "car", reaction_type: "bogus" }, "Invalid emoji type."],
      [{ away: "maybe" }, "away is not a boolean"],
    ];
    for (const [params, msg] of cases)
      await expectRejectedUnchanged(server, () => setOwn(alice, params), 400, "BAD_REQUEST", msg);
    // Sixty characters after stripping are fine.
    expect((await setOwn(alice, { status_text: `   ${"y".repeat(60)}   ` })).status).toBe(200);
  });

  it("is not for bots", async () => {
    const bot = makeBot(server.seed.alice);
    await expectRejectedUnchanged(
      server,
      () => setOwn(bot, { status_text: "beep" }),
      400,
      "BAD_REQUEST",
      "This endpoint does not accept bot requests.",
    );
  });
});

describe("POST /users/{user_id}/status", () => {
  it("lets administrators set a human user's status, announced as that user's", async () => {
    const { owner, bob, alice } = server.seed;
    const admin = server.t.store.createUser({
      realmId: owner.realmId,
      email: "adm@test.dev",
      fullName: "Ada",
      role: 200,
    });
    const q = await queue(alice, ["user_status"]);
    expect((await server.call(admin, "POST", `/users/${bob.id}/status`, { status_text: "on leave" })).status).toBe(200);
    expect((await server.call(owner, "POST", `/users/${bob.id}/status`, { emoji_name: "car" })).status).toBe(200);
    expect((await statusOf(alice, bob.id))["status"]).toMatchObject({ status_text: "on leave", emoji_name: "car" });
    const evs = ofType(await events(alice, q), "user_status").map(({ id: _id, ...e }) => e);
    expect(evs[0]).toEqual({ type: "user_status", user_id: bob.id, status_text: "on leave" });
  });

  it("does not take away for another user: presence stays", async () => {
    const { owner, bob } = server.seed;
    const r = await server.call(owner, "POST", `/users/${bob.id}/status`, { away: true, status_text: "x" });
    expect(r.status).toBe(200);
    expect(r.body["ignored_parameters_unsupported"]).toEqual(["away"]);
    expect((await statusOf(owner, bob.id))["status"]).toEqual({ status_text: "x" });
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "POST", `/users/${bob.id}/status`, { away: true }),
      400,
      "BAD_REQUEST",
      "Client did not pass any new values.",
    );
  });

  it("refuses members, guests, bots, bot targets, deactivated and foreign users, changing nothing", async () => {
    const { owner, alice, bob, guest } = server.seed;
    const bot = makeBot(owner);
    const other = otherRealmUser();
    const gone = server.t.store.createUser({ realmId: owner.realmId, email: "gone@test.dev", fullName: "Gone" });
    server.t.store.setUserActive(gone.id, false);
    const post = (actor: User, target: number) => () =>
      server.call(actor, "POST", `/users/${target}/status`, { status_text: "x" });
    await expectRejectedUnchanged(server, post(alice, bob.id), 400, "BAD_REQUEST", "Insufficient permission");
    await expectRejectedUnchanged(server, post(guest, bob.id), 400, "BAD_REQUEST", "Insufficient permission");
    await expectRejectedUnchanged(
      server,
      post(bot, bob.id),
      400,
      "BAD_REQUEST",
      "This endpoint does not accept bot requests.",
    );
    await expectRejectedUnchanged(server, post(owner, bot.id), 400, "BAD_REQUEST", "No such user");
    await expectRejectedUnchanged(server, post(owner, gone.id), 400, "BAD_REQUEST", "User is deactivated");
    await expectRejectedUnchanged(server, post(owner, other.id), 400, "BAD_REQUEST", "No such user");
    await expectRejectedUnchanged(server, post(owner, 999_999), 400, "BAD_REQUEST", "No such user");
  });
});

describe("GET /users/{user_id}/status", () => {
  it("answers {} for a user who never set one, to anyone of the realm, bots and guests included", async () => {
    const { alice, guest } = server.seed;
    const bot = makeBot(alice);
    for (const viewer of [guest, bot])
      expect((await server.call(viewer, "GET", `/users/${alice.id}/status`)).body).toEqual({
        result: "success",
        msg: "",
        status: {},
      });
  });

  it("names no bot, no foreign user and no missing one; a deactivated user is deactivated", async () => {
    const { alice, bob } = server.seed;
    const bot = makeBot(alice);
    const other = otherRealmUser();
    await setOwn(alice, { status_text: "hidden?" });
    for (const id of [bot.id, other.id, 999_999])
      expect((await server.call(bob, "GET", `/users/${id}/status`)).body["msg"]).toBe("No such user");
    server.t.store.setUserActive(alice.id, false);
    expect((await server.call(bob, "GET", `/users/${alice.id}/status`)).body["msg"]).toBe("User is deactivated");
    // register leaves deactivated users out.
    expect((await registered(bob))["user_status"]).toEqual({});
  });
});
