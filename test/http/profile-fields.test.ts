/**
 * Custom profile fields over HTTP: /realm/profile_fields (list, create, update, reorder,
 * delete), PATCH/DELETE /users/me/profile_data and PATCH /users/{id} profile_data.
 * Permission matrices over owner, administrator, moderator, member, guest, bot and
 * another realm; every field type with Zulip's checks and messages; refusals change
 * nothing; values in GET /users, /users/{id}, /users/me and register; the
 * custom_profile_fields and realm_user update events.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { roleMatrix, type RoleMatrix } from "../support/role-matrix.js";

let server: TestServer;
let m: RoleMatrix;
beforeEach(async () => {
  server = await startServer({ externalHost: "chat.example.com" });
  m = roleMatrix(server);
});
afterEach(() => server.close());

type Wire = Record<string, unknown>;

async function createField(params: Record<string, unknown>): Promise<number> {
  const r = await server.call(server.seed.owner, "POST", "/realm/profile_fields", params);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["id"] as number;
}

const fieldsOf = async (user: User) =>
  (await m.as(user, "GET", "/realm/profile_fields")).body["custom_fields"] as Wire[];

async function profileOf(viewer: User, userId: number): Promise<Wire | undefined> {
  const r = await server.call(viewer, "GET", `/users/${userId}`, { include_custom_profile_fields: true });
  return (r.body["user"] as Wire)["profile_data"] as Wire | undefined;
}

async function openQueue(user: User) {
  const reg = await server.call(user, "POST", "/register", {
    event_types: ["custom_profile_fields", "realm_user"],
  });
  return { queue: reg.body["queue_id"] as string, last: reg.body["last_event_id"] as number };
}

async function eventsOf(user: User, q: { queue: string; last: number }) {
  const polled = await server.call(user, "GET", "/events", { queue_id: q.queue, last_event_id: q.last });
  return (polled.body["events"] as Wire[]).map(({ id: _id, ...e }) => e);
}

const SELECT_OPTIONS = { vim: { text: "Vim", order: "1" }, emacs: { text: "Emacs", order: "2" } };

describe("permissions", () => {
  it("administrators create, change, reorder and delete fields; everyone lists them", async () => {
    const adminOnly = "Must be an organization administrator";
    for (const [name, user] of m.everyone) {
      const r = await m.as(user, "POST", "/realm/profile_fields", { name: `By ${name}`, field_type: 1 });
      const ok = name === "owner" || name === "admin" || name === "another realm";
      expect([name, r.status, r.body["msg"]]).toEqual([name, ok ? 200 : 400, ok ? "" : adminOnly]);
      expect([name, (await m.as(user, "GET", "/realm/profile_fields")).status]).toEqual([name, 200]);
    }
    const id = await createField({ name: "Team", field_type: 1 });
    const ids = (await fieldsOf(server.seed.owner)).map((f) => f["id"] as number);
    const requests: [string, string, Record<string, unknown>][] = [
      ["PATCH", `/realm/profile_fields/${id}`, { hint: "changed" }],
      ["PATCH", "/realm/profile_fields", { order: [...ids].reverse() }],
      ["DELETE", `/realm/profile_fields/${id}`, {}],
    ];
    for (const [method, path, params] of requests) {
      for (const [name, user] of m.everyone) {
        if (name === "owner" || name === "admin") continue;
        const r = await m.as(user, method, path, params);
        // Another realm's administrator names fields their realm does not have.
        const msg =
          name !== "another realm"
            ? adminOnly
            : method === "PATCH" && path.endsWith("fields")
              ? "Invalid order mapping."
              : `Field id ${id} not found.`;
        expect([name, method, path, r.status, r.body["msg"]]).toEqual([name, method, path, 400, msg]);
      }
      expect((await server.call(m.users.admin, method, path, params)).status).toBe(200);
    }
    expect((await fieldsOf(m.users.guest)).map((f) => f["id"])).not.toContain(id);
  });

  it("humans set and clear their own values; bots and other realms cannot", async () => {
    const id = await createField({ name: "Team", field_type: 1 });
    for (const [name, user] of m.everyone) {
      const set = await m.as(user, "PATCH", "/users/me/profile_data", { data: [{ id, value: `team ${name}` }] });
      const clear = await m.as(user, "DELETE", "/users/me/profile_data", { data: [id] });
      const msg =
        name === "bot"
          ? "This endpoint does not accept bot requests."
          : name === "another realm"
            ? `Field id ${id} not found.`
            : "";
      expect([name, set.status, set.body["msg"], clear.status, clear.body["msg"]]).toEqual([
        name,
        msg === "" ? 200 : 400,
        msg,
        msg === "" ? 200 : 400,
        msg,
      ]);
    }
  });

  it("PATCH /users/{id} profile_data: administrators set anyone's values, an empty value removes one", async () => {
    const { owner, bob, alice } = server.seed;
    const id = await createField({ name: "Team", field_type: 1 });
    for (const [name, user] of m.everyone) {
      if (name === "another realm") continue;
      const r = await m.as(user, "PATCH", `/users/${alice.id}`, { profile_data: [{ id, value: `set by ${name}` }] });
      const ok = name === "owner" || name === "admin";
      expect([name, r.status, r.body["msg"]]).toEqual([name, ok ? 200 : 400, ok ? "" : "Insufficient permission"]);
    }
    expect(await profileOf(bob, alice.id)).toEqual({
      [id]: { value: "set by admin", rendered_value: "<p>set by admin</p>" },
    });
    expect(
      (await server.call(owner, "PATCH", `/users/${alice.id}`, { profile_data: [{ id, value: "" }] })).status,
    ).toBe(200);
    expect(await profileOf(bob, alice.id)).toEqual({});
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "PATCH", `/users/${alice.id}`, { profile_data: [{ id: 424242, value: "x" }] }),
      400,
      "BAD_REQUEST",
      "Field id 424242 not found.",
    );
  });

  it("editable_by_user false: only administrators change the value", async () => {
    const { bob } = server.seed;
    const id = await createField({ name: "Employee ID", field_type: 1, editable_by_user: false });
    const locked = "You are not allowed to change this field. Contact an administrator to update it.";
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "PATCH", "/users/me/profile_data", { data: [{ id, value: "42" }] }),
      400,
      "BAD_REQUEST",
      locked,
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "DELETE", "/users/me/profile_data", { data: [id] }),
      400,
      "BAD_REQUEST",
      locked,
    );
    expect(
      (await server.call(m.users.admin, "PATCH", "/users/me/profile_data", { data: [{ id, value: "7" }] })).status,
    ).toBe(200);
    expect((await fieldsOf(bob)).find((f) => f["id"] === id)).toMatchObject({ editable_by_user: false });
  });
});

describe("field types and values", () => {
  it("stores every type's value; GET /users, /users/{id}, /users/me and register show them", async () => {
    const { bob, alice, owner } = server.seed;
    const short = await createField({
      name: "Role",
      field_type: 1,
      hint: "What you do",
      display_in_profile_summary: true,
    });
    const long = await createField({ name: "Bio", field_type: 2 });
    const select = await createField({ name: "Editor", field_type: 3, field_data: SELECT_OPTIONS });
    const date = await createField({ name: "Birthday", field_type: 4 });
    const url = await createField({ name: "Homepage", field_type: 5 });
    const users = await createField({ name: "Mentor", field_type: 6, required: true });
    const github = await createField({ field_type: 7, field_data: { subtype: "github" } });
    const custom = await createField({
      name: "Wiki",
      field_type: 7,
      field_data: { subtype: "custom", url_pattern: "https://wiki.example.com/u/%(username)s" },
    });
    const pronouns = await createField({ name: "Pronouns", field_type: 8 });
    const data = [
      { id: short, value: "Engineer" },
      { id: long, value: "I like **Markdown**" },
      { id: select, value: "emacs" },
      { id: date, value: "1990-02-28" },
      { id: url, value: "https://bob.example.com/" },
      { id: users, value: [alice.id, owner.id] },
      { id: github, value: "bob-gh" },
      { id: custom, value: "bob" },
      { id: pronouns, value: "he/him" },
    ];
    expect((await server.call(bob, "PATCH", "/users/me/profile_data", { data })).body).toEqual({
      result: "success",
      msg: "",
    });
    const expected = {
      [short]: { value: "Engineer", rendered_value: "<p>Engineer</p>" },
      [long]: { value: "I like **Markdown**", rendered_value: "<p>I like <strong>Markdown</strong></p>" },
      [select]: { value: "emacs" },
      [date]: { value: "1990-02-28" },
      [url]: { value: "https://bob.example.com/" },
      [users]: { value: `[${alice.id},${owner.id}]` },
      [github]: { value: "bob-gh" },
      [custom]: { value: "bob" },
      [pronouns]: { value: "he/him" },
    };
    expect(await profileOf(alice, bob.id)).toEqual(expected);
    const all = await server.call(alice, "GET", "/users", { include_custom_profile_fields: true });
    const listed = (all.body["members"] as Wire[]).find((u) => u["user_id"] === bob.id);
    expect(listed?.["profile_data"]).toEqual(expected);
    expect((await server.call(bob, "GET", "/users/me")).body["profile_data"]).toEqual(expected);
    const reg = await server.call(alice, "POST", "/register", {
      fetch_event_types: ["custom_profile_fields", "realm_user"],
    });
    const regUser = (reg.body["realm_users"] as Wire[]).find((u) => u["user_id"] === bob.id);
    expect(regUser?.["profile_data"]).toEqual(expected);
    expect(reg.body["custom_profile_fields"]).toEqual(await fieldsOf(alice));
    expect(reg.body["custom_profile_field_types"]).toMatchObject({ PRONOUNS: { id: 8 }, USER: { id: 6 } });
    expect((await fieldsOf(alice)).map((f) => f["id"])).toEqual([
      short,
      long,
      select,
      date,
      url,
      users,
      github,
      custom,
      pronouns,
    ]);
    expect((await fieldsOf(alice)).slice(0, 1)).toEqual([
      {
        id: short,
        name: "Role",
        type: 1,
        hint: "What you do",
        field_data: "",
        order: short,
        required: false,
        editable_by_user: true,
        use_for_user_matching: false,
        display_in_profile_summary: true,
      },
    ]);
    expect((await fieldsOf(alice)).find((f) => f["id"] === github)).toMatchObject({
      name: "GitHub username",
      hint: "",
      field_data: '{"subtype":"github"}',
    });
    expect((await fieldsOf(alice)).find((f) => f["id"] === select)).toMatchObject({
      field_data: JSON.stringify(SELECT_OPTIONS),
    });
    expect((await fieldsOf(alice)).find((f) => f["id"] === users)).toMatchObject({ required: true });

    // DELETE /users/me/profile_data clears values (one never set is skipped).
    expect((await server.call(bob, "DELETE", "/users/me/profile_data", { data: [short, long] })).status).toBe(200);
    expect((await server.call(bob, "DELETE", "/users/me/profile_data", { data: [short] })).status).toBe(200);
    const after = await profileOf(alice, bob.id);
    expect(Object.keys(after ?? {})).not.toContain(String(short));
    expect(Object.keys(after ?? {})).not.toContain(String(long));
  });

  it("refuses values with Zulip's messages, changing nothing", async () => {
    const { bob, guest } = server.seed;
    const short = await createField({ name: "Role", field_type: 1 });
    const long = await createField({ name: "Bio", field_type: 2 });
    const select = await createField({ name: "Editor", field_type: 3, field_data: SELECT_OPTIONS });
    const date = await createField({ name: "Birthday", field_type: 4 });
    const url = await createField({ name: "Homepage", field_type: 5 });
    const users = await createField({ name: "Mentor", field_type: 6 });
    const deactivated = server.t.store.createUser({
      realmId: server.seed.realm.id,
      email: "gone@test.dev",
      fullName: "Gone",
    });
    server.t.store.setUserActive(deactivated.id, false);
    const cases: [unknown, string][] = [
      [{ id: short, value: "x".repeat(51) }, "Role is too long (limit: 50 characters)"],
      [{ id: long, value: "x".repeat(501) }, "Bio is too long (limit: 500 characters)"],
      [{ id: short, value: [1] }, "Role is not a string"],
      [{ id: select, value: "nano" }, "'nano' is not a valid choice for 'Editor'."],
      [{ id: date, value: "1990-02-30" }, "Birthday is not a date"],
      [{ id: date, value: "19900228" }, "Birthday is not a date"],
      [{ id: url, value: "not a url" }, "Homepage is not a URL"],
      [{ id: url, value: "javascript:alert(1)" }, "Homepage is not a URL"],
      [{ id: users, value: "bob" }, "User IDs is not a list"],
      [{ id: users, value: [424242] }, "Invalid user ID: 424242"],
      [{ id: users, value: [m.users["another realm"].id] }, `Invalid user ID: ${m.users["another realm"].id}`],
      [{ id: users, value: [deactivated.id] }, `User with ID ${deactivated.id} is deactivated`],
      [{ id: users, value: [m.users.bot.id] }, `User with ID ${m.users.bot.id} is a bot`],
      [{ id: 424242, value: "x" }, "Field id 424242 not found."],
    ];
    for (const [item, msg] of cases)
      await expectRejectedUnchanged(
        server,
        // A valid item first: one refusal stores nothing of the request.
        () => server.call(bob, "PATCH", "/users/me/profile_data", { data: [{ id: short, value: "ok" }, item] }),
        400,
        "BAD_REQUEST",
        msg,
      );
    await expectRejectedUnchanged(
      server,
      () => server.call(guest, "DELETE", "/users/me/profile_data", { data: [short, 424242] }),
      400,
      "BAD_REQUEST",
      "Field id 424242 not found.",
    );
  });

  it("refuses bad field definitions with Zulip's messages, changing nothing", async () => {
    const { owner } = server.seed;
    await createField({ name: "Role", field_type: 1, display_in_profile_summary: true });
    const github = await createField({ field_type: 7, field_data: { subtype: "github" } });
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "  ", field_type: 1 }, "Label cannot be blank."],
      [{ name: "x".repeat(41), field_type: 1 }, "name is too long (limit: 40 characters)"],
      [{ name: "Hint", hint: "x".repeat(81), field_type: 1 }, "hint is too long (limit: 80 characters)"],
      [{ name: "Odd", field_type: 9 }, "Invalid field type."],
      [{ name: " Role ", field_type: 2 }, "A field with that label already exists."],
      [{ field_type: 7, field_data: { subtype: "github" } }, "A field with that label already exists."],
      [{ name: "Editor", field_type: 3, field_data: {} }, "Field must have at least one choice."],
      [{ name: "Editor", field_type: 3, field_data: { " ": { text: "A", order: "1" } } }, "'value' cannot be blank."],
      [
        { name: "Editor", field_type: 3, field_data: { a: { text: "A", order: "1" }, b: { text: "A", order: "2" } } },
        "Field must not have duplicate choices.",
      ],
      [{ name: "Editor", field_type: 3, field_data: { a: { text: "A" } } }, "order key is missing from field_data"],
      [
        { name: "Editor", field_type: 3, field_data: { a: { text: " ", order: "1" } } },
        'field_data["text"] cannot be blank.',
      ],
      [
        { name: "Editor", field_type: 3, field_data: { a: { text: "A", order: "1", x: "y" } } },
        "Unexpected arguments: x",
      ],
      [{ name: "Acct", field_type: 7, field_data: { subtype: "myspace" } }, "Invalid external account type"],
      [{ name: "Acct", field_type: 7, field_data: {} }, "subtype key is missing from field_data"],
      [
        { name: "Acct", field_type: 7, field_data: { subtype: "custom", url_pattern: "https://x.example.com/" } },
        "URL pattern must contain '%(username)s'.",
      ],
      [
        { name: "Bio", field_type: 2, display_in_profile_summary: true },
        "Field type not supported for display in profile summary.",
      ],
      [
        { name: "Mentor", field_type: 6, display_in_profile_summary: true },
        "Field type not supported for display in profile summary.",
      ],
    ];
    for (const [params, msg] of cases)
      await expectRejectedUnchanged(
        server,
        () => server.call(owner, "POST", "/realm/profile_fields", params),
        400,
        "BAD_REQUEST",
        msg,
      );
    await createField({ name: "Pronouns", field_type: 8, display_in_profile_summary: true });
    const limit = "Only 2 custom profile fields can be displayed in the profile summary.";
    await expectRejectedUnchanged(
      server,
      () =>
        server.call(owner, "POST", "/realm/profile_fields", {
          name: "Third",
          field_type: 1,
          display_in_profile_summary: true,
        }),
      400,
      "BAD_REQUEST",
      limit,
    );
    const patches: [number | string, Record<string, unknown>, string][] = [
      [github, { name: "Code" }, "Default custom field cannot be updated."],
      [github, { display_in_profile_summary: true }, limit],
      [424242, { name: "x" }, "Field id 424242 not found."],
      ["abc", { name: "x" }, "Field id abc not found."],
    ];
    for (const [id, params, msg] of patches)
      await expectRejectedUnchanged(
        server,
        () => server.call(owner, "PATCH", `/realm/profile_fields/${id}`, params),
        400,
        "BAD_REQUEST",
        msg,
      );
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "PATCH", "/realm/profile_fields", { order: [github] }),
      400,
      "BAD_REQUEST",
      "Invalid order mapping.",
    );
    // A default account field may change only its summary display (and flags).
    expect((await server.call(owner, "PATCH", `/realm/profile_fields/${github}`, { required: true })).status).toBe(200);
  });
});

describe("events and removal", () => {
  it("custom_profile_fields lists every field after each change; realm_user updates carry values", async () => {
    const { owner, bob, alice } = server.seed;
    const q = await openQueue(alice);
    const bio = await createField({ name: "Bio", field_type: 2 });
    const select = await createField({ name: "Editor", field_type: 3, field_data: SELECT_OPTIONS });
    await server.call(bob, "PATCH", "/users/me/profile_data", {
      data: [
        { id: bio, value: "Hi *there*" },
        { id: select, value: "vim" },
      ],
    });
    // Unchanged values send nothing.
    await server.call(bob, "PATCH", "/users/me/profile_data", { data: [{ id: bio, value: "Hi *there*" }] });
    // Dropping the "vim" option drops bob's value, with its update.
    await server.call(owner, "PATCH", `/realm/profile_fields/${select}`, {
      field_data: { emacs: SELECT_OPTIONS.emacs },
    });
    await server.call(owner, "PATCH", "/realm/profile_fields", { order: [select, bio] });
    await server.call(bob, "DELETE", "/users/me/profile_data", { data: [bio] });
    const events = await eventsOf(alice, q);
    const fieldLists = events.filter((e) => e["type"] === "custom_profile_fields");
    expect(fieldLists.map((e) => (e["fields"] as Wire[]).map((f) => f["id"]))).toEqual([
      [bio],
      [bio, select],
      [bio, select],
      [select, bio],
    ]);
    expect(((fieldLists[2]!["fields"] as Wire[])[1] as Wire)["field_data"]).toBe(
      JSON.stringify({ emacs: SELECT_OPTIONS.emacs }),
    );
    expect(events.filter((e) => e["type"] === "realm_user")).toEqual([
      {
        type: "realm_user",
        op: "update",
        person: {
          user_id: bob.id,
          custom_profile_field: { id: bio, value: "Hi *there*", rendered_value: "<p>Hi <em>there</em></p>" },
        },
      },
      {
        type: "realm_user",
        op: "update",
        person: { user_id: bob.id, custom_profile_field: { id: select, value: "vim" } },
      },
      {
        type: "realm_user",
        op: "update",
        person: { user_id: bob.id, custom_profile_field: { id: select, value: null } },
      },
      {
        type: "realm_user",
        op: "update",
        person: { user_id: bob.id, custom_profile_field: { id: bio, value: null } },
      },
    ]);
  });

  it("deleting a field removes every value of it", async () => {
    const { owner, bob, alice } = server.seed;
    const team = await createField({ name: "Team", field_type: 1 });
    const city = await createField({ name: "City", field_type: 1 });
    for (const user of [bob, alice])
      await server.call(user, "PATCH", "/users/me/profile_data", {
        data: [
          { id: team, value: "core" },
          { id: city, value: "Oslo" },
        ],
      });
    const q = await openQueue(alice);
    expect((await server.call(owner, "DELETE", `/realm/profile_fields/${team}`)).status).toBe(200);
    for (const user of [bob, alice])
      expect(Object.keys((await profileOf(owner, user.id)) ?? {})).toEqual([String(city)]);
    expect(server.t.store.getUser(bob.id).profileData).toEqual({ [city]: "Oslo" });
    expect((await fieldsOf(bob)).map((f) => f["id"])).toEqual([city]);
    const events = await eventsOf(alice, q);
    expect(events).toEqual([{ type: "custom_profile_fields", fields: await fieldsOf(bob) }]);
    // The ID is gone: setting it again is refused.
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "PATCH", "/users/me/profile_data", { data: [{ id: team, value: "x" }] }),
      400,
      "BAD_REQUEST",
      `Field id ${team} not found.`,
    );
  });
});
