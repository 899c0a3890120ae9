/**
 * Realm settings PATCH /realm stores, taking effect over HTTP as in Zulip:
 * waiting_period_threshold (role:fullmembers, with its events, and every setting naming
 * it), direct_message_permission_group and direct_message_initiator_group, and
 * can_mention_many_users_group (wildcard mentions in channels of more than 15
 * subscribers and topics of more than 15 participants).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLE, type User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

const DAY = 86_400;
let clock = 1_750_000_000;
let s: TestServer;
let bot: User;
/** 13 more members: #general then has 16 subscribers, one above Zulip's threshold. */
let crowd: User[];

beforeAll(async () => {
  s = await startServer({}, { now: () => clock });
  const realmId = s.seed.realm.id;
  bot = s.t.store.createUser({
    realmId,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    bot: { type: 1, ownerId: s.seed.alice.id },
  });
  crowd = Array.from({ length: 13 }, (_, i) =>
    s.t.store.createUser({ realmId, email: `m${i}@test.dev`, fullName: `Member ${i}` }),
  );
  s.t.store.subscribe(s.seed.owner.id, { channels: [{ name: "general" }], principals: crowd.map((u) => u.id) });
});
afterAll(() => s.close());

const group = (name: string) => s.t.store.systemGroupId(s.seed.realm.id, name);
const setRealm = async (params: Record<string, unknown>) => {
  const r = await s.call(s.seed.owner, "PATCH", "/realm", params);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
};
const setRealmGroup = (setting: string, value: unknown) => setRealm({ [setting]: JSON.stringify({ new: value }) });
const post = (user: User, to: number, content: string, topic = "chat") =>
  s.call(user, "POST", "/messages", { type: "stream", to, topic, content });
const dm = (user: User, to: readonly User[], content = "hello") =>
  s.call(user, "POST", "/messages", { type: "direct", to: JSON.stringify(to.map((u) => u.id)), content });

async function queueFor(user: User, types: string[]) {
  const r = await s.call(user, "POST", "/register", { event_types: JSON.stringify(types) });
  expect(r.status).toBe(200);
  const queueId = r.body["queue_id"] as string;
  let last = r.body["last_event_id"] as number;
  return async (): Promise<Record<string, unknown>[]> => {
    const p = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: last, dont_block: true });
    const events = (p.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] !== "heartbeat");
    if (events.length > 0) last = events[events.length - 1]!["id"] as number;
    return events.map(({ id: _id, ...rest }) => rest);
  };
}

const fullMembers = async (): Promise<number[]> => {
  const r = await s.call(s.seed.bob, "GET", `/user_groups/${group("role:fullmembers")}/members`);
  expect(r.status).toBe(200);
  return r.body["members"] as number[];
};

