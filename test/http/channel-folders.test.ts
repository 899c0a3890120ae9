/**
 * Channel folders over HTTP (POST /channel_folders/create, GET /channel_folders, PATCH
 * /channel_folders and /channel_folders/{id}), channels filed in them (folder_id on
 * creation and PATCH /streams/{id}), register's channel_folders and the channel_folder
 * events; GET /streams/{id}/email_address. Permission matrices over owner,
 * administrator, moderator, member, guest, bot and another realm's owner.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { roleMatrix, type RoleMatrix } from "../support/role-matrix.js";

let server: TestServer;
let matrix: RoleMatrix;
let bot: User;
beforeEach(async () => {
  server = await startServer({ externalHost: "chat.example.com" });
  matrix = roleMatrix(server, "chat.example.com");
  ({ bot } = matrix.users);
});
afterEach(() => server.close());

/** A request as `user`, to their own realm (another realm's owner asks their own subdomain). */
const as = (user: User, method: string, path: string, params: Record<string, unknown> = {}) =>
  matrix.as(user, method, path, params);

const everyone = () => matrix.everyone;

async function createFolder(name: string, description = ""): Promise<number> {
  const r = await server.call(server.seed.owner, "POST", "/channel_folders/create", { name, description });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["channel_folder_id"] as number;
}

const listed = async (user: User, includeArchived = false) =>
  (await server.call(user, "GET", "/channel_folders", { include_archived: includeArchived })).body[
    "channel_folders"
  ] as Record<string, unknown>[];

describe("channel folders", () => {
  it("administrators create, change and reorder them; everyone reads them", async () => {
    const adminOnly = "Must be an organization administrator";
    for (const [name, user] of everyone()) {
      const r = await as(user, "POST", "/channel_folders/create", { name: `by ${name}` });
      const ok = name === "owner" || name === "admin" || name === "another realm";
      expect([name, r.status, r.body["msg"]]).toEqual([name, ok ? 200 : 400, ok ? "" : adminOnly]);
      const read = await as(user, "GET", "/channel_folders");
      expect([name, read.status]).toEqual([name, 200]);
    }
    const id = await createFolder("Frontend");
    for (const [name, user] of everyone()) {
      const r = await as(user, "PATCH", `/channel_folders/${id}`, { description: `by ${name}` });
      const ok = name === "owner" || name === "admin";
      const msg = name === "another realm" ? "Invalid channel folder ID" : adminOnly;
      expect([name, r.status, r.body["msg"]]).toEqual([name, ok ? 200 : 400, ok ? "" : msg]);
    }
  });

  it("lists them in order with Zulip's fields, reorders, archives and sends channel_folder events", async () => {
    const { owner, bob, guest } = server.seed;
    const register = async (user: User) =>
      (await server.call(user, "POST", "/register", { event_types: ["channel_folder", "channel_folders"] })).body;
    const reg = await register(guest);
    const q = { queue: reg["queue_id"] as string, last: reg["last_event_id"] as number };
    const a = await createFolder("Frontend", "UI **work**");
    const b = await createFolder("Backend");
    expect(await listed(bob)).toEqual([
      {
        id: a,
        name: "Frontend",
        order: 0,
        date_created: expect.any(Number),
        creator_id: owner.id,
        description: "UI **work**",
        rendered_description: "<p>UI <strong>work</strong></p>",
        is_archived: false,
      },
      expect.objectContaining({ id: b, name: "Backend", order: 1 }),
    ]);
    expect((await server.call(owner, "PATCH", "/channel_folders", { order: [b, a] })).status).toBe(200);
    expect((await listed(bob)).map((f) => f["id"])).toEqual([b, a]);
    expect((await server.call(owner, "PATCH", `/channel_folders/${a}`, { name: "UI", is_archived: true })).status).toBe(
      200,
    );
    expect((await listed(bob)).map((f) => f["id"])).toEqual([b]);
    expect((await listed(bob, true)).map((f) => [f["id"], f["is_archived"]])).toEqual([
      [b, false],
      [a, true],
    ]);
    const polled = await server.call(guest, "GET", "/events", { queue_id: q.queue, last_event_id: q.last });
    const events = (polled.body["events"] as Record<string, unknown>[]).map(({ id: _id, ...e }) => e);
    expect(events.map((e) => `${e["type"]} ${e["op"]}`)).toEqual([
      "channel_folder add",
      "channel_folder add",
      "channel_folder reorder",
      "channel_folder update",
    ]);
    expect(events[2]).toEqual({ type: "channel_folder", op: "reorder", order: [b, a] });
    expect(events[3]).toEqual({
      type: "channel_folder",
      op: "update",
      channel_folder_id: a,
      data: { name: "UI", is_archived: true },
    });
    expect((await register(bob))["channel_folders"]).toEqual(await listed(bob, true));
  });

  it("files channels: on creation, by PATCH, and refuses to archive a folder that holds any", async () => {
    const { owner, alice, general } = server.seed;
    const folder = await createFolder("Plans");
    const created = await server.call(alice, "POST", "/channels/create", {
      name: "roadmap",
      subscribers: [alice.id],
      folder_id: folder,
    });
    expect(created.status).toBe(200);
    const roadmap = created.body["id"] as number;
    expect((await server.call(alice, "GET", `/streams/${roadmap}`)).body["stream"]).toMatchObject({
      folder_id: folder,
    });
    expect((await server.call(owner, "PATCH", `/streams/${general.id}`, { folder_id: folder })).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "PATCH", `/channel_folders/${folder}`, { is_archived: true }),
      400,
      "BAD_REQUEST",
      "You need to remove all the channels from this folder to archive it.",
    );
    for (const id of [roadmap, general.id])
      expect((await server.call(owner, "PATCH", `/streams/${id}`, { folder_id: null })).status).toBe(200);
    expect((await server.call(owner, "PATCH", `/channel_folders/${folder}`, { is_archived: true })).status).toBe(200);
  });

  it("refuses bad names, orders and folders, changing nothing", async () => {
    const { owner, general } = server.seed;
    const a = await createFolder("Frontend");
    const b = await createFolder("Backend");
    const cases: [string, string, Record<string, unknown>, string][] = [
      ["POST", "/channel_folders/create", { name: "  " }, "Channel folder name can't be empty."],
      ["POST", "/channel_folders/create", { name: "FRONTEND" }, "Channel folder name already in use"],
      [
        "POST",
        "/channel_folders/create",
        { name: "x".repeat(61) },
        "Channel folder name too long (limit: 60 characters).",
      ],
      ["PATCH", `/channel_folders/${a}`, { name: "backend" }, "Channel folder name already in use"],
      ["PATCH", "/channel_folders", { order: [a] }, "Invalid order mapping."],
      ["PATCH", "/channel_folders", { order: [a, a] }, "Invalid order mapping."],
      ["PATCH", "/channel_folders", { order: [a, b, 999] }, "Invalid order mapping."],
      ["PATCH", "/channel_folders/999", { name: "x" }, "Invalid channel folder ID"],
      ["PATCH", `/streams/${general.id}`, { folder_id: 999 }, "Invalid channel folder ID"],
      ["POST", "/channels/create", { name: "c", subscribers: [], folder_id: 999 }, "Invalid channel folder ID"],
    ];
    for (const [method, path, params, msg] of cases)
      await expectRejectedUnchanged(server, () => server.call(owner, method, path, params), 400, "BAD_REQUEST", msg);
  });
});

