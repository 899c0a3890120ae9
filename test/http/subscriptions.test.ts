import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { fingerprint } from "../support/snapshot.js";
import { internals } from "../../src/engine/internal.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

/** Asserts a 4xx with Zulip's code and message, and that nothing in the store changed. */
const rejects = (
  call: () => Promise<{ status: number; body: Record<string, unknown> }>,
  status: number,
  code: string,
  msg: string | RegExp,
) => expectRejectedUnchanged(s, call, status, code, msg);

type Sub = Record<string, unknown>;
const channelId = (name: string) => internals(s.t.store).channelByName.get(`${s.seed.realm.id}:${name.toUpperCase()}`);

describe("POST /users/me/subscriptions", () => {
  it("creates a channel with its settings and subscribes the caller", async () => {
    const { alice } = s.seed;
    const r = await s.call(alice, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "design", description: "line one\nline two" }],
      invite_only: true,
      history_public_to_subscribers: false,
      topics_policy: "disable_empty_topic",
      can_send_message_group: { direct_members: [alice.id], direct_subgroups: [] },
      announce: true,
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      subscribed: { [String(alice.id)]: ["design"] },
      already_subscribed: {},
      new_subscription_messages_sent: true,
    });
    const channel = s.t.store.getChannel(channelId("design")!)!;
    expect(channel.inviteOnly).toBe(true);
    expect(channel.historyPublicToSubscribers).toBe(false);
    expect(channel.messageRetentionDays).toBeNull();
    expect(channel.topicsPolicy).toBe("disable_empty_topic");
    expect(channel.description).toBe("line one line two");
    expect(channel.canSendMessageGroup).toEqual({ directMembers: [alice.id], directSubgroups: [] });
    expect(channel.creatorId).toBe(alice.id);
  });

  it("accepts JSON-encoded strings and realm_default and integer retention", async () => {
    const { alice } = s.seed;
    const r = await s.call(alice, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "retained" }],
      message_retention_days: '"realm_default"',
      topics_policy: '"allow_empty_topic"',
    });
    expect(r.status).toBe(200);
    expect(s.t.store.getChannel(channelId("retained")!)!.messageRetentionDays).toBeNull();
    const r2 = await s.call(s.seed.owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "retained-30" }],
      message_retention_days: 30,
      can_subscribe_group: s.t.store.systemGroupId(s.seed.realm.id, "role:members"),
    });
    expect(r2.status).toBe(200);
    const channel = s.t.store.getChannel(channelId("retained-30")!)!;
    expect(channel.messageRetentionDays).toBe(30);
    expect(channel.canSubscribeGroup).toBe(s.t.store.systemGroupId(s.seed.realm.id, "role:members"));
  });

  it("applies Zulip's channel creation permissions", async () => {
    const { owner, alice } = s.seed;
    const post = (user: typeof alice, params: Record<string, unknown>) => () =>
      s.call(user, "POST", "/users/me/subscriptions", params);
    const group = (name: string) => s.t.store.systemGroupId(s.seed.realm.id, name);
    await rejects(
      post(alice, { subscriptions: [{ name: "def1" }], is_default_stream: true }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await rejects(
      post(owner, { subscriptions: [{ name: "def2" }], is_default_stream: true, invite_only: true }),
      400,
      "BAD_REQUEST",
      "A default channel cannot be private.",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "ret" }], message_retention_days: "unlimited" }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization owner",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "grp" }], can_send_message_group: group("role:internet") }),
      400,
      "BAD_REQUEST",
      "'can_send_message_group' setting cannot be set to 'role:internet' group.",
    );
    for (const setting of ["can_subscribe_group", "can_add_subscribers_group", "can_administer_channel_group"]) {
      await rejects(
        post(alice, { subscriptions: [{ name: "grp" }], [setting]: group("role:everyone") }),
        400,
        "BAD_REQUEST",
        `'${setting}' setting cannot be set to 'role:everyone' group.`,
      );
    }
    expect(
      (
        await s.call(owner, "POST", "/users/me/subscriptions", {
          subscriptions: [{ name: "def3" }],
          is_default_stream: true,
          message_retention_days: 7,
        })
      ).status,
    ).toBe(200);
    const def3 = s.t.store.getChannel(channelId("def3")!)!;
    expect(def3).toMatchObject({ isDefault: true, messageRetentionDays: 7 });
  });

  it("stores and returns every channel group setting, and derives stream_post_policy", async () => {
    const { owner } = s.seed;
    const group = (name: string) => s.t.store.systemGroupId(s.seed.realm.id, name);
    const r = await s.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "announcements", description: "Read **this** first" }],
      can_send_message_group: group("role:administrators"),
      can_move_messages_within_channel_group: group("role:moderators"),
      can_resolve_topics_group: group("role:members"),
      can_create_topic_group: group("role:administrators"),
    });
    expect(r.status).toBe(200);
    expect(r.body["ignored_parameters_unsupported"]).toBeUndefined();
    const wire = ((await s.call(owner, "GET", "/streams")).body["streams"] as Sub[]).find(
      (c) => c["name"] === "announcements",
    )!;
    expect(wire).toMatchObject({
      stream_post_policy: 2,
      is_announcement_only: true,
      rendered_description: "<p>Read <strong>this</strong> first</p>",
      can_send_message_group: group("role:administrators"),
      can_move_messages_within_channel_group: group("role:moderators"),
      can_resolve_topics_group: group("role:members"),
      can_create_topic_group: group("role:administrators"),
    });
    const general = ((await s.call(owner, "GET", "/streams")).body["streams"] as Sub[]).find(
      (c) => c["name"] === "general",
    )!;
    expect(general).toMatchObject({
      stream_post_policy: 1,
      is_announcement_only: false,
      can_create_topic_group: group("role:everyone"),
      can_resolve_topics_group: group("role:nobody"),
      can_move_messages_within_channel_group: group("role:nobody"),
    });
  });

  it("the notification bot opens each new channel and, with announce, announces it", async () => {
    const { owner, alice, general, realm } = s.seed;
    s.t.store.setNewChannelAnnouncementsChannel(realm.id, general.id);
    try {
      const r = await s.call(alice, "POST", "/users/me/subscriptions", {
        subscriptions: [{ name: "garden", description: "Plants *and* soil" }, { name: "pond" }],
        announce: true,
      });
      expect(r.status).toBe(200);
      const bot = s.t.store.findUserByEmail(realm.id, "notification-bot@zulip.com")!;
      expect(bot).toMatchObject({ fullName: "Notification Bot", isBot: true, botOwnerId: null });
      const fetch = async (narrow: unknown[]) =>
        (
          await s.call(alice, "GET", "/messages", {
            anchor: "newest",
            num_before: 5,
            num_after: 0,
            apply_markdown: false,
            narrow: JSON.stringify(narrow),
          })
        ).body["messages"] as Record<string, unknown>[];
      const garden = await fetch([["channel", "garden"]]);
      expect(garden).toHaveLength(1);
      expect(garden[0]).toMatchObject({
        sender_id: bot.id,
        subject: "channel events",
        content: `**Public** channel created by @_**Alice|${alice.id}**. **Description:**\n\`\`\`\` quote\nPlants *and* soil\n\`\`\`\``,
        flags: ["read"],
      });
      expect((await fetch([["channel", "pond"]]))[0]!["content"]).toBe(
        `**Public** channel created by @_**Alice|${alice.id}**. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``,
      );
      const streams = (await s.call(alice, "GET", "/streams")).body["streams"] as Sub[];
      expect(streams.find((c) => c["name"] === "garden")!["first_message_id"]).toBe(garden[0]!["id"]);
      const announced = await fetch([
        ["channel", "general"],
        ["topic", "new channels"],
      ]);
      expect(announced.map((m) => m["content"])).toEqual([
        `@_**Alice|${alice.id}** created the following channels: #**garden**, #**pond**.`,
      ]);
      // A private channel is described as such; without announce nothing goes to general.
      await s.call(owner, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "vault" }], invite_only: true });
      const vault = (
        await s.call(owner, "GET", "/messages", {
          anchor: "newest",
          num_before: 5,
          num_after: 0,
          apply_markdown: false,
          narrow: JSON.stringify([["channel", "vault"]]),
        })
      ).body["messages"] as Record<string, unknown>[];
      expect(String(vault[0]!["content"])).toMatch(
        /^\*\*Private, protected history\*\* channel created by @_\*\*Olive Owner\|\d+\*\*\./,
      );
      expect(
        await fetch([
          ["channel", "general"],
          ["topic", "new channels"],
        ]),
      ).toHaveLength(1);
      const registered = await s.call(alice, "POST", "/register", { fetch_event_types: JSON.stringify(["realm"]) });
      expect(registered.body["realm_new_stream_announcements_stream_id"]).toBe(general.id);
      // Clearing the setting reaches open queues as Zulip's realm update event.
      const queue = await s.call(alice, "POST", "/register", { event_types: JSON.stringify(["realm"]) });
      s.t.store.setNewChannelAnnouncementsChannel(realm.id, null);
      const polled = await s.call(alice, "GET", "/events", {
        queue_id: queue.body["queue_id"],
        last_event_id: -1,
        dont_block: true,
      });
      expect(polled.body["events"]).toEqual([
        { type: "realm", op: "update", property: "new_stream_announcements_stream_id", value: -1, id: 0 },
      ]);
    } finally {
      s.t.store.setNewChannelAnnouncementsChannel(realm.id, null);
    }
  });

  it("renders each creation notice from its own text when many are written together", async () => {
    const { alice } = s.seed;
    const r = await s.call(alice, "POST", "/users/me/subscriptions", {
      subscriptions: [
        { name: "twin-a", description: "same *words*" },
        { name: "twin-b", description: "same *words*" },
        { name: "odd-one", description: "other **words**" },
      ],
    });
    expect(r.status).toBe(200);
    const notice = async (name: string) =>
      (
        (
          await s.call(alice, "GET", "/messages", {
            anchor: "newest",
            num_before: 1,
            num_after: 0,
            narrow: JSON.stringify([["channel", name]]),
          })
        ).body["messages"] as Record<string, unknown>[]
      )[0]!;
    const [a, b, odd] = [await notice("twin-a"), await notice("twin-b"), await notice("odd-one")];
    expect(a["id"]).not.toBe(b["id"]);
    expect(a["content"]).toContain("<em>words</em>");
    expect(b["content"]).toBe(a["content"]);
    expect(odd["content"]).toContain("<strong>words</strong>");
    expect(odd["content"]).not.toContain("<em>words</em>");
  });

  it("creates at most 100 channels per request; existing channels do not count", async () => {
    const { owner } = s.seed;
    const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i}` }));
    await rejects(
      () => s.call(owner, "POST", "/users/me/subscriptions", { subscriptions: names("bulk", 101) }),
      400,
      "BAD_REQUEST",
      "Too many new channels in one request (maximum 100); create them in several requests.",
    );
    expect(channelId("bulk-0")).toBeUndefined();
    const r = await s.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [...names("bulk", 100), { name: "general" }],
    });
    expect(r.status).toBe(200);
    expect(channelId("bulk-99")).toBeDefined();
    // The 100 now exist: with one more new name the request creates one channel.
    const again = await s.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [...names("bulk", 100), { name: "bulk-100" }],
    });
    expect(again.status).toBe(200);
    expect(again.body["subscribed"]).toEqual({ [String(owner.id)]: ["bulk-100"] });
  });

  it("subscribes others by ID and email and reports already_subscribed", async () => {
    const { owner, alice, bob } = s.seed;
    const r = await s.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "general" }, { name: "secret" }],
      principals: [bob.email, alice.email],
    });
    expect(r.status).toBe(200);
    expect(r.body["subscribed"]).toEqual({ [String(bob.id)]: ["secret"] });
    expect(r.body["already_subscribed"]).toEqual({
      [String(bob.id)]: ["general"],
      [String(alice.id)]: ["general", "secret"],
    });
    expect(r.body["unauthorized"]).toBeUndefined();
    // Undo for later tests.
    await s.call(owner, "DELETE", "/users/me/subscriptions", { subscriptions: ["secret"], principals: [bob.id] });
  });

  it("lists unauthorized channels when authorization_errors_fatal is false", async () => {
    const { bob } = s.seed;
    const r = await s.call(bob, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "secret" }, { name: "general" }],
      authorization_errors_fatal: false,
    });
    expect(r.status).toBe(200);
    expect(r.body["unauthorized"]).toEqual(["secret"]);
    expect(r.body["already_subscribed"]).toEqual({ [String(bob.id)]: ["general"] });
    expect(r.body["subscribed"]).toEqual({});
  });

  it("reports unknown parameters", async () => {
    const r = await s.call(s.seed.alice, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "general" }],
      no_such_parameter: false,
    });
    expect(r.status).toBe(200);
    expect(r.body["ignored_parameters_unsupported"]).toEqual(["no_such_parameter"]);
  });

  it("rejects bad input with Zulip's errors and changes nothing", async () => {
    const { alice, bob, guest } = s.seed;
    const post =
      (user = alice, params: Record<string, unknown>) =>
      () =>
        s.call(user, "POST", "/users/me/subscriptions", params);
    await rejects(post(alice, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'subscriptions' argument");
    await rejects(post(alice, { subscriptions: "[{" }), 400, "BAD_REQUEST", "subscriptions is not valid JSON");
    await rejects(post(alice, { subscriptions: { name: "x" } }), 400, "BAD_REQUEST", "subscriptions is not a list");
    await rejects(
      post(alice, { subscriptions: [{ description: "x" }] }),
      400,
      "BAD_REQUEST",
      'subscriptions[0]["name"] is not a string',
    );
    await rejects(
      post(alice, { subscriptions: [] }),
      400,
      "BAD_REQUEST",
      "Nothing to do. Specify at least one channel.",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "   " }] }),
      400,
      "BAD_REQUEST",
      "Channel name can't be empty.",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "n".repeat(61) }] }),
      400,
      "BAD_REQUEST",
      "Channel name too long (limit: 60 characters).",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh", description: "d".repeat(1025) }] }),
      400,
      "BAD_REQUEST",
      "Channel description too long (limit: 1024 characters).",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "a\u0001b" }] }),
      400,
      "BAD_REQUEST",
      "Invalid character in channel name, at position 2.",
    );
    await rejects(
      post(bob, { subscriptions: [{ name: "secret" }] }),
      400,
      "BAD_REQUEST",
      "Unable to access channel (secret).",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "general" }], principals: [99999] }),
      400,
      "BAD_REQUEST",
      "No such user",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "general" }], principals: ["nobody@test.dev"] }),
      400,
      "BAD_REQUEST",
      "No such user",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "general" }], principals: "[1," }),
      400,
      "BAD_REQUEST",
      "principals is not valid JSON",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "general" }], principals: [bob.id, "alice@test.dev"] }),
      400,
      "BAD_REQUEST",
      "principals[1] is not an integer",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "general" }], principals: [true] }),
      400,
      "BAD_REQUEST",
      /^principals\[0\] is not/,
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "general" }], authorization_errors_fatal: "maybe" }),
      400,
      "BAD_REQUEST",
      "authorization_errors_fatal is not a boolean",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh" }], invite_only: "yes" }),
      400,
      "BAD_REQUEST",
      "invite_only is not a boolean",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh" }], message_retention_days: 0 }),
      400,
      "BAD_REQUEST",
      "Bad value for 'message_retention_days': 0",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh" }], message_retention_days: "forever" }),
      400,
      "BAD_REQUEST",
      "Bad value for 'message_retention_days': forever",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh" }], topics_policy: "sometimes" }),
      400,
      "BAD_REQUEST",
      "Invalid topics_policy",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh" }], can_send_message_group: "{" }),
      400,
      "BAD_REQUEST",
      "can_send_message_group is not valid JSON",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh" }], can_send_message_group: 99999 }),
      400,
      "BAD_REQUEST",
      "Invalid user group ID: 99999",
    );
    await rejects(
      post(alice, {
        subscriptions: [{ name: "fresh" }],
        can_send_message_group: { direct_members: [99999], direct_subgroups: [] },
      }),
      400,
      "BAD_REQUEST",
      "Invalid user ID: 99999",
    );
    await rejects(
      post(alice, { subscriptions: [{ name: "fresh" }], is_web_public: true }),
      400,
      "BAD_REQUEST",
      "Web-public channels are not enabled.",
    );
    const forced = await post(alice, {
      subscriptions: [{ name: "fresh-public" }],
      history_public_to_subscribers: false,
    })();
    expect(forced.status).toBe(200);
    expect(
      internals(s.t.store).channels.get(internals(s.t.store).channelByName.get(`${s.seed.realm.id}:FRESH-PUBLIC`)!)!
        .historyPublicToSubscribers,
    ).toBe(true);
    // A guest cannot create channels: a free name is refused as a channel they cannot see.
    await rejects(
      post(guest, { subscriptions: [{ name: "guest-made" }] }),
      400,
      "BAD_REQUEST",
      "Unable to access channel (guest-made).",
    );
    await rejects(
      post(guest, { subscriptions: [{ name: "secret" }] }),
      400,
      "BAD_REQUEST",
      "Unable to access channel (secret).",
    );
    await rejects(
      post(guest, { subscriptions: [{ name: "general" }] }),
      400,
      "BAD_REQUEST",
      "Unable to access channel (general).",
    );
    await rejects(
      post(guest, { subscriptions: [{ name: "general" }], principals: [s.seed.bob.id] }),
      400,
      "BAD_REQUEST",
      "Unable to access channel (general).",
    );
  });

  it("rejects bad credentials", async () => {
    const r = await s.call(null, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "general" }] });
    expect(r.status).toBe(401);
    expect(r.body["code"]).toBe("UNAUTHORIZED");
    const before = fingerprint(s.t.store);
    const bad = await s.call(
      null,
      "POST",
      "/users/me/subscriptions",
      { subscriptions: [{ name: "zzz" }] },
      { headers: { Authorization: `Basic ${Buffer.from(`alice@test.dev:${"x".repeat(32)}`).toString("base64")}` } },
    );
    expect(bad.status).toBe(401);
    expect(bad.body["msg"]).toBe("Invalid API key");
    expect(fingerprint(s.t.store)).toBe(before);
  });
});

describe("DELETE /users/me/subscriptions", () => {
  it("removes and reports not_removed", async () => {
    const { alice } = s.seed;
    await s.call(alice, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "leaving" }] });
    const r = await s.call(alice, "DELETE", "/users/me/subscriptions", { subscriptions: ["leaving"] });
    expect(r.body).toEqual({ result: "success", msg: "", removed: ["leaving"], not_removed: [] });
    const again = await s.call(alice, "DELETE", "/users/me/subscriptions", { subscriptions: ["leaving"] });
    expect(again.body).toEqual({ result: "success", msg: "", removed: [], not_removed: ["leaving"] });
  });

  it("lets an administrator remove others", async () => {
    const { owner, bob } = s.seed;
    await s.call(owner, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "kick" }], principals: [bob.id] });
    const r = await s.call(owner, "DELETE", "/users/me/subscriptions", {
      subscriptions: ["kick"],
      principals: [bob.email],
    });
    expect(r.body["removed"]).toEqual(["kick"]);
    expect(internals(s.t.store).subscribers.get(channelId("kick")!)?.has(bob.id)).toBe(false);
  });

  it("rejects bad input and unauthorized removals, changing nothing", async () => {
    const { alice, bob } = s.seed;
    const del =
      (user = alice, params: Record<string, unknown>) =>
      () =>
        s.call(user, "DELETE", "/users/me/subscriptions", params);
    await rejects(del(alice, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'subscriptions' argument");
    await rejects(del(alice, { subscriptions: "general" }), 400, "BAD_REQUEST", "subscriptions is not valid JSON");
    await rejects(del(alice, { subscriptions: [1] }), 400, "BAD_REQUEST", "subscriptions[0] is not a string");
    await rejects(
      del(alice, { subscriptions: [] }),
      400,
      "BAD_REQUEST",
      "Nothing to do. Specify at least one channel.",
    );
    const missing = await rejects(
      del(alice, { subscriptions: ["nowhere"] }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel 'nowhere' does not exist",
    );
    expect(missing["stream"]).toBe("nowhere");
    await rejects(
      del(bob, { subscriptions: ["secret"] }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel 'secret' does not exist",
    );
    await rejects(del(alice, { subscriptions: ["general"], principals: [99999] }), 400, "BAD_REQUEST", "No such user");
    await rejects(
      del(alice, { subscriptions: ["general"], principals: [bob.id] }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
  });
});

describe("GET /users/me/subscriptions", () => {
  it("lists active subscriptions with every field, sorted by name", async () => {
    const { bob, general } = s.seed;
    const r = await s.call(bob, "GET", "/users/me/subscriptions");
    expect(r.status).toBe(200);
    const subs = r.body["subscriptions"] as Sub[];
    expect(subs.map((x) => x["name"])).toEqual([...subs.map((x) => x["name"] as string)].sort());
    expect(subs.map((x) => x["name"])).not.toContain("kick");
    const g = subs.find((x) => x["stream_id"] === general.id)!;
    expect(g).toMatchObject({
      name: "general",
      description: "",
      rendered_description: "",
      date_created: general.dateCreated,
      creator_id: general.creatorId,
      invite_only: false,
      is_web_public: false,
      is_archived: false,
      history_public_to_subscribers: true,
      first_message_id: s.t.store.getChannel(general.id)!.firstMessageId,
      topics_policy: "inherit",
      message_retention_days: null,
      stream_post_policy: 1,
      is_announcement_only: false,
      stream_weekly_traffic: null,
      is_muted: false,
      in_home_view: true,
      pin_to_top: false,
      desktop_notifications: null,
      email_notifications: null,
      push_notifications: null,
      audible_notifications: null,
      wildcard_mentions_notify: null,
    });
    expect(typeof g["color"]).toBe("string");
    expect(g["subscriber_count"]).toBe(internals(s.t.store).subscribers.get(general.id)!.size);
    expect(typeof g["can_remove_subscribers_group"]).toBe("number");
    expect(g["can_administer_channel_group"]).toEqual({ direct_members: [general.creatorId], direct_subgroups: [] });
    expect(g["subscribers"]).toBeUndefined();
  });

  it("includes subscribers when asked (true or partial)", async () => {
    const { alice, general } = s.seed;
    for (const value of [true, "partial"]) {
      const r = await s.call(alice, "GET", "/users/me/subscriptions", { include_subscribers: value });
      const g = (r.body["subscriptions"] as Sub[]).find((x) => x["stream_id"] === general.id)!;
      expect(g["subscribers"]).toEqual([...internals(s.t.store).subscribers.get(general.id)!].sort((a, b) => a - b));
    }
  });

  it("rejects a bad include_subscribers", async () => {
    await rejects(
      () => s.call(s.seed.alice, "GET", "/users/me/subscriptions", { include_subscribers: "some" }),
      400,
      "BAD_REQUEST",
      "Invalid include_subscribers",
    );
  });
});

describe("GET /streams", () => {
  const names = (r: { body: Record<string, unknown> }) => (r.body["streams"] as Sub[]).map((x) => x["name"]);

  it("lists public and subscribed channels the caller can see", async () => {
    const { alice, bob } = s.seed;
    const a = await s.call(alice, "GET", "/streams");
    expect(names(a)).toContain("general");
    expect(names(a)).toContain("secret");
    const b = await s.call(bob, "GET", "/streams");
    expect(names(b)).toContain("general");
    expect(names(b)).not.toContain("secret");
    expect(names(b)).toEqual([...(names(b) as string[])].sort());
    const first = (b.body["streams"] as Sub[])[0]!;
    expect(first["is_default"]).toBeUndefined();
    expect(first["color"]).toBeUndefined();
    expect(first).toHaveProperty("subscriber_count");
    expect(first).toHaveProperty("can_subscribe_group");
  });

  it("honours the include flags and include_default", async () => {
    const { alice, guest } = s.seed;
    const onlySubscribed = await s.call(alice, "GET", "/streams", { include_public: false });
    expect(names(onlySubscribed)).not.toContain("kick");
    expect(names(await s.call(alice, "GET", "/streams"))).toContain("kick");
    expect(names(onlySubscribed)).toContain("secret");
    const nothing = await s.call(alice, "GET", "/streams", { include_public: false, include_subscribed: false });
    expect(nothing.body["streams"]).toEqual([]);
    const withDefault = await s.call(alice, "GET", "/streams", { include_default: true });
    // Only def3, created with is_default_stream above, is a default channel.
    expect(
      (withDefault.body["streams"] as Sub[]).filter((x) => x["is_default"] !== false).map((x) => x["name"]),
    ).toEqual(["def3"]);
    const g = await s.call(guest, "GET", "/streams");
    expect(g.body["streams"]).toEqual([]);
  });

  it("include_all (and include_all_active) is for administrators", async () => {
    const { owner, alice } = s.seed;
    await s.call(alice, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "hidden" }], invite_only: true });
    const all = await s.call(owner, "GET", "/streams", { include_all: true });
    expect(names(all)).toContain("hidden");
    const legacy = await s.call(owner, "GET", "/streams", { include_all_active: true });
    expect(names(legacy)).toContain("hidden");
    await rejects(
      () => s.call(alice, "GET", "/streams", { include_all: true }),
      400,
      "BAD_REQUEST",
      "User not authorized for this query",
    );
    await rejects(
      () => s.call(owner, "GET", "/streams", { include_all: true, include_all_active: true }),
      400,
      "REQUEST_CONFUSING_VAR",
      "Can't decide between 'include_all' and 'include_all_active' arguments",
    );
    await rejects(
      () => s.call(alice, "GET", "/streams", { include_public: "nope" }),
      400,
      "BAD_REQUEST",
      "include_public is not a boolean",
    );
  });
});
