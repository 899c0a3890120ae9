/**
 * GET /messages/{message_id}/read_receipts over HTTP: Zulip's rules (the realm setting, users' send_read_receipts,
 * the sender, deactivated users, rows a move took away), the caller's access, and refusals that change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";

let s: TestServer;
let carol: User;

beforeAll(async () => {
  s = await startServer();
  const { realm, owner } = s.seed;
  carol = s.t.store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
  s.t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [carol.id] });
});
afterAll(() => s.close());

async function send(user: User, params: Record<string, unknown>): Promise<number> {
  const r = await s.call(user, "POST", "/messages", { read_by_sender: true, ...params });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["id"] as number;
}
const toGeneral = (user: User, topic = "t") => send(user, { type: "stream", to: "general", topic, content: "hi" });

async function flag(user: User, id: number, op: "add" | "remove"): Promise<void> {
  const r = await s.call(user, "POST", "/messages/flags", { messages: [id], op, flag: "read" });
  expect(r.status).toBe(200);
}

async function receipts(user: User, id: number): Promise<number[]> {
  const r = await s.call(user, "GET", `/messages/${id}/read_receipts`);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success", msg: "" });
  return r.body["user_ids"] as number[];
}

async function setRealm(enabled: boolean): Promise<void> {
  const r = await s.call(s.seed.owner, "PATCH", "/realm", { enable_read_receipts: enabled });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
}

describe("GET /messages/{message_id}/read_receipts", () => {
  it("is refused while the realm disables read receipts, after the access check", async () => {
    const { alice, bob } = s.seed;
    await setRealm(false);
    const id = await toGeneral(alice);
    const secret = await send(alice, { type: "stream", to: "secret", topic: "t", content: "x" });
    const get = (user: User, messageId: number) => () => s.call(user, "GET", `/messages/${messageId}/read_receipts`);
    const disabled = "Read receipts are disabled in this organization.";
    await expectRejectedUnchanged(s, get(bob, id), 400, "BAD_REQUEST", disabled);
    await expectRejectedUnchanged(s, get(bob, secret), 400, "BAD_REQUEST", "Invalid message(s)");
    await setRealm(true);
  });

  it("lists who read the message: never the sender, and no longer after marking unread", async () => {
    const { owner, alice, bob } = s.seed;
    const id = await toGeneral(alice);
    expect(await receipts(alice, id)).toEqual([]);
    await flag(bob, id, "add");
    await flag(owner, id, "add");
    expect(await receipts(alice, id)).toEqual([owner.id, bob.id].sort((a, b) => a - b));
    expect(await receipts(bob, id)).toEqual(await receipts(alice, id));
    await flag(owner, id, "remove");
    expect(await receipts(alice, id)).toEqual([bob.id]);
  });

  it("leaves out users who turned send_read_receipts off, and deactivated users", async () => {
    const { owner, alice, bob } = s.seed;
    const id = await toGeneral(alice);
    await flag(bob, id, "add");
    await flag(carol, id, "add");
    expect(await receipts(alice, id)).toEqual([bob.id, carol.id]);
    expect((await s.call(bob, "PATCH", "/settings", { send_read_receipts: false })).status).toBe(200);
    expect(await receipts(alice, id)).toEqual([carol.id]);
    expect((await s.call(owner, "DELETE", `/users/${carol.id}`)).status).toBe(200);
    expect(await receipts(alice, id)).toEqual([]);
    expect((await s.call(owner, "POST", `/users/${carol.id}/reactivate`)).status).toBe(200);
    expect((await s.call(bob, "PATCH", "/settings", { send_read_receipts: true })).status).toBe(200);
    expect(await receipts(alice, id)).toEqual([bob.id, carol.id]);
  });

  it("leaves out users who muted the caller and users the caller muted", async () => {
    const { owner, alice, bob } = s.seed;
    const id = await toGeneral(owner);
    await flag(bob, id, "add");
    await flag(carol, id, "add");
    expect(await receipts(alice, id)).toEqual([bob.id, carol.id]);
    // No mute action is built yet: the records go straight into the muted-users index the engine reads.
    const state = internals(s.t.store);
    state.indexMutedUsers({ userId: bob.id, muted: [{ id: alice.id, dateMuted: 0 }] });
    state.indexMutedUsers({ userId: alice.id, muted: [{ id: carol.id, dateMuted: 0 }] });
    try {
      expect(await receipts(alice, id)).toEqual([]);
      expect(await receipts(owner, id)).toEqual([bob.id, carol.id]);
    } finally {
      state.indexMutedUsers({ userId: bob.id, muted: [] });
      state.indexMutedUsers({ userId: alice.id, muted: [] });
    }
  });

  it("answers direct messages to their participants only", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const id = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "psst" });
    await flag(bob, id, "add");
    expect(await receipts(alice, id)).toEqual([bob.id]);
    for (const outsider of [owner, guest]) {
      await expectRejectedUnchanged(
        s,
        () => s.call(outsider, "GET", `/messages/${id}/read_receipts`),
        400,
        "BAD_REQUEST",
        "Invalid message(s)",
      );
    }
  });

  it("leaves out a reader whose row a move to a protected channel took away", async () => {
    const { owner, alice, bob } = s.seed;
    const id = await toGeneral(alice, "moving");
    await flag(bob, id, "add");
    await flag(owner, id, "add");
    const moved = await s.call(owner, "PATCH", `/messages/${id}`, { stream_id: s.seed.secret.id });
    expect(moved.body, JSON.stringify(moved.body)).toMatchObject({ result: "success" });
    expect(await receipts(owner, id)).toEqual([owner.id]);
  });

  it("refuses what the caller cannot read and malformed IDs, changing nothing", async () => {
    const { bob, guest } = s.seed;
    const secret = await send(s.seed.alice, { type: "stream", to: "secret", topic: "t", content: "x" });
    const general = await toGeneral(s.seed.alice);
    for (const [user, path] of [
      [bob, `/messages/${secret}/read_receipts`],
      [guest, `/messages/${general}/read_receipts`],
      [bob, "/messages/999999/read_receipts"],
      [bob, "/messages/abc/read_receipts"],
      [bob, "/messages/-1/read_receipts"],
    ] as const) {
      await expectRejectedUnchanged(s, () => s.call(user, "GET", path), 400, "BAD_REQUEST", "Invalid message(s)");
    }
    expect((await s.call(null, "GET", `/messages/${general}/read_receipts`)).status).toBe(401);
  });
});
