/**
 * Default channel groups over HTTP: POST /default_stream_groups/create, PATCH
 * /default_stream_groups/{id} and /{id}/streams, DELETE /default_stream_groups/{id},
 * each with its permission matrix (owner, administrator, moderator, member, guest, bots,
 * another realm's owner); Zulip's checks and messages in its order, every refusal
 * changing nothing; register's realm_default_stream_groups (none for guests); the
 * `default_stream_groups` event with the whole list to non-guests; archiving a channel
 * takes it out of its groups.
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
  const bot = (email: string, fullName: string, role: (typeof ROLE)[keyof typeof ROLE]) =>
    store.createUser({ realmId, email, fullName, role, bot: { type: 1, ownerId: s.seed.owner.id } });
  adminBot = bot("admin-bot@test.dev", "Admin Bot", ROLE.ADMINISTRATOR);
  memberBot = bot("member-bot@test.dev", "Member Bot", ROLE.MEMBER);
  queen = store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen" },
  }).owner;
  for (const name of ["design", "docs", "ops"])
    store.subscribe(s.seed.owner.id, { channels: [{ name }], principals: [s.seed.owner.id, admin.id, adminBot.id] });
});
afterAll(() => s.close());

type Reply = { status: number; body: Record<string, unknown> };
const NO_PERMISSION = [400, "BAD_REQUEST", "You do not have permission to change default channels."] as const;
const refused = (call: () => Promise<Reply>, msg: string | RegExp) =>
  expectRejectedUnchanged(s, call, 400, "BAD_REQUEST", msg);
let counter = 0;
const fresh = () => `group ${++counter}`;

const create = (user: User, name: string, channels: string[], description = "Start here") =>
  s.call(user, "POST", "/default_stream_groups/create", {
    group_name: name,
    description,
    stream_names: channels,
  });
const rename = (user: User, id: number, params: Record<string, unknown>) =>
  s.call(user, "PATCH", `/default_stream_groups/${id}`, params);
const channels = (user: User, id: number, op: string, names: string[]) =>
  s.call(user, "PATCH", `/default_stream_groups/${id}/streams`, { op, stream_names: names });
const remove = (user: User, id: number) => s.call(user, "DELETE", `/default_stream_groups/${id}`);

/** The caller's realm_default_stream_groups from register. */
async function registered(user: User): Promise<Record<string, unknown>[]> {
  const r = await s.call(user, "POST", "/register", { fetch_event_types: ["default_stream_groups"] });
  expect(r.status).toBe(200);
  return r.body["realm_default_stream_groups"] as Record<string, unknown>[];
}

/** Creates a group as the owner and answers its ID (from register). */
async function made(name: string, names: string[]): Promise<number> {
  expect(await create(s.seed.owner, name, names)).toMatchObject({ status: 200, body: { result: "success" } });
  return (await registered(s.seed.owner)).find((g) => g["name"] === name)!["id"] as number;
}

const channelNamesOf = (group: Record<string, unknown> | undefined) =>
  (group?.["streams"] as Record<string, unknown>[] | undefined)?.map((c) => c["name"]);

async function queueFor(user: User) {
  const r = await s.call(user, "POST", "/register", { event_types: ["default_stream_groups"] });
  expect(r.status).toBe(200);
  let last = r.body["last_event_id"] as number;
  return async (): Promise<Record<string, unknown>[]> => {
    const p = await s.call(user, "GET", "/events", {
      queue_id: r.body["queue_id"],
      last_event_id: last,
      dont_block: true,
    });
    const events = (p.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] !== "heartbeat");
    if (events.length > 0) last = events[events.length - 1]!["id"] as number;
    return events;
  };
}