describe("waiting_period_threshold", () => {
  it("members join role:fullmembers once their account is that many days old, with events", async () => {
    const { owner, alice, bob, guest, general } = s.seed;
    const fm = group("role:fullmembers");
    expect(await fullMembers()).toContain(alice.id);
    const r = await s.call(owner, "PATCH", `/streams/${general.id}`, {
      can_send_message_group: JSON.stringify({ new: fm }),
    });
    expect(r.status).toBe(200);
    expect((await post(alice, general.id, "before")).status).toBe(200);

    const events = await queueFor(bob, ["realm", "user_group"]);
    clock += 2 * DAY;
    // Everyone joined two days ago: a three-day wait makes every member provisional.
    await setRealm({ waiting_period_threshold: 3 });
    // Every member: people, bots (the Notification Bot's first notice created it), not moderators and above.
    const changed = await events();
    expect(changed).toMatchObject([
      { type: "realm", op: "update", property: "waiting_period_threshold", value: 3 },
      { type: "user_group", op: "remove_members", group_id: fm },
    ]);
    const members = changed[1]!["user_ids"] as number[];
    expect(members).toEqual(expect.arrayContaining([alice, bob, bot, ...crowd].map((u) => u.id)));
    expect(members).not.toContain(owner.id);
    expect(members).not.toContain(guest.id);
    const now = await fullMembers();
    expect(now).toContain(owner.id);
    expect(now).not.toContain(alice.id);
    expect(now).not.toContain(guest.id);
    const refused = await post(alice, general.id, "provisional");
    expect(refused.body).toMatchObject({ result: "error", msg: "You do not have permission to post in this channel." });
    expect((await post(owner, general.id, "owner")).status).toBe(200);

    // The hourly pass promotes nobody before the third day, then everyone at once.
    clock += DAY - 60;
    expect(s.t.store.promoteNewFullMembers()).toBe(0);
    expect(await events()).toEqual([]);
    clock += 60;
    expect(s.t.store.promoteNewFullMembers()).toBe(members.length);
    expect(await events()).toEqual([{ type: "user_group", op: "add_members", group_id: fm, user_ids: members }]);
    expect(await fullMembers()).toContain(alice.id);
    expect((await post(alice, general.id, "full member now")).status).toBe(200);

    // A member who joins now waits again; lowering the threshold to 0 lets them in at once.
    const newcomer = s.t.store.createUser({ realmId: s.seed.realm.id, email: "new@test.dev", fullName: "Newcomer" });
    expect(await fullMembers()).not.toContain(newcomer.id);
    await events();
    await setRealm({ waiting_period_threshold: 0 });
    expect(await events()).toEqual([
      { type: "realm", op: "update", property: "waiting_period_threshold", value: 0 },
      { type: "user_group", op: "add_members", group_id: fm, user_ids: [newcomer.id] },
    ]);
    await s.call(owner, "PATCH", `/streams/${general.id}`, {
      can_send_message_group: JSON.stringify({ new: group("role:everyone") }),
    });
  });

  it("a realm setting naming full members follows too (can_mention_many_users_group)", async () => {
    const { alice, general } = s.seed;
    await setRealmGroup("can_mention_many_users_group", group("role:fullmembers"));
    await setRealm({ waiting_period_threshold: 30 });
    const refused = await post(alice, general.id, "@**all** hello");
    expect(refused.body).toMatchObject({ code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" });
    await setRealm({ waiting_period_threshold: 0 });
    expect((await post(alice, general.id, "@**all** hello")).status).toBe(200);
    await setRealmGroup("can_mention_many_users_group", group("role:administrators"));
  });
});

describe("direct message permission groups", () => {
  it("direct_message_permission_group: someone of the conversation must be in it", async () => {
    const { owner, alice, bob } = s.seed;
    await setRealmGroup("direct_message_permission_group", group("role:nobody"));
    expect((await dm(alice, [bob])).body).toMatchObject({
      result: "error",
      code: "BAD_REQUEST",
      msg: "Direct messages are disabled in this organization.",
    });
    // To oneself and to bots stays open; bots send anyway.
    expect((await dm(alice, [alice])).status).toBe(200);
    expect((await dm(alice, [bot])).status).toBe(200);
    expect((await dm(bot, [bob])).status).toBe(200);

    await setRealmGroup("direct_message_permission_group", group("role:administrators"));
    expect((await dm(alice, [bob])).body).toMatchObject({
      msg: "This conversation does not include any users who can authorize it.",
    });
    expect((await dm(alice, [owner])).status).toBe(200);
    expect((await dm(alice, [bob, owner])).status).toBe(200);
    await setRealmGroup("direct_message_permission_group", { direct_members: [bob.id], direct_subgroups: [] });
    expect((await dm(alice, [bob])).status).toBe(200);
    await setRealmGroup("direct_message_permission_group", group("role:everyone"));
  });

  it("direct_message_initiator_group: others may only answer conversations that have a message", async () => {
    const { owner, alice, bob, guest } = s.seed;
    await setRealmGroup("direct_message_initiator_group", group("role:administrators"));
    expect((await dm(guest, [bob])).body).toMatchObject({
      result: "error",
      code: "BAD_REQUEST",
      msg: "You do not have permission to initiate direct message conversations.",
    });
    expect((await dm(guest, [owner, bob])).body).toMatchObject({
      msg: "You do not have permission to initiate direct message conversations.",
    });
    expect((await dm(owner, [guest])).status).toBe(200);
    expect((await dm(guest, [owner])).status).toBe(200);
    expect((await dm(owner, [guest, bob])).status).toBe(200);
    expect((await dm(guest, [bob, owner])).status).toBe(200);
    expect((await dm(alice, [bob])).status).toBe(200); // an earlier test left a message there
    await setRealmGroup("direct_message_initiator_group", group("role:everyone"));
    expect((await dm(guest, [bob])).status).toBe(200);
  });
});

describe("can_mention_many_users_group", () => {
  it("channel wildcards above 15 subscribers, for sends and edits", async () => {
    const { owner, alice, general, secret } = s.seed;
    const refused = await post(alice, general.id, "hi @**all**");
    expect(refused).toMatchObject({
      status: 400,
      body: {
        code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
        msg: "You do not have permission to use channel wildcard mentions in this channel.",
      },
    });
    expect((await post(alice, general.id, "hi @_**all**")).status).toBe(200); // silent mentions notify nobody
    expect((await post(alice, secret.id, "hi @**everyone**")).status).toBe(200); // 2 subscribers
    expect((await post(owner, general.id, "hi @**channel**")).status).toBe(200);

    const sent = await post(alice, general.id, "hi");
    const edit = await s.call(alice, "PATCH", `/messages/${sent.body["id"] as number}`, { content: "hi @**all**" });
    expect(edit.body).toMatchObject({ code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" });

    await setRealmGroup("can_mention_many_users_group", { direct_members: [alice.id], direct_subgroups: [] });
    expect((await post(alice, general.id, "hi @**all**")).status).toBe(200);
    await setRealmGroup("can_mention_many_users_group", group("role:administrators"));
  });

  it("topic wildcards above 15 participants (senders and reactors)", async () => {
    const { owner, alice, bob, general } = s.seed;
    const topic = "crowded";
    for (const user of crowd)
      s.t.store.sendMessage({ senderId: user.id, to: { type: "channel", channel: general.id, topic }, content: "x" });
    const last = await post(owner, general.id, "x", topic);
    // 13 + owner + alice (the sender) = 15 participants: allowed.
    expect((await post(alice, general.id, "@**topic** hi", topic)).status).toBe(200);
    const react = await s.call(bob, "POST", `/messages/${last.body["id"] as number}/reactions`, {
      emoji_name: "smile",
    });
    expect(react.status).toBe(200);
    expect((await post(alice, general.id, "@**topic** hi", topic)).body).toMatchObject({
      code: "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
      msg: "You do not have permission to use topic wildcard mentions in this topic.",
    });
    expect((await post(alice, general.id, "@**topic** hi", "quiet")).status).toBe(200);
    expect((await post(owner, general.id, "@**topic** hi", topic)).status).toBe(200);
  });

  it("guests are refused like members; moderators by default too", async () => {
    const { general } = s.seed;
    const moderator = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "mod@test.dev",
      fullName: "Mo",
      role: ROLE.MODERATOR,
    });
    s.t.store.subscribe(s.seed.owner.id, { channels: [{ name: "general" }], principals: [moderator.id] });
    expect((await post(moderator, general.id, "@**all**")).body).toMatchObject({
      code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
    });
    await setRealmGroup("can_mention_many_users_group", group("role:moderators"));
    expect((await post(moderator, general.id, "@**all**")).status).toBe(200);
  });
});

describe("name and email locks, require_unique_names", () => {
  const settings = (user: User, params: Record<string, unknown>) => s.call(user, "PATCH", "/settings", params);

  it("name_changes_disabled: others' renames are ignored (Zulip's silent refusal), administrators' taken", async () => {
    const { owner, alice } = s.seed;
    await setRealm({ name_changes_disabled: true });
    expect((await settings(alice, { full_name: "Alicia" })).body).toMatchObject({ result: "success" });
    expect(s.t.store.getUser(alice.id).fullName).toBe("Alice");
    expect((await settings(owner, { full_name: "Olivia Owner" })).status).toBe(200);
    expect(s.t.store.getUser(owner.id).fullName).toBe("Olivia Owner");
    // An administrator still renames others.
    expect((await s.call(owner, "PATCH", `/users/${alice.id}`, { full_name: "Alicia" })).status).toBe(200);
    expect(s.t.store.getUser(alice.id).fullName).toBe("Alicia");
    await setRealm({ name_changes_disabled: false });
    expect((await settings(alice, { full_name: "Alice" })).status).toBe(200);
    expect(s.t.store.getUser(alice.id).fullName).toBe("Alice");
  });

  it("email_changes_disabled refuses others' changes; administrators may", async () => {
    const { owner, alice } = s.seed;
    await setRealm({ email_changes_disabled: true });
    expect((await settings(alice, { email: "alice2@test.dev" })).body).toMatchObject({
      result: "error",
      code: "BAD_REQUEST",
      msg: "Email address changes are disabled in this organization.",
    });
    expect((await settings(alice, { email: "alice@test.dev" })).status).toBe(200); // unchanged: nothing to refuse
    expect((await settings(owner, { email: "olive2@test.dev" })).status).toBe(200);
    await setRealm({ email_changes_disabled: false });
  });

  it("require_unique_names: no two accounts share a name, compared as Zulip (NFKC, case-folded)", async () => {
    const { owner, alice, bob } = s.seed;
    const taken = { result: "error", msg: "Unique names required in this organization." };
    expect((await settings(bob, { full_name: "ALICE" })).status).toBe(200); // allowed while off
    expect((await settings(bob, { full_name: "Bob" })).status).toBe(200);
    await setRealm({ require_unique_names: true });
    expect((await settings(bob, { full_name: "ALICE" })).body).toMatchObject(taken);
    expect((await settings(bob, { full_name: "ａｌｉｃｅ" })).body).toMatchObject(taken);
    expect((await s.call(owner, "PATCH", `/users/${bob.id}`, { full_name: "alice" })).body).toMatchObject(taken);
    expect((await s.call(alice, "POST", "/bots", { full_name: "Helper", short_name: "twin" })).body).toMatchObject(
      taken,
    );
    // One's own name, in another case, is not a clash.
    expect((await settings(alice, { full_name: "ALICE" })).status).toBe(200);
    expect((await settings(bob, { full_name: "Robert" })).status).toBe(200);
    await setRealm({ require_unique_names: false });
  });
});

describe("group and invitation permissions", () => {
  const insufficient = { result: "error", code: "BAD_REQUEST", msg: "Insufficient permission" };
  const only = (user: User) => ({ direct_members: [user.id], direct_subgroups: [] });
  const createGroup = (user: User, name: string) =>
    s.call(user, "POST", "/user_groups/create", { name, description: "d", members: [] });

  it("can_create_groups and can_manage_all_groups", async () => {
    const { owner, alice, bob } = s.seed;
    await setRealmGroup("can_create_groups", group("role:moderators"));
    expect((await createGroup(alice, "alices")).body).toMatchObject(insufficient);
    await setRealmGroup("can_create_groups", only(alice));
    const created = await createGroup(alice, "alices");
    expect(created.status).toBe(200);
    const id = created.body["group_id"] as number;
    await setRealmGroup("can_create_groups", group("role:members"));

    const rename = (user: User, name: string) => s.call(user, "PATCH", `/user_groups/${id}`, { name });
    expect((await rename(bob, "bobs")).body).toMatchObject(insufficient);
    await setRealmGroup("can_manage_all_groups", only(bob));
    expect((await rename(bob, "bobs")).status).toBe(200);
    // Owners manage every group only while the setting names them.
    expect((await rename(owner, "olives")).body).toMatchObject(insufficient);
    await setRealmGroup("can_manage_all_groups", group("role:owners"));
    expect((await rename(owner, "olives")).status).toBe(200);
  });

  it("can_invite_users_group and create_multiuse_invite_group", async () => {
    const { alice } = s.seed;
    const invite = () => s.call(alice, "POST", "/invites", { invitee_emails: "friend@test.dev", stream_ids: [] });
    const canInvite = async () =>
      (await s.call(alice, "POST", "/register", { fetch_event_types: ["realm_user"] })).body[
        "can_invite_others_to_realm"
      ];
    await setRealmGroup("can_invite_users_group", group("role:administrators"));
    expect((await invite()).body).toMatchObject(insufficient);
    expect(await canInvite()).toBe(false);
    await setRealmGroup("can_invite_users_group", group("role:members"));
    expect(await canInvite()).toBe(true);
    expect((await invite()).status).toBe(200);

    const link = () => s.call(alice, "POST", "/invites/multiuse", {});
    expect((await link()).body).toMatchObject(insufficient);
    await setRealmGroup("create_multiuse_invite_group", only(alice));
    expect((await link()).body).toMatchObject({ result: "success" });
    await setRealmGroup("create_multiuse_invite_group", group("role:administrators"));
  });
});

describe("new users: signup announcements, welcome mail, welcome message", () => {
  const create = (email: string, fullName: string) =>
    s.call(s.seed.owner, "POST", "/users", { email, password: "correct horse battery staple", full_name: fullName });
  const lastMessages = async (channelId: number, topic: string) => {
    const r = await s.call(s.seed.owner, "GET", "/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      apply_markdown: false,
      narrow: JSON.stringify([
        { operator: "channel", operand: channelId },
        { operator: "topic", operand: topic },
      ]),
    });
    return r.body["messages"] as { content: string; sender_email: string }[];
  };

  it("the Notification Bot announces new people in signup_announcements_stream_id", async () => {
    const { owner, general } = s.seed;
    s.t.store.setCanCreateUsers(owner.id, true);
    const quiet = await create("quiet@test.dev", "Quiet One");
    expect(quiet.status).toBe(200);
    expect(await lastMessages(general.id, "signups")).toEqual([]);
    await setRealm({ signup_announcements_stream_id: general.id });
    const r = await create("loud@test.dev", "Loud One");
    expect(r.status).toBe(200);
    const messages = await lastMessages(general.id, "signups");
    expect(messages.map((m) => m.content)).toEqual([
      `@_**Loud One|${r.body["user_id"] as number}** joined this organization.`,
    ]);
    expect(messages[0]!.sender_email).toBe("notification-bot@zulip.com");
    await setRealm({ signup_announcements_stream_id: -1 });
  });

  it("send_welcome_emails mails new people; welcome_message_custom_text follows the Welcome Bot's greeting", async () => {
    const mailsTo = (address: string) => s.t.store.outboxMail().filter((m) => m.to.includes(address));
    expect((await create("mailed@test.dev", "Mailed")).status).toBe(200);
    expect(mailsTo("mailed@test.dev").map((m) => m.subject)).toEqual(["Welcome to Test"]);
    await setRealm({ send_welcome_emails: false, welcome_message_custom_text: "Read #**general** first." });
    const r = await create("unmailed@test.dev", "Unmailed");
    expect(r.status).toBe(200);
    expect(mailsTo("unmailed@test.dev")).toEqual([]);
    const user = s.t.store.getUser(r.body["user_id"] as number);
    const inbox = await s.call(user, "GET", "/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      apply_markdown: false,
      narrow: JSON.stringify([{ operator: "is", operand: "dm" }]),
    });
    const texts = (inbox.body["messages"] as { content: string }[]).map((m) => m.content);
    expect(texts).toHaveLength(2);
    expect(texts[1]).toBe("A message from the administrators of Test:\n\nRead #**general** first.");
    await setRealm({ send_welcome_emails: true, welcome_message_custom_text: "" });
  });
});

