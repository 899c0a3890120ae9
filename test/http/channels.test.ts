/**
 * Channel administration over HTTP: GET/PATCH/DELETE /streams/{id}, its members and
 * GET /get_stream_id. Permission matrices (owner, administrator, moderator, the
 * channel's creator, another member, guest, bot, another realm's owner), Zulip's
 * validation and refusals (nothing changed), the `stream update` events with their
 * extra fields and audiences, archiving for clients with and without the
 * archived_channels capability, and the Notification Bot's notices.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Channel, User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { roleMatrix, type RoleMatrix } from "../support/role-matrix.js";

let server: TestServer;
let matrix: RoleMatrix;
let admin: User;
let mod: User;
let bot: User;
let stranger: User;
beforeEach(async () => {
  server = await startServer();
  matrix = roleMatrix(server, "localhost");
  ({ admin, moderator: mod, bot, "another realm": stranger } = matrix.users);
});
afterEach(() => server.close());

/** A request as `user`, to their own realm (another realm's owner asks their own subdomain). */
const as = (user: User, method: string, path: string, params: Record<string, unknown> = {}) =>
  matrix.as(user, method, path, params);

const sys = (name: string) => server.t.store.systemGroupId(server.seed.realm.id, name);

/** A channel created by `creator` through the API (so its creator administers it). */
async function createChannel(creator: User, name: string, extra: Record<string, unknown> = {}): Promise<Channel> {
  const r = await server.call(creator, "POST", "/users/me/subscriptions", {
    subscriptions: [{ name, description: `about ${name}` }],
    ...extra,
  });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return channelNamed(name);
}

function channelNamed(name: string): Channel {
  const found = [...server.t.store.visibleChannels(server.seed.owner.id, true)].find((c) => c.name === name);
  if (!found) throw new Error(`no channel ${name}`);
  return found;
}

const patch = (user: User, channel: Channel, params: Record<string, unknown>) =>
  server.call(user, "PATCH", `/streams/${channel.id}`, params);

async function openQueue(user: User, capabilities: Record<string, boolean> = { archived_channels: true }) {
  const r = await server.call(user, "POST", "/register", {
    event_types: ["stream", "subscription", "default_streams", "message"],
    client_capabilities: capabilities,
  });
  expect(r.status).toBe(200);
  return { user, queueId: r.body["queue_id"] as string, last: r.body["last_event_id"] as number };
}

async function drain(q: { user: User; queueId: string; last: number }): Promise<Record<string, unknown>[]> {
  const r = await server.call(q.user, "GET", "/events", {
    queue_id: q.queueId,
    last_event_id: q.last,
    dont_block: true,
  });
  const events = (r.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] !== "heartbeat");
  if (events.length > 0) q.last = events[events.length - 1]!["id"] as number;
  return events.map(({ id: _id, ...rest }) => rest);
}

/** The newest message in the channel's "channel events" topic, as the owner sees it. */
async function lastNotice(channel: Channel): Promise<Record<string, unknown>> {
  const r = await server.call(server.seed.owner, "GET", "/messages", {
    anchor: "newest",
    num_before: 1,
    num_after: 0,
    narrow: [
      { operator: "channel", operand: channel.id },
      { operator: "topic", operand: "channel events" },
    ],
    apply_markdown: false,
  });
  return (r.body["messages"] as Record<string, unknown>[])[0]!;
}

