/**
 * Muted users over HTTP (Zulip's mute-user and unmute-user): who may mute whom, Zulip's
 * errors with nothing changed, muted_users events to the muter and register's
 * muted_users (checked with zulip-flutter's decoders), and the effects Zulip gives a
 * mute: the muted user's messages arrive read for the muter (channel, direct and group
 * direct; unread counts, unread mentions and is:unread follow), muting marks their
 * earlier messages read (update_message_flags), and they notify the muter of nothing.
 */
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { decodeMutedUsersEvent, decodeSnapshotSections } from "../support/flutter-decoders.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

type Ev = Record<string, unknown> & { type: string };

const mute = (user: User, id: number | string) => server.call(user, "POST", `/users/me/muted_users/${id}`);
const unmute = (user: User, id: number | string) => server.call(user, "DELETE", `/users/me/muted_users/${id}`);
const snapshot = async (user: User) =>
  (
    await server.call(user, "POST", "/register", {
      fetch_event_types: ["muted_users", "user_status", "message", "update_message_flags"],
    })
  ).body;
const queue = async (user: User, types: string[]) =>
  (await server.call(user, "POST", "/register", { event_types: types })).body["queue_id"] as string;
const events = async (user: User, q: string) =>
  (await server.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
    "events"
  ] as Ev[];
const send = async (user: User, params: Record<string, unknown>) =>
  (await server.call(user, "POST", "/messages", params)).body["id"] as number;
const unreadIds = async (user: User, narrow: unknown[] = []) =>
  (
    (
      await server.call(user, "GET", "/messages", {
        anchor: "newest",
        num_before: 100,
        num_after: 0,
        narrow: [...narrow, { operator: "is", operand: "unread" }],
      })
    ).body["messages"] as { id: number }[]
  ).map((m) => m.id);

function makeBot(owner: User): User {
  return server.t.store.createUser({
    realmId: owner.realmId,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    bot: { type: 1, ownerId: owner.id },
  });
}

describe("POST/DELETE /users/me/muted_users/{id}", () => {
  it("lets every kind of user mute anyone of the realm, bots and deactivated users included", async () => {
    const { owner, alice, bob, guest } = server.seed;
    const admin = server.t.store.createUser({
      realmId: owner.realmId,
      email: "a@test.dev",
      fullName: "Ada",
      role: 200,
    });
    const bot = makeBot(alice);
    const gone = server.t.store.createUser({ realmId: owner.realmId, email: "gone@test.dev", fullName: "Gone" });
    server.t.store.setUserActive(gone.id, false);
    for (const [muter, muted] of [
      [owner, bob],
      [admin, bob],
      [alice, bot],
      [guest, gone],
      [bot, alice],
    ] as const) {
      expect((await mute(muter, muted.id)).body).toEqual({ result: "success", msg: "" });
      expect(((await snapshot(muter))["muted_users"] as { id: number }[]).map((m) => m.id)).toEqual([muted.id]);
      expect((await unmute(muter, muted.id)).body).toEqual({ result: "success", msg: "" });
      expect((await snapshot(muter))["muted_users"]).toEqual([]);
    }
  });

  it("sends the muter (only) the whole list after each change, as register lists it", async () => {
    const { alice, bob, owner } = server.seed;
    const qAlice = await queue(alice, ["muted_users"]);
    const qBob = await queue(bob, ["muted_users"]);
    const before = server.t.store.now();
    await mute(alice, bob.id);
    await mute(alice, owner.id);
    await unmute(alice, bob.id);
    const evs = (await events(alice, qAlice)).map(({ id: _id, ...e }) => e);
    expect(evs.map((e) => decodeMutedUsersEvent(e))).toEqual([[bob.id], [bob.id, owner.id], [owner.id]]);
    const last = evs.at(-1)!["muted_users"] as { id: number; timestamp: number }[];
    expect(last[0]!.timestamp).toBeGreaterThanOrEqual(before);
    expect((await events(bob, qBob)).filter((e) => e.type === "muted_users")).toEqual([]);
    const sections = await snapshot(alice);
    expect(sections["muted_users"]).toEqual(last);
    expect(decodeSnapshotSections(sections).mutedUsers).toEqual([owner.id]);
  });

  it("refuses self, twice, not muted, other realms and missing users with Zulip's errors, changing nothing", async () => {
    const { alice, bob } = server.seed;
    const { owner: stranger } = server.t.store.createRealm({
      subdomain: "elsewhere",
      name: "Elsewhere",
      owner: { email: "eve@else.dev", fullName: "Eve" },
    });
    await expectRejectedUnchanged(server, () => mute(alice, alice.id), 400, "BAD_REQUEST", "Cannot mute self");
    await expectRejectedUnchanged(server, () => unmute(alice, bob.id), 400, "BAD_REQUEST", "User is not muted");
    await mute(alice, bob.id);
    await expectRejectedUnchanged(server, () => mute(alice, bob.id), 400, "BAD_REQUEST", "User already muted");
    for (const id of [stranger.id, 999_999, "bob"]) {
      await expectRejectedUnchanged(server, () => mute(alice, id), 400, "BAD_REQUEST", "No such user");
      await expectRejectedUnchanged(server, () => unmute(alice, id), 400, "BAD_REQUEST", "No such user");
    }
  });
});