describe("permission matrix", () => {
  it("administrators (bots by their role) manage groups; moderators, members, guests and member bots are refused", async () => {
    const { alice, guest, owner } = s.seed;
    const id = await made(fresh(), ["design"]);
    for (const caller of [moderator, alice, guest, memberBot]) {
      await expectRejectedUnchanged(s, () => create(caller, fresh(), ["docs"]), ...NO_PERMISSION);
      await expectRejectedUnchanged(s, () => rename(caller, id, { new_description: "x" }), ...NO_PERMISSION);
      await expectRejectedUnchanged(s, () => channels(caller, id, "add", ["docs"]), ...NO_PERMISSION);
      await expectRejectedUnchanged(s, () => remove(caller, id), ...NO_PERMISSION);
    }
    for (const caller of [owner, admin, adminBot]) {
      expect((await create(caller, fresh(), ["docs"])).status).toBe(200);
      expect((await rename(caller, id, { new_description: `by ${caller.id}` })).status).toBe(200);
    }
    expect((await channels(adminBot, id, "add", ["docs"])).status).toBe(200);
    expect((await channels(admin, id, "remove", ["docs"])).status).toBe(200);
    expect((await remove(admin, id)).status).toBe(200);
    expect((await registered(owner)).some((g) => g["id"] === id)).toBe(false);
  });

  it("another realm's owner sees none of this realm's groups, and theirs are not found here", async () => {
    const id = await made(fresh(), ["design"]);
    const asBee = (method: string, path: string, params: Record<string, unknown>): Promise<Reply> =>
      rawRequest(
        s.base,
        method,
        path,
        {
          Host: "bee.localhost",
          Authorization: basicAuth(s.t.store.getUser(queen.id)),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        encodeParams(params).toString(),
      );
    const missing = `Default channel group with id '${id}' does not exist.`;
    await refused(() => asBee("PATCH", `/default_stream_groups/${id}`, { new_description: "x" }), missing);
    await refused(() => asBee("DELETE", `/default_stream_groups/${id}`, {}), missing);
    await refused(
      () =>
        asBee("POST", "/default_stream_groups/create", {
          group_name: "hive",
          description: "",
          stream_names: ["design"],
        }),
      "Invalid channel name 'design'",
    );
    const beeGroups = await asBee("POST", "/register", { fetch_event_types: ["default_stream_groups"] });
    expect(beeGroups.body["realm_default_stream_groups"]).toEqual([]);
  });
});

describe("POST /default_stream_groups/create", () => {
  it("stores the group, lists it by name in register with full channel objects by name; guests get none", async () => {
    const name = "Aardvarks";
    const id = await made(name, ["ops", "design"]);
    const group = (await registered(s.seed.alice)).find((g) => g["id"] === id);
    expect(group).toMatchObject({ name, description: "Start here", id });
    expect(channelNamesOf(group)).toEqual(["design", "ops"]);
    expect((group!["streams"] as Record<string, unknown>[])[0]).toMatchObject({
      name: "design",
      invite_only: false,
      stream_id: expect.any(Number),
    });
    const names = (await registered(s.seed.alice)).map((g) => g["name"] as string);
    expect(names).toEqual([...names].sort());
    expect(await registered(s.seed.guest)).toEqual([]);
  });

  it("refuses, changing nothing: bad names, a taken name, default channels, channels the caller cannot reach", async () => {
    const { owner, general } = s.seed;
    const taken = fresh();
    await made(taken, []);
    await refused(() => create(owner, "   ", ["design"]), "Invalid default channel group name '   '");
    await refused(
      () => create(owner, "x".repeat(61), []),
      "Default channel group name too long (limit: 60 characters)",
    );
    await refused(
      () => create(owner, "a\0b", []),
      "Default channel group name 'a\0b' contains NULL (0x00) characters.",
    );
    await refused(() => create(owner, taken, ["design"]), `Default channel group '${taken}' already exists`);
    await refused(() => create(owner, fresh(), ["nowhere"]), "Invalid channel name 'nowhere'");
    // The owner is not subscribed to this private channel: as Zulip's access_stream_by_name, it is not found.
    s.t.store.subscribe(s.seed.alice.id, {
      channels: [{ name: "hidden" }],
      principals: [s.seed.alice.id],
      newChannel: { inviteOnly: true },
    });
    await refused(() => create(owner, fresh(), ["hidden"]), "Invalid channel name 'hidden'");
    s.t.store.setDefaultChannel(owner.id, general.id, true);
    const name = fresh();
    await refused(
      () => create(owner, name, ["general"]),
      `'general' is a default channel and cannot be added to '${name}'`,
    );
    s.t.store.setDefaultChannel(owner.id, general.id, false);
    await expectRejectedUnchanged(
      s,
      () => s.call(owner, "POST", "/default_stream_groups/create", { group_name: fresh(), stream_names: "[]" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'description' argument",
    );
  });
});

describe("PATCH /default_stream_groups/{group_id}", () => {
  it("renames and describes; refuses nothing given, the same name, a taken one, a missing group", async () => {
    const { owner } = s.seed;
    const id = await made("Before", ["design"]);
    const other = fresh();
    await made(other, []);
    const neither = 'You must pass "new_description" or "new_group_name".';
    await refused(() => rename(owner, id, {}), neither);
    await refused(() => rename(owner, id, { new_group_name: "", new_description: "" }), neither);
    await refused(
      () => rename(owner, id, { new_group_name: "Before" }),
      "This default channel group is already named 'Before'",
    );
    await refused(
      () => rename(owner, id, { new_group_name: other }),
      `Default channel group '${other}' already exists`,
    );
    await refused(() => rename(owner, id, { new_group_name: "y".repeat(61) }), /too long \(limit: 60 characters\)/);
    await refused(
      () => rename(owner, 1_999_999, { new_description: "x" }),
      "Default channel group with id '1999999' does not exist.",
    );
    expect((await rename(owner, id, { new_group_name: "After", new_description: "New words" })).status).toBe(200);
    expect((await registered(owner)).find((g) => g["id"] === id)).toMatchObject({
      name: "After",
      description: "New words",
    });
  });
});

describe("PATCH /default_stream_groups/{group_id}/streams", () => {
  it("adds and removes channels with Zulip's checks, op checked last", async () => {
    const { owner } = s.seed;
    const id = await made(fresh(), ["design"]);
    const name = (await registered(owner)).find((g) => g["id"] === id)!["name"] as string;
    await refused(
      () => channels(owner, id, "add", ["design"]),
      `Channel 'design' is already present in default channel group '${name}'`,
    );
    await refused(
      () => channels(owner, id, "remove", ["docs"]),
      `Channel 'docs' is not present in default channel group '${name}'`,
    );
    await refused(() => channels(owner, id, "add", ["nowhere"]), "Invalid channel name 'nowhere'");
    await refused(
      () => channels(owner, id, "replace", ["docs"]),
      'Invalid value for "op". Specify one of "add" or "remove".',
    );
    await refused(() => channels(owner, 1_999_999, "replace", ["nowhere"]), /does not exist/);
    expect((await channels(owner, id, "add", ["ops", "docs"])).status).toBe(200);
    expect(channelNamesOf((await registered(owner)).find((g) => g["id"] === id))).toEqual(["design", "docs", "ops"]);
    expect((await channels(owner, id, "remove", ["design", "ops"])).status).toBe(200);
    expect(channelNamesOf((await registered(owner)).find((g) => g["id"] === id))).toEqual(["docs"]);
  });
});

describe("events and archiving", () => {
  it("every change sends non-guests the whole list by name; archiving a channel takes it out of its groups", async () => {
    const { owner, alice, guest } = s.seed;
    s.t.store.subscribe(owner.id, { channels: [{ name: "doomed" }], principals: [owner.id] });
    const aliceEvents = await queueFor(alice);
    const guestEvents = await queueFor(guest);
    const id = await made("Zebras", ["doomed", "docs"]);
    const created = await aliceEvents();
    expect(created).toHaveLength(1);
    const list = created[0]!["default_stream_groups"] as Record<string, unknown>[];
    expect(created[0]!["type"]).toBe("default_stream_groups");
    expect(list).toEqual(await registered(alice));
    expect(channelNamesOf(list.find((g) => g["id"] === id))).toEqual(["docs", "doomed"]);

    const doomed = s.t.store.channelIdByName(owner.id, "doomed");
    expect((await s.call(owner, "DELETE", `/streams/${doomed}`)).status).toBe(200);
    const afterArchive = (await aliceEvents()).filter((e) => e["type"] === "default_stream_groups");
    expect(afterArchive).toHaveLength(1);
    const archivedList = afterArchive[0]!["default_stream_groups"] as Record<string, unknown>[];
    expect(channelNamesOf(archivedList.find((g) => g["id"] === id))).toEqual(["docs"]);
    expect(archivedList).toEqual(await registered(alice));

    expect((await remove(owner, id)).status).toBe(200);
    const removed = await aliceEvents();
    expect((removed[0]!["default_stream_groups"] as Record<string, unknown>[]).some((g) => g["id"] === id)).toBe(false);
    expect(await guestEvents()).toEqual([]);
  });
});