describe("permission matrices", () => {
  type Row = [string, () => User, number, string];
  const rows = (allowed: (name: string) => boolean, refusal: (name: string) => [number, string]): Row[] =>
    (
      [
        ["owner", () => server.seed.owner],
        ["admin", () => admin],
        ["moderator", () => mod],
        ["creator (member)", () => server.seed.alice],
        ["member", () => server.seed.bob],
        ["guest", () => server.seed.guest],
        ["bot", () => bot],
        ["another realm", () => stranger],
      ] as const
    ).map(([name, who]) => (allowed(name) ? [name, who, 200, ""] : [name, who, ...refusal(name)]));

  const cannot = "You do not have permission to administer this channel.";
  const adminsAndCreator = (name: string) => ["owner", "admin", "creator (member)"].includes(name);
  // Who may read a public channel's content but not administer it is told so; the others cannot see it.
  const publicRefusal = (name: string): [number, string] =>
    ["guest", "another realm"].includes(name) ? [400, "Invalid channel ID"] : [400, cannot];

  it("PATCH on a public channel: administrators and the creator (can_administer_channel_group)", async () => {
    const club = await createChannel(server.seed.alice, "club");
    for (const [name, who, status, msg] of rows(adminsAndCreator, publicRefusal)) {
      const r = await as(who(), "PATCH", `/streams/${club.id}`, { description: `by ${name}` });
      expect([name, r.status, r.body["msg"] ?? ""]).toEqual([name, status, msg === "" ? "" : msg]);
      if (status !== 200) expect(r.body["code"]).toBe(msg === cannot ? "CANNOT_ADMINISTER_CHANNEL" : "BAD_REQUEST");
    }
    expect(server.t.store.getChannel(club.id)!.description).toBe("by creator (member)");
  });

  it("DELETE (archive): the same people; a private channel's non-subscribers see nothing", async () => {
    for (const [name, who, status, msg] of rows(adminsAndCreator, publicRefusal)) {
      const channel = await createChannel(server.seed.alice, `arch-${name.replace(/\W/g, "")}`);
      const r = await as(who(), "DELETE", `/streams/${channel.id}`);
      expect([name, r.status, r.body["msg"]]).toEqual([name, status, msg]);
      expect(server.t.store.getChannel(channel.id)!.isArchived).toBe(status === 200);
    }
    // bob, not subscribed to the private #secret, cannot tell it from a channel that does not exist.
    const { secret, bob } = server.seed;
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "DELETE", `/streams/${secret.id}`),
      400,
      "BAD_REQUEST",
      "Invalid channel ID",
    );
  });

  it("GET /streams/{id} and its members: whoever has the channel's metadata", async () => {
    const { secret, general } = server.seed;
    const cases: [string, User, boolean, boolean][] = [
      // name, user, sees #general, sees #secret
      ["owner", server.seed.owner, true, true],
      ["admin (not subscribed)", admin, true, true],
      ["moderator", mod, true, false],
      ["subscriber", server.seed.alice, true, true],
      ["member", server.seed.bob, true, false],
      ["guest", server.seed.guest, false, false],
      ["bot", bot, true, false],
      ["another realm", stranger, false, false],
    ];
    for (const [name, user, seesGeneral, seesSecret] of cases) {
      for (const [channel, sees] of [
        [general, seesGeneral],
        [secret, seesSecret],
      ] as const) {
        const one = await as(user, "GET", `/streams/${channel.id}`);
        const members = await as(user, "GET", `/streams/${channel.id}/members`);
        expect([name, channel.name, one.status, members.status]).toEqual([
          name,
          channel.name,
          sees ? 200 : 400,
          sees ? 200 : 400,
        ]);
        if (!sees) {
          expect(one.body["msg"]).toBe("Invalid channel ID");
          continue;
        }
        const listed = await server.call(user, "GET", "/streams", { include_all: user.role <= 200 });
        const same = (listed.body["streams"] as Record<string, unknown>[]).find((s) => s["stream_id"] === channel.id);
        if (same) expect(one.body["stream"]).toEqual(same);
        expect(members.body["subscribers"]).toEqual(server.t.store.subscribersVisibleTo(user.id, channel.id));
      }
    }
  });

  it("GET /get_stream_id: channels whose content the caller has, by name in any case", async () => {
    const { secret, general } = server.seed;
    const cases: [string, User, boolean, boolean][] = [
      ["owner", server.seed.owner, true, true],
      ["admin (not subscribed)", admin, true, false],
      ["moderator", mod, true, false],
      ["member", server.seed.bob, true, false],
      ["guest", server.seed.guest, false, false],
      ["bot", bot, true, false],
      ["another realm", stranger, false, false],
    ];
    for (const [name, user, general_, secret_] of cases) {
      for (const [channel, ok] of [
        [general, general_],
        [secret, secret_],
      ] as const) {
        const r = await as(user, "GET", "/get_stream_id", { stream: channel.name.toUpperCase() });
        expect([name, channel.name, r.body]).toEqual([
          name,
          channel.name,
          ok
            ? { result: "success", msg: "", stream_id: channel.id }
            : {
                result: "error",
                msg: `Invalid channel name '${channel.name.toUpperCase()}'`,
                code: "BAD_REQUEST",
              },
        ]);
      }
    }
  });
});