describe("a muted user's messages", () => {
  it("arrive read for the muter (channel, direct, group direct; mentions too) and unread for everyone else", async () => {
    const { owner, alice, bob } = server.seed;
    await mute(alice, bob.id);
    const q = await queue(alice, ["message"]);
    const channel = await send(bob, { type: "stream", to: "general", topic: "t", content: "@**Alice** look" });
    const direct = await send(bob, { type: "direct", to: [alice.id], content: "psst" });
    const group = await send(bob, { type: "direct", to: [alice.id, owner.id], content: "all of us" });
    const flags = new Map(
      (await events(alice, q)).map((e) => [(e["message"] as { id: number }).id, e["flags"] as string[]]),
    );
    expect(flags.get(channel)).toEqual(expect.arrayContaining(["read", "mentioned"]));
    expect(flags.get(direct)).toContain("read");
    expect(flags.get(group)).toContain("read");
    expect(await unreadIds(alice)).toEqual([]);
    const unread = (await snapshot(alice))["unread_msgs"] as { count: number; mentions: number[] };
    expect(unread.count).toBe(0);
    expect(unread.mentions).toEqual([]);
    // The owner, who mutes no one, has them unread.
    expect(await unreadIds(owner)).toEqual([channel, group]);
    // Unmuting changes no flag; later messages are unread again.
    await unmute(alice, bob.id);
    const later = await send(bob, { type: "direct", to: [alice.id], content: "again" });
    expect(await unreadIds(alice)).toEqual([later]);
  });

  it("sent before the mute are marked read for the muter when muting, with an update_message_flags event", async () => {
    const { owner, alice, bob } = server.seed;
    const ids = [
      await send(bob, { type: "stream", to: "general", topic: "t", content: "one" }),
      await send(bob, { type: "direct", to: [alice.id], content: "two" }),
      await send(owner, { type: "direct", to: [alice.id], content: "not bob" }),
    ];
    expect(await unreadIds(alice)).toEqual(ids);
    const q = await queue(alice, ["update_message_flags", "muted_users"]);
    await mute(alice, bob.id);
    expect(await unreadIds(alice)).toEqual([ids[2]]);
    const evs = (await events(alice, q)).map(({ id: _id, ...e }) => e);
    expect(evs.map((e) => e.type)).toEqual(["muted_users", "update_message_flags"]);
    expect(evs[1]).toMatchObject({ op: "add", flag: "read", messages: [ids[0], ids[1]] });
    expect(await unreadIds(owner)).toContain(ids[0]);
  });

  it("notify the muter of nothing (mobile push), at send and when an edit mentions them", async () => {
    const { alice, bob } = server.seed;
    const store = server.t.store;
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
    const items = () => store.pushOutboxItems(0, 1000).filter((i) => i.kind === "message");
    await send(bob, { type: "direct", to: [alice.id], content: "before muting" });
    expect(items()).toHaveLength(1);
    await mute(alice, bob.id);
    await send(bob, { type: "direct", to: [alice.id], content: "muted" });
    const id = await send(bob, { type: "stream", to: "general", topic: "t", content: "plain" });
    await server.call(bob, "PATCH", `/messages/${id}`, { content: "@**Alice** now" });
    expect(items()).toHaveLength(1);
  });
});
