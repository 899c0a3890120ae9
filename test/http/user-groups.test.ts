/**
 * User groups over HTTP: every endpoint's happy path, Zulip's permission rules
 * (roles, bots, group managers through nested subgroups), cycle refusal, system
 * groups, deactivation, register and events, and bad input refused unchanged.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer;
let admin: User;
let mod: User;
let bot: User;
beforeEach(async () => {
  server = await startServer();
  const { store } = server.t;
  const realmId = server.seed.realm.id;
  admin = store.createUser({ realmId, email: "admin@test.dev", fullName: "Ada Admin", role: 200 });
  mod = store.createUser({ realmId, email: "mod@test.dev", fullName: "Moe Mod", role: 300 });
  bot = store.createUser({
    realmId,
    email: "bot-bot@test.dev",
    fullName: "Botty",
    bot: { type: 1, ownerId: server.seed.alice.id },
  });
});
afterEach(() => server.close());

const sys = (name: string) => server.t.store.systemGroupId(server.seed.realm.id, name);

async function create(user: User, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await server.call(user, "POST", "/user_groups/create", {
    name,
    description: `${name} team`,
    members: [],
    ...extra,
  });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["group_id"] as number;
}

async function groups(user: User, params: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
  const r = await server.call(user, "GET", "/user_groups", params);
  expect(r.status).toBe(200);
  return r.body["user_groups"] as Record<string, unknown>[];
}

describe("creating and listing", () => {
  it("creates a group with Zulip's defaults and lists every field", async () => {
    const { alice, bob } = server.seed;
    const id = await create(alice, "backend", { members: [bob.id, alice.id] });
    const g = (await groups(alice)).find((x) => x["id"] === id)!;
    expect(g).toEqual({
      id,
      name: "backend",
      description: "backend team",
      members: [bob.id, alice.id],
      direct_subgroup_ids: [],
      creator_id: alice.id,
      date_created: expect.any(Number),
      is_system_group: false,
      can_add_members_group: { direct_members: [alice.id], direct_subgroups: [] },
      can_join_group: sys("role:nobody"),
      can_leave_group: sys("role:everyone"),
      can_manage_group: { direct_members: [alice.id], direct_subgroups: [] },
      can_mention_group: sys("role:everyone"),
      can_remove_members_group: sys("role:nobody"),
      deactivated: false,
    });
    const all = await groups(alice);
    expect(all.map((x) => x["id"])).toEqual([...all.map((x) => x["id"] as number)].sort((a, b) => a - b));
    expect(all.filter((x) => x["is_system_group"]).length).toBe(8);
  });

  it("register's realm_user_groups has the same objects", async () => {
    const id = await create(server.seed.alice, "crew", { can_join_group: sys("role:members") });
    const r = await server.call(server.seed.bob, "POST", "/register", { fetch_event_types: ["realm_user_groups"] });
    const listed = (r.body["realm_user_groups"] as Record<string, unknown>[]).find((g) => g["id"] === id)!;
    expect(listed).toEqual((await groups(server.seed.bob)).find((g) => g["id"] === id));
    expect(listed["can_join_group"]).toBe(sys("role:members"));
  });

  it("guests may not create groups; bots and members may", async () => {
    await expectRejectedUnchanged(
      server,
      () =>
        server.call(server.seed.guest, "POST", "/user_groups/create", { name: "g", description: "", members: "[]" }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await create(bot, "bots");
  });

  it("names follow Zulip's rules", async () => {
    const { alice } = server.seed;
    await create(alice, "taken");
    const bad: [string, string][] = [
      ["  ", "User group name can't be empty!"],
      ["x".repeat(101), "User group name cannot exceed 100 characters."],
      ["role:x", "User group name cannot start with 'role:'."],
      ["@x", "User group name cannot start with '@'."],
      ["channel:x", "User group name cannot start with 'channel:'."],
      ["TAKEN", "User group 'TAKEN' already exists."],
    ];
    for (const [name, msg] of bad) {
      await expectRejectedUnchanged(
        server,
        () => server.call(alice, "POST", "/user_groups/create", { name, description: "", members: "[]" }),
        400,
        "BAD_REQUEST",
        msg,
      );
    }
  });

  it("bad members, subgroups and settings are refused", async () => {
    const { alice, guest } = server.seed;
    const call = (extra: Record<string, unknown>) => () =>
      server.call(alice, "POST", "/user_groups/create", { name: "n", description: "", members: "[]", ...extra });
    await expectRejectedUnchanged(server, call({ members: [999] }), 400, "BAD_REQUEST", "Invalid user ID: 999");
    await expectRejectedUnchanged(server, call({ members: "nope" }), 400, "BAD_REQUEST", "members is not valid JSON");
    await expectRejectedUnchanged(server, call({ members: ["a"] }), 400, "BAD_REQUEST", "members[0] is not an integer");
    await expectRejectedUnchanged(server, call({ subgroups: [999] }), 400, "BAD_REQUEST", "Invalid user group ID: 999");
    await expectRejectedUnchanged(
      server,
      call({ can_manage_group: sys("role:everyone") }),
      400,
      "BAD_REQUEST",
      "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    );
    await expectRejectedUnchanged(
      server,
      call({ can_mention_group: sys("role:internet") }),
      400,
      "BAD_REQUEST",
      "'can_mention_group' setting cannot be set to 'role:internet' group.",
    );
    await expectRejectedUnchanged(server, call({ can_join_group: 999 }), 400, "BAD_REQUEST", "Invalid user group");
    await expectRejectedUnchanged(
      server,
      call({ can_join_group: { direct_members: [998], direct_subgroups: [] } }),
      400,
      "BAD_REQUEST",
      "Invalid user ID: 998",
    );
    await expectRejectedUnchanged(
      server,
      call({ can_join_group: { direct_members: [] } }),
      400,
      "BAD_REQUEST",
      /can_join_group/,
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/user_groups/create", { description: "", members: "[]" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'name' argument",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "GET", "/user_groups", { include_deactivated_groups: "maybe" }),
      400,
      "BAD_REQUEST",
      "include_deactivated_groups is not a boolean",
    );
    expect(guest).toBeDefined();
  });
});

describe("members", () => {
  it("adds and removes members; GET members is recursive unless direct_member_only", async () => {
    const { alice, bob, owner } = server.seed;
    const inner = await create(alice, "inner", { members: [bob.id] });
    const outer = await create(alice, "outer", { members: [alice.id], subgroups: [inner] });
    expect((await server.call(alice, "GET", `/user_groups/${outer}/members`)).body["members"]).toEqual(
      [alice.id, bob.id].sort((a, b) => a - b),
    );
    expect(
      (await server.call(alice, "GET", `/user_groups/${outer}/members`, { direct_member_only: true })).body["members"],
    ).toEqual([alice.id]);
    expect(
      (await server.call(alice, "GET", `/user_groups/${outer}/members/${bob.id}`)).body["is_user_group_member"],
    ).toBe(true);
    expect(
      (await server.call(alice, "GET", `/user_groups/${outer}/members/${bob.id}`, { direct_member_only: true })).body[
        "is_user_group_member"
      ],
    ).toBe(false);
    expect(
      (await server.call(alice, "POST", `/user_groups/${inner}/members`, { add: [owner.id], delete: [bob.id] })).status,
    ).toBe(200);
    expect((await server.call(alice, "GET", `/user_groups/${outer}/members`)).body["members"]).toEqual(
      [owner.id, alice.id].sort((a, b) => a - b),
    );
  });

  it("refuses duplicates, non-members and empty requests with Zulip's texts", async () => {
    const { alice, bob } = server.seed;
    const id = await create(alice, "g", { members: [bob.id] });
    const post = (params: Record<string, unknown>) => () =>
      server.call(alice, "POST", `/user_groups/${id}/members`, params);
    await expectRejectedUnchanged(
      server,
      post({ add: [bob.id] }),
      400,
      "BAD_REQUEST",
      `User ${bob.id} is already a member of this group`,
    );
    await expectRejectedUnchanged(
      server,
      post({ delete: [alice.id] }),
      400,
      "BAD_REQUEST",
      `There is no member '${alice.id}' in this user group`,
    );
    await expectRejectedUnchanged(server, post({ add: [12345] }), 400, "BAD_REQUEST", "Invalid user ID: 12345");
    await expectRejectedUnchanged(
      server,
      post({}),
      400,
      "BAD_REQUEST",
      'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/user_groups/99999/members", { add: [alice.id] }),
      400,
      "BAD_REQUEST",
      "Invalid user group",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/user_groups/abc/members", { add: [alice.id] }),
      400,
      "BAD_REQUEST",
      "Invalid user group",
    );
  });

  it("joining and leaving follow can_join_group and can_leave_group", async () => {
    const { alice, bob, guest } = server.seed;
    const id = await create(alice, "open", { can_join_group: sys("role:members") });
    await expectRejectedUnchanged(
      server,
      () => server.call(guest, "POST", `/user_groups/${id}/members`, { add: [guest.id] }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    expect((await server.call(bob, "POST", `/user_groups/${id}/members`, { add: [bob.id] })).status).toBe(200);
    // Joining oneself does not let one add others.
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "POST", `/user_groups/${id}/members`, { add: [mod.id] }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    // can_leave_group defaults to role:everyone.
    expect((await server.call(bob, "POST", `/user_groups/${id}/members`, { delete: [bob.id] })).status).toBe(200);
  });
});

describe("subgroups (seed endpoint 20)", () => {
  it("adds and deletes in one request, one write", async () => {
    const { alice } = server.seed;
    const a = await create(alice, "a");
    const b = await create(alice, "b");
    const top = await create(alice, "top", { subgroups: [a] });
    const r = await server.call(alice, "POST", `/user_groups/${top}/subgroups`, { add: [b], delete: [a] });
    expect(r.body).toEqual({ result: "success", msg: "" });
    expect(
      (await server.call(alice, "GET", `/user_groups/${top}/subgroups`, { direct_subgroup_only: true })).body[
        "subgroups"
      ],
    ).toEqual([b]);
  });

  it("GET subgroups is recursive by default", async () => {
    const { alice } = server.seed;
    const a = await create(alice, "a");
    const b = await create(alice, "b", { subgroups: [a] });
    const c = await create(alice, "c", { subgroups: [b] });
    expect((await server.call(alice, "GET", `/user_groups/${c}/subgroups`)).body["subgroups"]).toEqual([a, b]);
  });

  it("refuses cycles with Zulip's error, and failed halves change nothing", async () => {
    const { alice } = server.seed;
    const a = await create(alice, "a");
    const b = await create(alice, "b", { subgroups: [a] });
    const c = await create(alice, "c", { subgroups: [b] });
    const d = await create(alice, "d");
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${a}/subgroups`, { add: [c] }),
      400,
      "BAD_REQUEST",
      `User group ${a} is already a subgroup of one of the passed subgroups.`,
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${a}/subgroups`, { add: [a] }),
      400,
      "BAD_REQUEST",
      `User group ${a} is already a subgroup of one of the passed subgroups.`,
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${c}/subgroups`, { add: [b] }),
      400,
      "BAD_REQUEST",
      `User group ${b} is already a subgroup of this group.`,
    );
    // The add half is valid, the delete half is not: nothing happens.
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${c}/subgroups`, { add: [d], delete: [a] }),
      400,
      "BAD_REQUEST",
      `User group ${a} is not a subgroup of this group.`,
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${c}/subgroups`, { add: [4242] }),
      400,
      "BAD_REQUEST",
      "Invalid user group ID: 4242",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${c}/subgroups`, {}),
      400,
      "BAD_REQUEST",
      'Nothing to do. Specify at least one of "add" or "delete".',
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${c}/subgroups`, { add: "[1," }),
      400,
      "BAD_REQUEST",
      "add is not valid JSON",
    );
  });

  it("bots may change subgroups they manage; a deactivated group's subgroups can change", async () => {
    const { alice } = server.seed;
    const a = await create(bot, "a");
    const top = await create(bot, "top");
    expect((await server.call(bot, "POST", `/user_groups/${top}/subgroups`, { add: [a] })).status).toBe(200);
    expect((await server.call(bot, "POST", `/user_groups/${top}/deactivate`)).status).toBe(200);
    expect((await server.call(bot, "POST", `/user_groups/${top}/subgroups`, { delete: [a] })).status).toBe(200);
    // A deactivated group cannot become anyone's subgroup.
    const other = await create(alice, "other");
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${other}/subgroups`, { add: [top] }),
      400,
      "BAD_REQUEST",
      "User group is deactivated.",
    );
  });
});

describe("permission matrix", () => {
  it("who may edit a group of alice's: owners (can_manage_all_groups) and can_manage_group only", async () => {
    const { alice, owner, bob, guest } = server.seed;
    const id = await create(alice, "alices");
    const expectations: [User, boolean][] = [
      [owner, true],
      [admin, false],
      [mod, false],
      [bob, false],
      [guest, false],
      [bot, false],
      [alice, true],
    ];
    for (const [user, allowed] of expectations) {
      const r = await server.call(user, "PATCH", `/user_groups/${id}`, { description: `by ${user.id}` });
      expect([user.email, r.status, r.body["msg"]]).toEqual([
        user.email,
        allowed ? 200 : 400,
        allowed ? "" : "Insufficient permission",
      ]);
    }
  });

  it("group managers through nested subgroups", async () => {
    const { alice, bob, guest } = server.seed;
    const leaf = await create(alice, "leaf", { members: [bob.id, guest.id] });
    const mid = await create(alice, "mid", { subgroups: [leaf] });
    const managed = await create(alice, "managed", {
      can_manage_group: { direct_members: [], direct_subgroups: [mid] },
    });
    expect((await server.call(bob, "PATCH", `/user_groups/${managed}`, { name: "renamed" })).status).toBe(200);
    // Guests never get a permission whose setting excludes role:everyone.
    await expectRejectedUnchanged(
      server,
      () => server.call(guest, "PATCH", `/user_groups/${managed}`, { name: "guest's" }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    // Taking bob out of the leaf takes the permission away at once.
    expect((await server.call(alice, "POST", `/user_groups/${leaf}/members`, { delete: [bob.id] })).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "PATCH", `/user_groups/${managed}`, { name: "again" }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    // can_add_members_group lets one add but not remove.
    const adders = await create(alice, "adders", {
      can_add_members_group: { direct_members: [mod.id], direct_subgroups: [] },
    });
    expect((await server.call(mod, "POST", `/user_groups/${adders}/members`, { add: [bob.id] })).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      () => server.call(mod, "POST", `/user_groups/${adders}/members`, { delete: [bob.id] }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
  });

  it("system groups cannot be edited, even by owners", async () => {
    const { owner, alice } = server.seed;
    const members = sys("role:members");
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "PATCH", `/user_groups/${members}`, { name: "x" }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "POST", `/user_groups/${members}/members`, { add: [alice.id] }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "POST", `/user_groups/${members}/subgroups`, { add: [sys("role:owners")] }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "POST", `/user_groups/${members}/deactivate`),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
  });
});

describe("editing and deactivation", () => {
  it("PATCH changes name, description and settings, with the old-value check", async () => {
    const { alice, bob } = server.seed;
    const id = await create(alice, "g");
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "PATCH", `/user_groups/${id}`, {}),
      400,
      "BAD_REQUEST",
      "No new data supplied",
    );
    await expectRejectedUnchanged(
      server,
      () =>
        server.call(alice, "PATCH", `/user_groups/${id}`, {
          can_join_group: { new: sys("role:members"), old: sys("role:owners") },
        }),
      400,
      "BAD_REQUEST",
      "'old' value does not match the expected value.",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "PATCH", `/user_groups/${id}`, { can_join_group: sys("role:members") }),
      400,
      "BAD_REQUEST",
      /can_join_group/,
    );
    const r = await server.call(alice, "PATCH", `/user_groups/${id}`, {
      name: "h",
      description: "d",
      can_join_group: { new: sys("role:members"), old: sys("role:nobody") },
      can_manage_group: { new: { direct_members: [bob.id], direct_subgroups: [] } },
    });
    expect(r.status).toBe(200);
    const g = (await groups(alice)).find((x) => x["id"] === id)!;
    expect(g).toMatchObject({
      name: "h",
      description: "d",
      can_join_group: sys("role:members"),
      can_manage_group: { direct_members: [bob.id], direct_subgroups: [] },
    });
  });

  it("deactivation hides the group, refuses it in use, and PATCH deactivated=false reactivates", async () => {
    const { alice } = server.seed;
    const sub = await create(alice, "sub");
    const sup = await create(alice, "sup", { subgroups: [sub] });
    const user = await create(alice, "user", { can_mention_group: sub });
    const body = await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${sub}/deactivate`),
      400,
      "CANNOT_DEACTIVATE_GROUP_IN_USE",
      "Cannot deactivate user group in use.",
    );
    expect(body["objections"]).toEqual([
      { type: "subgroup", supergroup_ids: [sup] },
      { type: "user_group", group_id: user, settings: ["can_mention_group"] },
    ]);
    expect((await server.call(alice, "POST", `/user_groups/${sup}/deactivate`)).status).toBe(200);
    expect((await server.call(alice, "POST", `/user_groups/${user}/deactivate`)).status).toBe(200);
    expect((await server.call(alice, "POST", `/user_groups/${sub}/deactivate`)).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", `/user_groups/${sub}/deactivate`),
      400,
      "BAD_REQUEST",
      "User group is deactivated.",
    );
    expect((await groups(alice)).some((g) => g["id"] === sub)).toBe(false);
    expect(
      (await groups(alice, { include_deactivated_groups: true })).find((g) => g["id"] === sub)!["deactivated"],
    ).toBe(true);
    // Deactivated groups cannot be used in new settings.
    await expectRejectedUnchanged(
      server,
      () =>
        server.call(alice, "POST", "/user_groups/create", {
          name: "n",
          description: "",
          members: "[]",
          can_mention_group: sub,
        }),
      400,
      "BAD_REQUEST",
      "User group is deactivated.",
    );
    expect((await server.call(alice, "PATCH", `/user_groups/${sub}`, { deactivated: false })).status).toBe(200);
    expect((await groups(alice)).some((g) => g["id"] === sub)).toBe(true);
  });

  it("a deactivated group cannot be mentioned", async () => {
    const { alice, bob, general } = server.seed;
    const id = await create(alice, "ops", { members: [bob.id] });
    const send = async () => {
      const r = await server.call(alice, "POST", "/messages", {
        type: "stream",
        to: general.id,
        topic: "t",
        content: "hi @*ops*",
      });
      const got = (await server.call(bob, "GET", `/messages/${r.body["id"] as number}`)).body as {
        message: { flags: string[] };
      };
      return got.message;
    };
    expect((await send())["flags"]).toContain("group_mentioned");
    expect((await server.call(alice, "POST", `/user_groups/${id}/deactivate`)).status).toBe(200);
    expect((await send())["flags"]).not.toContain("group_mentioned");
  });
});

describe("events", () => {
  it("add, add_members, add_subgroups, update, remove reach the realm; include_deactivated_groups sees update", async () => {
    const { alice, bob, owner } = server.seed;
    const q = (await server.call(bob, "POST", "/register", { event_types: ["user_group"] })).body["queue_id"] as string;
    const qd = (
      await server.call(owner, "POST", "/register", {
        event_types: ["user_group"],
        client_capabilities: { include_deactivated_groups: true },
      })
    ).body["queue_id"] as string;
    const a = await create(alice, "a");
    const b = await create(alice, "b");
    await server.call(alice, "POST", `/user_groups/${b}/members`, { add: [bob.id] });
    await server.call(alice, "POST", `/user_groups/${b}/subgroups`, { add: [a] });
    await server.call(alice, "POST", `/user_groups/${b}/subgroups`, { delete: [a] });
    await server.call(alice, "PATCH", `/user_groups/${b}`, {
      name: "bee",
      can_leave_group: { new: sys("role:members") },
    });
    await server.call(alice, "POST", `/user_groups/${b}/deactivate`);
    const poll = async (user: User, queue: string) =>
      (
        (await server.call(user, "GET", "/events", { queue_id: queue, last_event_id: -1, dont_block: true })).body[
          "events"
        ] as Record<string, unknown>[]
      ).map(({ id: _id, ...e }) => e);
    const seen = await poll(bob, q);
    expect(seen.map((e) => e["op"])).toEqual([
      "add",
      "add",
      "add_members",
      "add_subgroups",
      "remove_subgroups",
      "update",
      "remove",
    ]);
    expect(seen[2]).toEqual({ type: "user_group", op: "add_members", group_id: b, user_ids: [bob.id] });
    expect(seen[3]).toEqual({ type: "user_group", op: "add_subgroups", group_id: b, direct_subgroup_ids: [a] });
    expect(seen[5]).toEqual({
      type: "user_group",
      op: "update",
      group_id: b,
      data: { name: "bee", can_leave_group: sys("role:members") },
    });
    expect(seen[6]).toEqual({ type: "user_group", op: "remove", group_id: b });
    expect((seen[1]!["group"] as Record<string, unknown>)["can_remove_members_group"]).toBe(sys("role:nobody"));
    const seenD = await poll(owner, qd);
    expect(seenD[seenD.length - 1]).toEqual({
      type: "user_group",
      op: "update",
      group_id: b,
      data: { deactivated: true },
    });
  });
});