describe("PATCH /streams/{id}", () => {
  it("renames, describes and changes the topics policy, with Zulip's events and notices", async () => {
    const { owner, alice, bob } = server.seed;
    const club = await createChannel(alice, "club");
    const q = await openQueue(bob);
    const r = await patch(alice, club, {
      new_name: "  Book club ",
      description: "Books\nand more",
      topics_policy: "disable_empty_topic",
    });
    expect(r.body).toEqual({ result: "success", msg: "" });
    const events = await drain(q);
    const updates = events.filter((e) => e["type"] === "stream");
    expect(updates).toEqual([
      {
        type: "stream",
        op: "update",
        stream_id: club.id,
        name: "Book club",
        property: "topics_policy",
        value: "disable_empty_topic",
      },
      {
        type: "stream",
        op: "update",
        stream_id: club.id,
        name: "Book club",
        property: "description",
        value: "Books and more",
        rendered_description: "<p>Books and more</p>",
      },
      { type: "stream", op: "update", stream_id: club.id, name: "club", property: "name", value: "Book club" },
    ]);
    const stream = (await server.call(owner, "GET", `/streams/${club.id}`)).body["stream"] as Record<string, unknown>;
    expect(stream).toMatchObject({
      name: "Book club",
      description: "Books and more",
      rendered_description: "<p>Books and more</p>",
      topics_policy: "disable_empty_topic",
    });
    const notice = await lastNotice(channelNamed("Book club"));
    expect(notice["sender_email"]).toBe("notification-bot@zulip.com");
    expect(notice["content"]).toBe(`@_**Alice|${alice.id}** renamed channel **club** to **Book club**.`);
  });

  it("changes access with the invite_only event, reveals a channel made public and hides one made private", async () => {
    const { owner, alice, bob } = server.seed;
    const club = await createChannel(alice, "club", { invite_only: true });
    const bobs = await openQueue(bob);
    const alices = await openQueue(alice);
    expect((await patch(alice, club, { is_private: false })).status).toBe(200);
    // bob could not see it: he gets it whole, then its subscribers.
    const revealed = await drain(bobs);
    expect(revealed.map((e) => `${e["type"]} ${e["op"]}`)).toEqual(["stream create", "subscription peer_add"]);
    expect((revealed[0]!["streams"] as Record<string, unknown>[])[0]).toMatchObject({
      stream_id: club.id,
      invite_only: false,
      history_public_to_subscribers: true,
    });
    expect(revealed[1]).toMatchObject({ stream_ids: [club.id], user_ids: [alice.id] });
    const update = (await drain(alices)).find((e) => e["type"] === "stream");
    expect(update).toEqual({
      type: "stream",
      op: "update",
      stream_id: club.id,
      name: "club",
      property: "invite_only",
      value: false,
      history_public_to_subscribers: true,
      is_web_public: false,
    });
    expect((await lastNotice(club))["content"]).toBe(
      `@_**Alice|${alice.id}** changed the [access permissions](/help/channel-permissions) for this channel ` +
        "from **Private, protected history** to **Public**.",
    );
    // Private again, with shared history: bob loses it.
    expect((await patch(owner, club, { is_private: true, history_public_to_subscribers: true })).status).toBe(200);
    expect((await drain(bobs)).filter((e) => e["type"] === "stream")).toEqual([
      { type: "stream", op: "delete", streams: [{ stream_id: club.id, name: "club" }], stream_ids: [club.id] },
    ]);
    expect(server.t.store.getChannel(club.id)).toMatchObject({ inviteOnly: true, historyPublicToSubscribers: true });
  });

  it("group settings: the value in the update event, old/new, content access, metadata gained by the group", async () => {
    const { alice, bob, secret } = server.seed;
    const club = await createChannel(alice, "club");
    const q = await openQueue(bob);
    const value = { direct_members: [bob.id], direct_subgroups: [sys("role:moderators")] };
    expect((await patch(alice, club, { can_remove_subscribers_group: { new: value } })).status).toBe(200);
    expect((await drain(q)).filter((e) => e["type"] === "stream")).toEqual([
      {
        type: "stream",
        op: "update",
        stream_id: club.id,
        name: "club",
        property: "can_remove_subscribers_group",
        value,
      },
    ]);
    // A single subgroup and no members is that group; nothing is the nobody group.
    await patch(alice, club, {
      can_remove_subscribers_group: { new: { direct_members: [], direct_subgroups: [sys("role:members")] } },
    });
    expect(server.t.store.getChannel(club.id)!.canRemoveSubscribersGroup).toBe(sys("role:members"));
    await drain(q);
    await expectRejectedUnchanged(
      server,
      () => patch(alice, club, { can_remove_subscribers_group: { new: sys("role:owners"), old: sys("role:nobody") } }),
      400,
      "BAD_REQUEST",
      "'old' value does not match the expected value.",
    );
    await expectRejectedUnchanged(
      server,
      () => patch(alice, club, { can_subscribe_group: { new: sys("role:everyone") } }),
      400,
      "BAD_REQUEST",
      "'can_subscribe_group' setting cannot be set to 'role:everyone' group.",
    );
    // The owner created #secret; an administrator who is not subscribed may rename it but not open it up.
    await expectRejectedUnchanged(
      server,
      () => patch(admin, secret, { can_subscribe_group: { new: sys("role:members") } }),
      400,
      "BAD_REQUEST",
      "Channel content access is required.",
    );
    await expectRejectedUnchanged(
      server,
      () => patch(admin, secret, { is_private: false }),
      400,
      "BAD_REQUEST",
      "Channel content access is required.",
    );
    expect((await patch(admin, secret, { description: "hush" })).status).toBe(200);
    // Members of can_administer_channel_group gain the private channel's metadata: create + peer_add.
    expect(
      (
        await patch(server.seed.owner, secret, {
          can_administer_channel_group: { new: { direct_members: [bob.id], direct_subgroups: [] } },
        })
      ).status,
    ).toBe(200);
    const gained = await drain(q);
    expect(gained.map((e) => `${e["type"]} ${e["op"]}`)).toEqual(["stream create", "subscription peer_add"]);
    expect((await server.call(bob, "GET", `/streams/${secret.id}`)).status).toBe(200);
    // ...which lets bob administer it (though not read it).
    expect((await patch(bob, secret, { description: "bob's" })).status).toBe(200);
    const read = await server.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: "channel", operand: secret.id }],
    });
    expect(read.body["messages"]).toEqual([]);
  });

  it("refuses what Zulip refuses and changes nothing", async () => {
    const { owner, alice, general } = server.seed;
    const club = await createChannel(alice, "club");
    const cases: [User, Record<string, unknown>, string, string][] = [
      [alice, { is_private: false, history_public_to_subscribers: false }, "BAD_REQUEST", "Invalid parameters"],
      [owner, { is_web_public: true }, "BAD_REQUEST", "Web-public channels are not enabled."],
      [owner, { is_default_stream: true, is_private: true }, "BAD_REQUEST", "A default channel cannot be private."],
      [alice, { is_default_stream: true }, "BAD_REQUEST", "You do not have permission to change default channels."],
      [alice, { message_retention_days: 30 }, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"],
      [alice, { new_name: "club" }, "BAD_REQUEST", "Channel already has that name."],
      [alice, { new_name: "GENERAL" }, "CHANNEL_ALREADY_EXISTS", "Channel 'GENERAL' already exists"],
      [alice, { new_name: "   " }, "BAD_REQUEST", "Channel name can't be empty."],
      [alice, { is_archived: false }, "BAD_REQUEST", "Channel is not currently deactivated"],
      [alice, { topics_policy: "sometimes" }, "BAD_REQUEST", "Invalid topics_policy"],
      [alice, { message_retention_days: "forever" }, "BAD_REQUEST", "Bad value for 'message_retention_days': forever"],
      [alice, { can_delete_any_message_group: { new: sys("role:members") } }, "BAD_REQUEST", "Insufficient permission"],
      [
        alice,
        { is_private: true, can_create_topic_group: { new: sys("role:members") } },
        "BAD_REQUEST",
        "Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group",
      ],
      [
        alice,
        { can_send_message_group: { new: { direct_members: [999_999], direct_subgroups: [] } } },
        "BAD_REQUEST",
        "Invalid user ID: 999999",
      ],
    ];
    for (const [user, params, code, msg] of cases) {
      // Zulip answers a name in use with 409 Conflict.
      const status = code === "CHANNEL_ALREADY_EXISTS" ? 409 : 400;
      await expectRejectedUnchanged(server, () => patch(user, club, params), status, code, msg);
    }
    server.t.store.sendMessage({
      senderId: alice.id,
      to: { type: "channel", channel: "club", topic: "named" },
      content: "x",
    });
    await expectRejectedUnchanged(
      server,
      () => patch(alice, club, { topics_policy: "empty_topic_only" }),
      400,
      "BAD_REQUEST",
      /all messages in this channel must be in the "general chat" topic/,
    );
    await expectRejectedUnchanged(
      server,
      () => patch(alice, general, {}),
      400,
      "CANNOT_ADMINISTER_CHANNEL",
      /administer/,
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "PATCH", "/streams/abc", {}),
      400,
      "BAD_REQUEST",
      "Invalid channel ID",
    );
  });

  it("the owner sets retention and the default flag; posting permission changes post_policy events and a notice", async () => {
    const { owner, bob } = server.seed;
    const club = await createChannel(owner, "club");
    const q = await openQueue(bob);
    const r = await patch(owner, club, {
      message_retention_days: 30,
      is_default_stream: true,
      can_send_message_group: { new: sys("role:administrators") },
    });
    expect(r.status).toBe(200);
    const events = await drain(q);
    expect(events.filter((e) => e["type"] !== "message")).toEqual([
      { type: "default_streams", default_streams: [club.id] },
      { type: "stream", op: "update", stream_id: club.id, name: "club", property: "message_retention_days", value: 30 },
      {
        type: "stream",
        op: "update",
        stream_id: club.id,
        name: "club",
        property: "can_send_message_group",
        value: sys("role:administrators"),
      },
      { type: "stream", op: "update", stream_id: club.id, name: "club", property: "stream_post_policy", value: 2 },
      { type: "stream", op: "update", stream_id: club.id, name: "club", property: "is_announcement_only", value: true },
    ]);
    expect((await lastNotice(club))["content"]).toBe(
      `@_**Olive Owner|${owner.id}** changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
        "* **Old**: @_*role:everyone*\n* **New**: @_*role:administrators*",
    );
    // Enforced at once: bob may no longer post there.
    const sent = await server.call(bob, "POST", "/messages", {
      type: "stream",
      to: club.id,
      topic: "t",
      content: "hi",
    });
    expect(sent.body["msg"]).toBe("You do not have permission to post in this channel.");
  });
});

describe("archiving", () => {
  it("archives and unarchives, as an update for capable clients and delete/create for the others", async () => {
    const { alice, bob } = server.seed;
    const club = await createChannel(alice, "club", { is_default_stream: false });
    const capable = await openQueue(bob);
    const legacy = await openQueue(bob, {});
    expect((await server.call(alice, "DELETE", `/streams/${club.id}`)).status).toBe(200);
    expect((await drain(capable)).filter((e) => e["type"] === "stream")).toEqual([
      { type: "stream", op: "update", stream_id: club.id, name: "club", property: "is_archived", value: true },
    ]);
    expect((await drain(legacy)).filter((e) => e["type"] === "stream")).toEqual([
      { type: "stream", op: "delete", streams: [{ stream_id: club.id, name: "club" }], stream_ids: [club.id] },
    ]);
    const notice = await lastNotice(club);
    expect(notice["content"]).toBe("Channel club has been archived.");
    // Archived: no more posting, still readable by ID, a second archive refused.
    const sent = await server.call(alice, "POST", "/messages", {
      type: "stream",
      to: club.id,
      topic: "t",
      content: "x",
    });
    expect(sent.body["msg"]).toBe("Not authorized to send to channel 'club'");
    expect((await server.call(alice, "GET", `/streams/${club.id}`)).body["stream"]).toMatchObject({
      is_archived: true,
    });
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "DELETE", `/streams/${club.id}`),
      400,
      "BAD_REQUEST",
      "Channel is already deactivated",
    );
    expect((await patch(alice, club, { is_archived: false })).status).toBe(200);
    expect((await drain(capable)).filter((e) => e["type"] === "stream")).toEqual([
      { type: "stream", op: "update", stream_id: club.id, name: "club", property: "is_archived", value: false },
    ]);
    const recreated = (await drain(legacy)).filter((e) => e["type"] === "stream");
    expect(
      recreated.map((e) => `${e["op"]} ${JSON.stringify((e["streams"] as { stream_id: number }[])[0]!.stream_id)}`),
    ).toEqual([`create ${club.id}`]);
    expect((await lastNotice(club))["content"]).toBe("Channel club un-archived.");
  });

  it("an archived default channel stops being one, and the announcements channel is cleared", async () => {
    const { owner } = server.seed;
    const club = await createChannel(owner, "club", { is_default_stream: true });
    server.t.store.setNewChannelAnnouncementsChannel(server.seed.realm.id, club.id);
    expect((await server.call(owner, "DELETE", `/streams/${club.id}`)).status).toBe(200);
    const reg = await server.call(owner, "POST", "/register", { fetch_event_types: ["default_streams", "realm"] });
    expect(reg.body["realm_default_streams"]).toEqual([]);
    expect(reg.body["realm_new_stream_announcements_stream_id"]).toBe(-1);
  });

  it("archiving clears the realm's other channel settings that name it, with realm update events", async () => {
    const { owner, alice } = server.seed;
    const club = await createChannel(owner, "club");
    const other = await createChannel(owner, "other");
    const settings = {
      signup_announcements_stream_id: club.id,
      zulip_update_announcements_stream_id: club.id,
      moderation_request_channel_id: other.id,
    };
    expect((await server.call(owner, "PATCH", "/realm", settings)).status).toBe(200);
    const reg = await server.call(alice, "POST", "/register", { event_types: ["realm"] });
    const q = { user: alice, queueId: reg.body["queue_id"] as string, last: reg.body["last_event_id"] as number };
    expect((await server.call(owner, "DELETE", `/streams/${club.id}`)).status).toBe(200);
    expect((await drain(q)).filter((e) => e["type"] === "realm")).toEqual([
      { type: "realm", op: "update", property: "signup_announcements_stream_id", value: -1 },
      { type: "realm", op: "update", property: "zulip_update_announcements_stream_id", value: -1 },
    ]);
    const after = await server.call(owner, "POST", "/register", { fetch_event_types: ["realm"] });
    expect(after.body).toMatchObject({
      realm_signup_announcements_stream_id: -1,
      realm_zulip_update_announcements_stream_id: -1,
      realm_moderation_request_channel_id: other.id,
    });
    // An archived channel is refused as a setting's value, as Zulip's access_stream_by_id does.
    const refused = await server.call(owner, "PATCH", "/realm", { zulip_update_announcements_stream_id: club.id });
    expect(refused).toMatchObject({ status: 400, body: { msg: "Invalid channel ID" } });
  });
});