describe("GET /streams/{id}/email_address", () => {
  it("is given to whoever may post in the channel, stable, naming the sender", async () => {
    const { general, secret, bob, alice } = server.seed;
    for (const [name, user] of everyone()) {
      const r = await as(user, "GET", `/streams/${general.id}/email_address`);
      const ok = !["guest", "another realm"].includes(name);
      expect([name, r.status]).toEqual([name, ok ? 200 : 400]);
      if (ok) expect(r.body["email"]).toMatch(/^general\.[0-9a-f]{32}\.show-sender@chat\.example\.com$/);
      else expect(r.body["msg"]).toBe("Invalid channel ID");
    }
    const once = (await server.call(alice, "GET", `/streams/${general.id}/email_address`)).body["email"];
    expect((await server.call(bob, "GET", `/streams/${general.id}/email_address`)).body["email"]).toBe(once);
    const asBob = await server.call(bob, "GET", `/streams/${general.id}/email_address`, { sender_id: bob.id });
    const asBot = await server.call(bob, "GET", `/streams/${general.id}/email_address`, { sender_id: bot.id });
    expect(new Set([once, asBob.body["email"], asBot.body["email"]]).size).toBe(3);
    expect(
      (await server.call(alice, "GET", `/streams/${general.id}/email_address`, { sender_id: bot.id })).body["msg"],
    ).toBe("Insufficient permission");
    expect((await server.call(bob, "GET", `/streams/${secret.id}/email_address`)).body["msg"]).toBe(
      "Invalid channel ID",
    );
    // Posting permission is required (Zulip since feature level 448).
    await server.call(server.seed.owner, "PATCH", `/streams/${general.id}`, {
      can_send_message_group: { new: server.t.store.systemGroupId(server.seed.realm.id, "role:administrators") },
    });
    expect((await server.call(bob, "GET", `/streams/${general.id}/email_address`)).body["msg"]).toBe(
      "You do not have permission to post in this channel.",
    );
  });
});