describe("disallow_disposable_email_addresses", () => {
  it("refuses throwaway mail services' addresses on invitations, POST /users and the join form", async () => {
    const { owner } = s.seed;
    s.t.store.setCanCreateUsers(owner.id, true);
    const invite = (email: string) => s.call(owner, "POST", "/invites", { invitee_emails: email, stream_ids: [] });
    const create = (email: string) =>
      s.call(owner, "POST", "/users", { email, password: "correct horse battery staple", full_name: "Throwaway" });
    const link = (await s.call(owner, "POST", "/invites/multiuse", {})).body["invite_link"] as string;
    const join = async (email: string) => {
      const r = await fetch(`${s.base}${new URL(link).pathname}`, {
        method: "POST",
        body: new URLSearchParams({ email, full_name: "Joiner", password: "correct horse battery staple" }),
      });
      return { status: r.status, text: await r.text() };
    };

    expect((await invite("someone@mailinator.com")).body).toMatchObject({
      result: "error",
      code: "INVITATION_FAILED",
      errors: [["someone@mailinator.com", "Please use your real email address.", false]],
    });
    expect((await create("someone@MAILINATOR.com")).body).toMatchObject({
      result: "error",
      msg: "Disposable email addresses are not allowed in this organization",
    });
    const joined = await join("joiner@yopmail.com");
    expect(joined.status).toBe(400);
    expect(joined.text).toContain("Please use your real email address.");

    await setRealm({ disallow_disposable_email_addresses: false });
    expect((await invite("someone@mailinator.com")).status).toBe(200);
    expect((await create("other@mailinator.com")).status).toBe(200);
    expect((await join("joiner@yopmail.com")).status).toBe(200);
    await setRealm({ disallow_disposable_email_addresses: true });
  });
});
