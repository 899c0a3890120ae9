/**
 * Organization data exports over HTTP (POST/GET/DELETE /export/realm, GET
 * /export/realm/consents, the tarball's download) and the round trip: a realm with
 * roles, a bot, a deactivated user, public and private channels with subscription
 * churn, groups, channel and direct messages, flags, reactions, topic policies and
 * mutes is exported with consent, downloaded, imported with `parley import` into a
 * fresh data directory, and compared; so are the realm's settings and people's own data
 * (addSettingsAndPersonalData: profile fields, linkifiers, domains, custom emoji,
 * uploads, folders, channel permission groups, archived and unused channels, alert
 * words, muted users, statuses, drafts, scheduled messages). What Zulip's export rules
 * do not carry is asserted as such: flags of users who do not consent (bots,
 * deactivated users), drafts and scheduled messages in a public export.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/index.js";
import {
  CHANNEL_GROUP_SETTINGS,
  REALM_EXPORT_STATUS,
  REALM_GROUP_SETTING_WIRE_NAMES,
  SUBSCRIPTION_NOTIFICATIONS,
  type GroupSettingValue,
  type User,
} from "../../src/engine/index.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";
import { RealmExports } from "../../src/exports/realm-exports.js";
import { emojiFilePath } from "../../src/emoji/images.js";
import { avatarFilePath } from "../../src/http/avatar-images.js";
import { UploadFiles } from "../../src/uploads/files.js";
import { openExport, readExport } from "../../tools/import/zulip-export.js";
import { DEFAULT_LIMITS } from "../../tools/import/limits.js";

const CLI = resolve(import.meta.dirname, "../../dist/tools/parley.js");
const root = mkdtempSync(join(tmpdir(), "parley-export-"));

let s: TestServer;
let admin: User;
let moderator: User;
let bot: User;
let gone: User;
let queueId: string;
let revokedKey: string;
afterAll(() => {
  s?.close();
  rmSync(root, { recursive: true, force: true });
});

type Call = Awaited<ReturnType<TestServer["call"]>>;
const ok = (r: Call) => {
  expect(r.body).toMatchObject({ result: "success" });
  return r.body;
};

beforeAll(async () => {
  s = await startServer();
  const store = s.t.store;
  const { realm, owner, alice, bob, guest } = s.seed;
  admin = store.createUser({ realmId: realm.id, email: "admin@test.dev", fullName: "Ada Admin", role: 200 });
  moderator = store.createUser({ realmId: realm.id, email: "mod@test.dev", fullName: "Mo Mod", role: 300 });
  gone = store.createUser({ realmId: realm.id, email: "gone@test.dev", fullName: "Gone Soon" });
  bot = store.createUser({
    realmId: realm.id,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    bot: { type: 1, ownerId: alice.id },
  });
  const send = (senderId: number, to: Parameters<Store["sendMessage"]>[0]["to"], content: string) =>
    store.sendMessage({ senderId, to, content }).id;
  const channel = (channelName: string, topic: string) => ({ type: "channel" as const, channel: channelName, topic });
  store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [admin.id, moderator.id, gone.id, bot.id] });
  store.subscribe(owner.id, {
    channels: [{ name: "shared", description: "private, shared history" }],
    principals: [owner.id, bob.id],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
  });
  const m1 = send(alice.id, channel("general", "plans"), "hello **world**");
  send(bob.id, channel("general", "plans"), "reply from bob");
  store.unsubscribe(owner.id, ["general"], [bob.id]);
  send(alice.id, channel("general", "plans"), "bob is away for this one");
  store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [bob.id] });
  send(bot.id, channel("general", "bots"), "beep");
  const lastWords = send(gone.id, channel("general", "plans"), "last words");
  const s1 = send(alice.id, channel("secret", "hidden"), "only the secret's members");
  store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [guest.id] });
  send(owner.id, channel("secret", "hidden"), "after the guest joined");
  send(owner.id, channel("shared", "t"), "shared history message");
  const d1 = send(alice.id, { type: "direct", users: [bob.id] }, "a DM to bob");
  send(bob.id, { type: "direct", users: [alice.id, owner.id] }, "a group DM");
  send(alice.id, { type: "direct", users: [alice.id] }, "note to self");
  send(gone.id, { type: "direct", users: [owner.id] }, "a DM from the leaver");
  send(bot.id, { type: "direct", users: [alice.id] }, "a DM from the bot");
  store.updateFlags(bob.id, [m1, d1], "read", "add");
  store.updateFlags(alice.id, [m1, s1], "starred", "add");
  store.updateFlags(owner.id, [s1], "read", "add");
  store.updateFlags(gone.id, [m1], "read", "add");
  store.updateFlags(bob.id, [m1], "collapsed", "add");
  store.addReaction(bob.id, m1, { emojiName: "smile", emojiCode: "1f604", reactionType: "unicode_emoji" });
  store.addReaction(owner.id, m1, { emojiName: "tada", emojiCode: "1f389", reactionType: "unicode_emoji" });
  const devs = store.createGroup(owner.id, { name: "devs", description: "developers", members: [alice.id, bob.id] });
  const leads = store.createGroup(owner.id, { name: "leads", description: "", members: [owner.id] });
  store.updateGroupSubgroups(owner.id, leads.id, [devs.id], []);
  store.setTopicPolicy(bob.id, s.seed.general.id, "plans", 1);
  store.setTopicPolicy(alice.id, s.seed.general.id, "bots", 3);
  store.setChannelMuted(moderator.id, s.seed.general.id, true);
  // Edit histories: a content edit, a move to another topic, a move between two channels with the same members.
  store.updateMessage(alice.id, m1, { content: "hello **everyone**" });
  const quietly = { sendNotificationToNewThread: false, sendNotificationToOldThread: false };
  store.updateMessage(owner.id, lastWords, { topic: "epilogue", ...quietly });
  const [, west] = store.subscribe(owner.id, {
    channels: [{ name: "east" }, { name: "west" }],
    principals: [owner.id, alice.id],
  }).createdChannelIds;
  const wandering = send(alice.id, channel("east", "travel"), `I was written in the east, @**Ada Admin|${admin.id}**`);
  store.updateMessage(owner.id, wandering, { channelId: west!, ...quietly });
  store.updateMessage(alice.id, wandering, { content: "I was written in the east, and edited in the west" });
  await addSettingsAndPersonalData(send, channel);
  addBotsBeyondAccounts();
  addInvitations();
  addSettledScheduledMessages();
  // Presence: alice active, bob only connected (idle), at the store's clock.
  store.updatePresence(alice.id, "active");
  store.updatePresence(bob.id, "idle");
  store.setUserActive(gone.id, false);
  // Every active person consents, except the moderator (whose flags then stay out).
  for (const u of [owner, alice, bob, guest, admin])
    ok(await s.call(u, "PATCH", "/settings", { allow_private_data_export: true }));
  queueId = String(ok(await s.call(owner, "POST", "/register", { event_types: ["realm_export"] }))["queue_id"]);
});

const png = () =>
  sharp({ create: { width: 80, height: 80, channels: 4, background: { r: 10, g: 200, b: 10, alpha: 1 } } })
    .png()
    .toBuffer();

/**
 * What the round trip carries beyond messages: custom profile fields and values,
 * linkifiers, realm domains, alert words, muted users, statuses, an archived channel and
 * one nobody ever joined, channel permission groups (named, system and anonymous) and
 * folders, an upload linked from a message, a custom emoji used in a reaction and a
 * status, drafts and a scheduled message.
 */
async function addSettingsAndPersonalData(
  send: (senderId: number, to: Parameters<Store["sendMessage"]>[0]["to"], content: string) => number,
  channel: (name: string, topic: string) => { type: "channel"; channel: string; topic: string },
): Promise<void> {
  const store = s.t.store;
  const { owner, alice, bob, general } = s.seed;
  const team = store.createProfileField(owner.id, 1, { name: "Team", hint: "Which team" });
  const level = store.createProfileField(owner.id, 3, {
    name: "Level",
    fieldData: { a: { text: "Junior", order: "1" }, b: { text: "Senior", order: "2" } },
    displayInProfileSummary: true,
  });
  const mentor = store.createProfileField(owner.id, 6, { name: "Mentor", editableByUser: false });
  store.updateOwnProfileData(alice.id, [
    { id: team.id, value: "Platform" },
    { id: level.id, value: "b" },
  ]);
  store.updateUser(owner.id, bob.id, { profileData: [{ id: mentor.id, value: [alice.id, owner.id] }] });
  store.addLinkifier(owner.id, { pattern: "#(?P<id>[0-9]+)", urlTemplate: "https://tracker.example/{id}" });
  store.addLinkifier(owner.id, { pattern: "RFC(?P<n>[0-9]+)", urlTemplate: "https://rfc.example/{n}" });
  store.addRealmDomain(owner.id, "example.org", true);
  store.addRealmDomain(owner.id, "test.dev", false);
  store.addAlertWords(alice.id, ["deploy", "Urgent"]);
  store.muteUser(owner.id, bot.id);
  store.muteUser(bob.id, moderator.id);

  const emoji = await s.call(
    alice,
    "POST",
    "/realm/emoji/teamlogo",
    {},
    { body: formOf("file", new Blob([await png()], { type: "image/png" }), "teamlogo.png") },
  );
  expect(emoji.body, JSON.stringify(emoji.body)).toMatchObject({ result: "success" });
  const teamlogo = store.realmEmoji(s.seed.realm.id).find((e) => e.name === "teamlogo")!;
  store.updateOwnStatus(alice.id, { statusText: "at lunch", emojiName: "teamlogo" });
  store.updateOwnStatus(bob.id, { statusText: "on call", emojiName: "smile" });

  const file = await s.call(
    alice,
    "POST",
    "/user_uploads",
    {},
    { body: formOf("file", new Blob(["the notes, in full"], { type: "text/plain" }), "notes.txt") },
  );
  const uri = String((file.body as Record<string, unknown>)["url"]);
  expect(uri).toMatch(/^\/user_uploads\//);
  const linking = send(alice.id, channel("general", "files"), `see [notes.txt](${uri})`);
  // An uploaded avatar (the image parley keeps, 100×100) goes along.
  const avatar = await s.call(
    bob,
    "POST",
    "/users/me/avatar",
    {},
    { body: formOf("file", new Blob([await png()], { type: "image/png" }), "me.png") },
  );
  expect(avatar.body).toMatchObject({ result: "success" });
  // An image: its facts are read again on import (Zulip exports no ImageAttachment), so its preview renders the same.
  const picture = await s.call(
    alice,
    "POST",
    "/user_uploads",
    {},
    { body: formOf("file", new Blob([await png()], { type: "image/png" }), "green.png") },
  );
  send(
    alice.id,
    channel("general", "files"),
    `[green.png](${String((picture.body as Record<string, unknown>)["url"])})`,
  );
  store.addReaction(bob.id, linking, {
    emojiName: "teamlogo",
    emojiCode: String(teamlogo.id),
    reactionType: "realm_emoji",
  });

  const old = store.subscribe(owner.id, { channels: [{ name: "old news" }], principals: [owner.id, alice.id] });
  send(alice.id, channel("old news", "t"), "before the archive");
  const quietId = store.subscribe(owner.id, {
    channels: [{ name: "quiet", description: "nobody here" }],
    principals: [],
  }).createdChannelIds[0]!;
  const folder = store.createChannelFolder(owner.id, { name: "Engineering", description: "builds" });
  const shelf = store.createChannelFolder(owner.id, { name: "Shelf", description: "" });
  const devs = store.createGroup(owner.id, { name: "reviewers", description: "", members: [bob.id] });
  store.updateChannel(owner.id, general.id, {
    folderId: folder.id,
    permissions: {
      canAdministerChannelGroup: { new: devs.id },
      canRemoveSubscribersGroup: { new: store.systemGroupId(s.seed.realm.id, "role:moderators") },
      canAddSubscribersGroup: { new: { directMembers: [alice.id], directSubgroups: [devs.id] } },
    },
  });
  const members = store.systemGroupId(s.seed.realm.id, "role:members");
  // The realm's settings: properties, the editing rules and permission groups (system, named, anonymous).
  store.updateRealm(owner.id, {
    topicsPolicy: "disable_empty_topic",
    enableSpectatorAccess: true,
    newChannelAnnouncementsChannelId: quietId,
    properties: {
      description: "the copied org",
      waitingPeriodThreshold: 7,
      inviteRequired: false,
      defaultLanguage: "de",
      signupAnnouncementsChannelId: general.id,
      messageRetentionDays: 90,
    },
    messagePolicy: { messageContentEditLimitSeconds: 1200, messageEditHistoryVisibilityPolicy: "moves" },
    groups: {
      can_create_public_channel_group: { new: devs.id },
      can_invite_users_group: { new: { directMembers: [alice.id], directSubgroups: [devs.id] } },
      can_resolve_topics_group: { new: members },
      can_create_bots_group: { new: store.systemGroupId(s.seed.realm.id, "role:administrators") },
    },
  });
  store.updateSettings(alice.id, {
    settings: { enter_sends: true, twenty_four_hour_time: true, emojiset: "text", default_language: "fr" },
  });
  store.updateSettings(bob.id, { settings: { enable_desktop_notifications: false, color_scheme: 2 } });
  store.updateSubscriptionProperties(alice.id, [
    { channelId: general.id, property: "color", value: "#abcdef" },
    { channelId: general.id, property: "pin_to_top", value: true },
    { channelId: general.id, property: "desktop_notifications", value: false },
    { channelId: general.id, property: "wildcard_mentions_notify", value: true },
  ]);
  store.updateSubscriptionProperties(bob.id, [{ channelId: general.id, property: "push_notifications", value: true }]);
  // Subscriptions that end keep their settings: a channel left, and a person deactivated (below, in beforeAll).
  const west = store.visibleChannels(alice.id, false).find((c) => c.name === "west")!.id;
  store.updateSubscriptionProperties(alice.id, [
    { channelId: west, property: "color", value: "#123456" },
    { channelId: west, property: "pin_to_top", value: true },
    { channelId: west, property: "audible_notifications", value: false },
  ]);
  store.setChannelMuted(alice.id, west, true);
  store.unsubscribe(owner.id, ["west"], [alice.id]);
  store.updateSubscriptionProperties(gone.id, [
    { channelId: general.id, property: "color", value: "#654321" },
    { channelId: general.id, property: "email_notifications", value: true },
  ]);
  store.updateGroup(owner.id, devs.id, {
    settings: {
      canManageGroup: { new: { directMembers: [alice.id], directSubgroups: [] } },
      canMentionGroup: { new: members },
      canJoinGroup: { new: members },
    },
  });
  store.updateRealmSettingDefaults(owner.id, { enter_sends: true, emojiset: "text", color_scheme: 3 });
  store.createDefaultChannelGroup(owner.id, {
    name: "starter",
    description: "for newcomers",
    channelNames: ["general", "old news", "quiet"],
  });
  store.createSavedSnippet(alice.id, "greeting", "Welcome aboard! See #**general**.");
  store.createSavedSnippet(bob.id, "sign-off", "-- bob");
  store.addNavigationView(alice.id, { fragment: "narrow/is/starred", isPinned: true });
  store.addNavigationView(alice.id, { fragment: "narrow/channel/9-general", isPinned: false, name: "Main room" });
  store.addPlayground(owner.id, {
    name: "Rust playground",
    pygmentsLanguage: "Rust",
    urlTemplate: "https://play.rust-lang.org/?code={code}",
  });
  store.setDefaultChannel(owner.id, general.id, true);
  store.setDefaultChannel(owner.id, quietId, true);
  store.archiveChannel(owner.id, old.createdChannelIds[0]!);
  store.updateChannelFolder(owner.id, shelf.id, { isArchived: true });

  store.createDrafts(alice.id, [
    { type: "stream", to: [general.id], topic: "plans", content: "half a thought", timestamp: 1_700_000_000.5 },
    { type: "private", to: [bob.id], topic: "", content: `psst @**Bob|${bob.id}**`, timestamp: 1_700_000_100 },
    { type: "private", to: [bob.id, owner.id], topic: "", content: "to both", timestamp: 1_700_000_200 },
    { type: "", to: [], topic: "", content: "unaddressed", timestamp: 1_700_000_300 },
  ]);
  store.scheduleMessage(alice.id, {
    to: { type: "channel", channelId: general.id, topic: "later" },
    content: "from the past",
    deliverAt: store.now() + 30 * 86_400,
    client: "website",
  });
  store.scheduleMessage(bob.id, {
    to: { type: "direct", userIds: [alice.id] },
    content: `@**Alice|${alice.id}** a reminder`,
    deliverAt: store.now() + 40 * 86_400,
    readBySender: true,
    client: "website",
  });
  // A reminder is a scheduled message too: exported as Zulip's delivery type REMIND, not imported.
  store.createReminder(alice.id, {
    messageId: linking,
    deliverAt: store.now() + 50 * 86_400,
    note: "read it",
    client: "website",
    realmUrl: "http://localhost",
  });
}

/** Bots' services, configuration, default channels and storage (a deactivated bot keeps its service). */
function addBotsBeyondAccounts(): void {
  const store = s.t.store;
  const { owner, alice } = s.seed;
  const botDomain = "test.dev";
  store.createBot(owner.id, {
    fullName: "Echo",
    shortName: "echo",
    botType: 3,
    payloadUrl: "https://bots.example/echo",
    interfaceType: 2,
    defaultSendingChannel: "general",
    botDomain,
  });
  store.createBot(owner.id, {
    fullName: "Hook",
    shortName: "hook",
    botType: 2,
    serviceName: "github",
    integrations: ["github"],
    configData: { branches: "main,release", integration_id: "github" },
    defaultAllPublicChannels: true,
    botDomain,
  });
  const retired = store.createBot(owner.id, {
    fullName: "Retired",
    shortName: "retired",
    botType: 3,
    payloadUrl: "https://bots.example/old",
    botDomain,
  });
  store.deactivateBot(owner.id, retired.id);
  store.updateBot(alice.id, bot.id, { defaultSendingChannel: "general", defaultEventsRegisterChannel: "general" });
  store.setBotStorage(bot.id, { counter: "41", "last seen": JSON.stringify({ at: 1_700_000_000 }) });
}

/** A pending email invitation with channels, a group and an expiry; a link that never expires; a revoked one. */
function addInvitations(): void {
  const store = s.t.store;
  const { owner, alice, general } = s.seed;
  const env = { realmUrl: "http://localhost", dailyLimit: 100 };
  const reviewers = store.userGroups(owner.id, false).find((g) => g.group.name === "reviewers")!.group.id;
  const options = {
    invitedAs: 400,
    channelIds: [general.id],
    groupIds: [reviewers],
    includeRealmDefaultSubscriptions: false,
    notifyReferrerOnJoin: true,
    welcomeMessageCustomText: "Welcome to the copy",
    expiresInMinutes: 3 * 24 * 60,
  };
  // The realm's can_invite_users_group is alice and the reviewers (set above): she invites by email.
  const byAlice = { ...options, groupIds: [], welcomeMessageCustomText: null };
  store.inviteUsers(alice.id, "newcomer@example.org", byAlice, env);
  store.createMultiuseInvite(owner.id, { ...options, invitedAs: 600, expiresInMinutes: null }, env);
  const [withdrawn] = store.inviteUsers(alice.id, "never@example.org", byAlice, env).invites;
  store.revokeInvite(owner.id, withdrawn!.id, "email");
  revokedKey = withdrawn!.key;
}

/** A scheduled message delivered and one that failed (its sender left the private channel first). */
function addSettledScheduledMessages(): void {
  const store = s.t.store;
  const { owner, alice, general } = s.seed;
  const soon = store.now() + 60;
  const [room] = store.subscribe(owner.id, {
    channels: [{ name: "short-lived" }],
    principals: [owner.id, alice.id],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
  }).createdChannelIds;
  const to = (channelId: number, topic: string) => ({ type: "channel" as const, channelId, topic });
  store.scheduleMessage(alice.id, { to: to(room!, "t"), content: "never arrives", deliverAt: soon, client: "website" });
  store.scheduleMessage(alice.id, {
    to: to(general.id, "on time"),
    content: "delivered as planned",
    deliverAt: soon,
    client: "website",
  });
  store.unsubscribe(owner.id, ["short-lived"], [alice.id]);
  const outcomes = store.deliverDueScheduledMessages(soon + 1);
  expect(outcomes.map((o) => o.failure === null)).toEqual([false, true]);
}

function formOf(field: string, blob: Blob, name: string): FormData {
  const form = new FormData();
  form.append(field, blob, name);
  return form;
}

describe("POST /export/realm and the round trip through parley import", () => {
  let exportId: number;
  let tarball: string;

  it("a full export with consent is requested, runs in the background, and is listed with its URL", async () => {
    const r = await s.call(s.seed.owner, "POST", "/export/realm", { export_type: 2 });
    exportId = Number(ok(r)["id"]);
    await s.server.exports.idle();
    const list = ok(await s.call(admin, "GET", "/export/realm"))["exports"] as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: exportId,
      acting_user_id: s.seed.owner.id,
      deleted_timestamp: null,
      failed_timestamp: null,
      pending: false,
      export_type: 2,
    });
    expect(typeof list[0]!["export_time"]).toBe("number");
    const url = String(list[0]!["export_url"]);
    expect(url).toMatch(/\/user_avatars\/exports\/\d+\/[0-9a-f]{32}\/zulip-export-[0-9a-f]{8}\.tar\.gz$/);
    const path = new URL(url).pathname;
    // Only an administrator of the realm downloads it.
    const asMember = await fetch(`${s.base}${path}`, { headers: { Authorization: basicAuth(s.seed.alice) } });
    expect(asMember.status).toBe(404);
    const anonymous = await fetch(`${s.base}${path}`);
    expect(anonymous.status).toBe(401);
    const download = await fetch(`${s.base}${path}`, { headers: { Authorization: basicAuth(admin) } });
    expect(download.status, await download.clone().text()).toBe(200);
    tarball = join(root, "export.tar.gz");
    writeFileSync(tarball, Buffer.from(await download.arrayBuffer()));
  });

  it("sends realm_export to the administrators as the export is requested, started and finished", async () => {
    const r = await s.call(s.seed.owner, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
    const events = (ok(r)["events"] as Record<string, unknown>[]).filter((e) => e["type"] === "realm_export");
    expect(events.map((e) => (e["exports"] as Record<string, unknown>[])[0]!["pending"])).toEqual([true, true, false]);
    const last = (events.at(-1)!["exports"] as Record<string, unknown>[])[0]!;
    expect(last["export_url"]).toMatch(/zulip-export-/);
  });

  it("holds what Zulip's export with consent holds", async () => {
    const opened = await openExport(tarball, DEFAULT_LIMITS);
    try {
      const data = readExport(opened.root, DEFAULT_LIMITS);
      const contents = data.messages.map((m) => m.content);
      // The moderator does not consent: nothing of theirs is private here anyway; every DM has a consenting member.
      expect(contents).toContain("a DM from the leaver");
      expect(contents).toContain("only the secret's members");
      expect(
        data.userMessages.every((um) => um.user !== moderator.id && um.user !== bot.id && um.user !== gone.id),
      ).toBe(true);
      expect(data.ignoredTables).toEqual({});
      expect(data.users.find((u) => u.id === s.seed.bob.id)).toMatchObject({ avatar_source: "U" });
      expect([...data.avatarFiles.keys()]).toEqual([s.seed.bob.id]);
      const reminders = data.scheduledMessages.filter((m) => m["delivery_type"] === 2);
      expect(reminders).toHaveLength(1);
      expect(reminders[0]).toMatchObject({ reminder_note: "read it", stream: null, subject: "" });
      expect(data.messages.find((m) => m.id === reminders[0]!["reminder_target_message_id"])?.content).toMatch(
        /^see \[notes\.txt\]/,
      );
      // Pending, failed and delivered ones.
      expect(data.scheduledMessages.filter((m) => m["delivery_type"] === 1)).toHaveLength(4);
      expect(data.scheduledMessages.filter((m) => m.failed === true)).toHaveLength(1);
      expect(data.scheduledMessages.filter((m) => m.delivered === true)).toHaveLength(1);
    } finally {
      opened.cleanup();
    }
  });

  it("parley import reads it back: users, channels, messages, flags, reactions, groups, policies, settings, own data", () => {
    const dataDir = join(root, "imported");
    const r = spawnSync(
      process.execPath,
      [CLI, "import", "--data", dataDir, "--from", tarball, "--subdomain", "copy", "--json"],
      {
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    // Nothing refused: only what parley never takes over is reported.
    const report = JSON.parse(r.stdout) as { notCarried: Record<string, unknown>; imported: Record<string, number> };
    expect(Object.keys(report.notCarried).sort()).toEqual(["API keys and passwords (every user gets a new API key)"]);
    expect(report.imported).toMatchObject({
      "custom profile fields": 3,
      "custom profile values": 3,
      linkifiers: 2,
      "realm domains": 2,
      "custom emoji": 1,
      uploads: 2,
      avatars: 1,
      channels: 8,
      "edit histories": 3,
      "realm defaults for new users": 1,
      "default channel groups": 1,
      "code playgrounds": 1,
      "saved snippets": 2,
      "navigation views": 2,
      "channel folders": 2,
      "alert words": 2,
      "muted users": 2,
      "user statuses": 2,
      drafts: 4,
      "scheduled messages": 4,
      reminders: 1,
      "archived channels": 1,
      "archived channel folders": 1,
      "bot default channels": 2,
      "bot storage keys": 2,
      invitations: 2,
      "invitation links": 1,
      presence: 2,
    });
    const copy = openStore(dataDir, { noSync: true });
    try {
      expect(copy.verify().differences).toEqual([]);
      const realmB = copy.findRealmBySubdomain("copy")!.id;
      compareRealms(s.t.store, s.seed.realm.id, copy, realmB, [moderator.id, bot.id, gone.id]);
      compareSettings(s.t.store, s.t.dir, s.seed.realm.id, copy, dataDir, realmB);
    } finally {
      copy.close();
    }
  });

  it("cut into many small slices and files, the export holds the same messages and rows", async () => {
    const store = s.t.store;
    const small = new RealmExports(store, {
      root: join(root, "small"),
      uploads: s.server.uploads.files,
      emojiFile: (realmId, fileName, still) => emojiFilePath(s.t.dir, realmId, fileName, still),
      avatarFile: (realmId, fileName) => avatarFilePath(s.t.dir, realmId, fileName),
      logError: (message, error) => {
        throw new Error(`${message}: ${String(error)}`);
      },
      sliceMessages: 2,
      fileMessages: 3,
    });
    const row = store.requestRealmExport(s.seed.owner.id, 2, { supportAddress: "admin@test.dev" });
    small.start(row, "http://localhost");
    await small.idle();
    const done = store.realmExports(s.seed.owner.id).find((e) => e.id === row.id)!;
    expect(done.status).toBe(REALM_EXPORT_STATUS.SUCCEEDED);
    const [whole, sliced] = await Promise.all([
      openExport(tarball, DEFAULT_LIMITS),
      openExport(small.fileOf(done.exportPath!)!, DEFAULT_LIMITS),
    ]);
    try {
      expect(readdirSync(sliced.root).filter((f) => f.startsWith("messages-"))).toEqual([
        "messages-000001.json",
        "messages-000002.json",
        "messages-000003.json",
        "messages-000004.json",
        "messages-000005.json",
      ]);
      const a = readExport(whole.root, DEFAULT_LIMITS);
      const b = readExport(sliced.root, DEFAULT_LIMITS);
      expect(b.messages).toEqual(a.messages);
      const rows = (d: typeof a) =>
        d.userMessages.map((um) => `${um.user}:${um.message}:${[...um.flags].sort().join(",")}`).sort();
      expect(rows(b)).toEqual(rows(a));
      expect(rows(a).length).toBeGreaterThan(20);
    } finally {
      whole.cleanup();
      sliced.cleanup();
    }
  });

  it("DELETE removes the tarball and marks the export deleted; a second DELETE is refused", async () => {
    const list = ok(await s.call(admin, "GET", "/export/realm"))["exports"] as Record<string, unknown>[];
    const path = new URL(String(list[0]!["export_url"])).pathname;
    ok(await s.call(admin, "DELETE", `/export/realm/${exportId}`));
    const after = ok(await s.call(admin, "GET", "/export/realm"))["exports"] as Record<string, unknown>[];
    expect(after[0]).toMatchObject({ id: exportId, export_url: null, pending: false });
    expect(typeof after[0]!["deleted_timestamp"]).toBe("number");
    const gone404 = await fetch(`${s.base}${path}`, { headers: { Authorization: basicAuth(admin) } });
    expect(gone404.status).toBe(404);
    const again = await s.call(admin, "DELETE", `/export/realm/${exportId}`);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: "BAD_REQUEST", msg: "Export already deleted" });
  });
});

/** Users by delivery email, channels by name, messages in order: the copy must hold what the original does. */
function compareRealms(a: Store, realmA: number, b: Store, realmB: number, withoutFlags: readonly number[]): void {
  const usersA = a.realmUsers(realmA).concat(a.realmBots(realmA));
  const usersB = b.realmUsers(realmB).concat(b.realmBots(realmB));
  const emailA = new Map(usersA.map((u) => [u.id, u.deliveryEmail]));
  const emailB = new Map(usersB.map((u) => [u.id, u.deliveryEmail]));
  const user = (u: User, email: Map<number, string>) => ({
    email: u.deliveryEmail,
    name: u.fullName,
    role: u.role,
    isBot: u.isBot,
    active: u.isActive,
    botOwner: u.botOwnerId === null ? null : email.get(u.botOwnerId),
  });
  const byEmail = (x: { email: string }, y: { email: string }) => x.email.localeCompare(y.email);
  expect(usersB.map((u) => user(u, emailB)).sort(byEmail)).toEqual(usersA.map((u) => user(u, emailA)).sort(byEmail));
  const twin = new Map(usersA.map((u) => [u.id, usersB.find((v) => v.deliveryEmail === u.deliveryEmail)!.id]));
  const ownerA = usersA.find((u) => u.role === 100)!;
  const ownerB = twin.get(ownerA.id)!;

  const channels = (store: Store, owner: number, email: Map<number, string>) =>
    store
      .visibleChannels(owner, true)
      .map((c) => ({
        name: c.name,
        description: c.description,
        inviteOnly: c.inviteOnly,
        history: c.historyPublicToSubscribers,
        archived: c.isArchived,
        subscribers: [...store.channelMembers(owner, c.id)].map((id) => email.get(id)).sort(),
      }))
      .sort((x, y) => x.name.localeCompare(y.name));
  expect(channels(b, ownerB, emailB)).toEqual(channels(a, ownerA.id, emailA));

  const messages = (store: Store, realmId: number, email: Map<number, string>) => {
    const out = [];
    for (let id = 1; id <= store.lastMessageId; id++) {
      const m = store.findMessageRecord(id);
      if (!m || m.realmId !== realmId) continue;
      const to =
        m.recipient.type === "channel"
          ? `#${store.getChannel(m.recipient.channelId)!.name} > ${m.topic}`
          : store
              .findConversation(m.recipient.conversationId)!
              .userIds.map((u) => email.get(u))
              .sort()
              .join(",");
      out.push({
        id,
        sender: email.get(m.senderId),
        to,
        // An upload's path_id starts with its realm's ID.
        content: m.content.replace(/\/user_uploads\/\d+\//g, "/user_uploads/R/"),
        dateSent: m.dateSent,
        reactions: m.reactions.map((r) => `${r.emojiName}:${email.get(r.userId)}`).sort(),
        edited: m.lastEditTimestamp,
        moved: m.lastMovedTimestamp,
        history: m.editHistory?.map((e) => ({
          by: e.userId === null ? null : email.get(e.userId),
          at: e.timestamp,
          prevContent: e.prevContent,
          // Rendered again on import (mentions name the new IDs): the same text, not the same HTML.
          rendered: e.prevRenderedContent?.replace(/data-user-id="\d+"/g, ""),
          prevTopic: e.prevTopic,
          topic: e.topic,
          prevStream: e.prevStream === undefined ? undefined : store.getChannel(e.prevStream)?.name,
          stream: e.stream === undefined ? undefined : store.getChannel(e.stream)?.name,
        })),
      });
    }
    return out;
  };
  const listA = messages(a, realmA, emailA);
  const listB = messages(b, realmB, emailB);
  const strip = (list: typeof listA) => list.map(({ id: _id, ...rest }) => rest);
  expect(strip(listB)).toEqual(strip(listA));
  expect(listA.length).toBe(20);
  // The three edited messages are there to compare, as the engine's own edits left them.
  const edited = listA.filter((m) => m.history !== undefined);
  expect(edited.map((m) => m.history!.length)).toEqual([1, 1, 2]);
  expect(edited.map((m) => [m.edited !== null, m.moved !== null])).toEqual([
    [true, false],
    [false, true],
    [true, true],
  ]);
  expect(edited[2]!.history![1]).toMatchObject({ prevStream: "east", stream: "west" });
  expect(edited[2]!.history![0]!.rendered).toMatch(/class="user-mention"[^>]*>@Ada Admin</);
  const messageTwin = new Map(listA.map((m, i) => [m.id, listB[i]!.id]));

  // Flags of every user who consented, message by message; and what each user may read at all.
  for (const u of usersA) {
    const v = twin.get(u.id)!;
    if (!u.isActive) continue;
    for (const [idA, idB] of messageTwin) {
      let flagsA: readonly string[] | null = null;
      let flagsB: readonly string[] | null = null;
      try {
        flagsA = a.getMessage(u.id, idA).flags;
      } catch {
        flagsA = null;
      }
      try {
        flagsB = b.getMessage(v, idB).flags;
      } catch {
        flagsB = null;
      }
      const keep = (f: readonly string[] | null) =>
        f === null ? null : f.filter((x) => ["read", "starred", "historical", "collapsed"].includes(x)).sort();
      if (withoutFlags.includes(u.id)) expect(flagsB === null, `${u.email} access to ${idA}`).toBe(flagsA === null);
      else expect(keep(flagsB), `${u.email} flags of message ${idA}`).toEqual(keep(flagsA));
    }
  }

  const groups = (store: Store, owner: number, email: Map<number, string>) => {
    const all = store.userGroups(owner, true).filter((g) => !g.group.name.startsWith("role:"));
    const nameOf = new Map(all.map((g) => [g.group.id, g.group.name]));
    return all
      .map((g) => ({
        name: g.group.name,
        description: g.group.description,
        members: g.group.members.map((id) => email.get(id)).sort(),
        subgroups: g.group.subgroups.map((id) => nameOf.get(id)).sort(),
      }))
      .sort((x, y) => x.name.localeCompare(y.name));
  };
  expect(groups(b, ownerB, emailB)).toEqual(groups(a, ownerA.id, emailA));

  for (const u of usersA) {
    const v = twin.get(u.id)!;
    if (!u.isActive) continue;
    const policies = (store: Store, id: number) =>
      store
        .userTopics(id)
        .map((t) => `${store.getChannel(t.channelId)!.name}/${t.topic}:${t.policy}`)
        .sort();
    expect(policies(b, v), `${u.email} topic policies`).toEqual(policies(a, u.id));
    const muted = (store: Store, id: number) =>
      store
        .subscriptionLists(id, true)
        .subscribed.filter((c) => c.subscription.isMuted)
        .map((c) => c.channel.name)
        .sort();
    expect(muted(b, v), `${u.email} muted channels`).toEqual(muted(a, u.id));
  }
}

/** A bot's settings beyond its account: service (token included), configuration, default channels, storage. */
function botView(store: Store, bot: User) {
  const config = bot.botConfig;
  const channelName = (id: number | null | undefined) => (id == null ? null : store.getChannel(id)?.name);
  return {
    service: config?.service ?? null,
    configData: config?.configData ?? {},
    sending: channelName(config?.defaultSendingChannelId),
    events: channelName(config?.defaultEventsRegisterChannelId),
    allPublic: config?.defaultAllPublicChannels ?? false,
    storage: bot.isActive ? store.botStorage(bot.id) : null,
  };
}

/** The realm's settings and each person's own data, by names and emails (IDs differ between the two stores). */
function compareSettings(a: Store, dirA: string, realmA: number, b: Store, dirB: string, realmB: number): void {
  const view = (store: Store, dir: string, realmId: number) => {
    const users = store.realmUsers(realmId).concat(store.realmBots(realmId));
    const email = new Map(users.map((u) => [u.id, u.deliveryEmail]));
    // Mentions name people by ID, which an import renumbers: compare them by address.
    const byEmail = (content: string) =>
      content.replace(
        /(@_?\*\*[^*|]+)\|(\d+)\*\*/g,
        (_, open: string, id: string) => `${open}|${email.get(Number(id))}**`,
      );
    const owner = users.find((u) => u.role === 100 && u.isActive)!.id;
    const fields = store.profileFields(owner);
    const fieldName = new Map(fields.map((f) => [String(f.id), f.name]));
    const groupName = (value: GroupSettingValue): unknown =>
      typeof value === "number"
        ? store.userGroups(owner, true).find((g) => g.group.id === value)?.group.name
        : {
            members: value.directMembers.map((id) => email.get(id)).sort(),
            subgroups: value.directSubgroups.map((id) => groupName(id)),
          };
    const folders = store.channelFolders(owner, true);
    const folderName = new Map(folders.map((f) => [f.id, f.name]));
    const emoji = store.realmEmoji(realmId);
    const emojiName = new Map(emoji.map((e) => [String(e.id), e.name]));
    const uploads = new UploadFiles(join(dir, "uploads"));
    const perUser = users
      .filter((u) => u.isActive)
      .map((u) => ({
        email: u.deliveryEmail,
        profile: Object.fromEntries(
          Object.entries(u.profileData).map(([id, value]) => [
            fieldName.get(id),
            typeof value === "string" ? value : value.map((v) => email.get(v)).sort(),
          ]),
        ),
        settings: u.isBot ? null : store.userSettings(u.id),
        avatar:
          u.avatarFile === undefined
            ? null
            : readFileSync(avatarFilePath(dir, realmId, u.avatarFile)!)
                .toString("base64")
                .slice(0, 200),
        subscriptions: store
          .subscriptionLists(u.id, false)
          .subscribed.map(({ subscription: sub, channel }) => ({
            channel: channel.name,
            muted: sub.isMuted,
            color: sub.color,
            pin: sub.pinToTop,
            notifications: SUBSCRIPTION_NOTIFICATIONS.map((n) => sub.notifications?.[n] ?? null),
          }))
          .sort((x, y) => x.channel.localeCompare(y.channel)),
        alertWords: store.alertWords(u.id),
        snippets: u.isBot ? [] : store.savedSnippets(u.id).map((x) => `${x.title}: ${x.content} @${x.dateCreated}`),
        views: u.isBot ? [] : store.navigationViews(u.id),
        muted: store.mutedUsers(u.id).map((m) => `${email.get(m.id)}@${m.timestamp}`),
        drafts: u.isBot
          ? []
          : store.drafts(u.id).map((d) => ({
              type: d.type,
              to:
                d.type === "stream"
                  ? d.to.map((id) => store.getChannel(id)!.name)
                  : d.to.map((id) => email.get(id)).sort(),
              topic: d.topic,
              content: byEmail(d.content),
              time: d.lastEditTime,
            })),
        // Pending, failed and delivered ones, and reminders.
        scheduled: store.scheduledMessageRecords(u.id).map((m) => ({
          to:
            m.recipient.type === "channel"
              ? `#${store.getChannel(m.recipient.channelId)!.name} > ${m.recipient.topic}`
              : m.recipient.userIds.map((id) => email.get(id)).sort(),
          content: byEmail(m.content),
          at: m.deliverAt,
          readBySender: m.readBySender,
          failed: m.failureMessage,
          delivered: m.delivered,
          deliveredAs: m.deliveredMessageId === null ? null : store.findMessageRecord(m.deliveredMessageId)?.content,
          reminder:
            m.reminder === undefined
              ? null
              : { of: store.findMessageRecord(m.reminder.messageId)?.content, note: m.reminder.note },
        })),
        uploads: store.attachments(u.id).map((f) => ({
          name: f.name,
          size: f.size,
          type: f.contentType,
          claims: f.messageIds.map((id) => store.findMessageRecord(id)!.content.slice(0, 10)),
          bytes: readFileSync(uploads.pathOf(f.pathId)).toString("base64"),
          image: f.image,
          rendered: f.messageIds.map((id) =>
            store.findMessageRecord(id)!.renderedContent.replace(/(user_uploads\/(?:thumbnail\/)?)\d+\//g, "$1R/"),
          ),
        })),
      }))
      .sort((x, y) => x.email.localeCompare(y.email));
    const statuses = Object.entries(store.realmUserStatuses(owner))
      .map(([id, st]) => ({
        user: email.get(Number(id)),
        text: st.status_text,
        emoji: st.reaction_type === "realm_emoji" ? `:${emojiName.get(st.emoji_code ?? "")}:` : st.emoji_code,
        type: st.reaction_type,
      }))
      .sort((x, y) => String(x.user).localeCompare(String(y.user)));
    const realm = store.findRealm(realmId)!;
    const channelName = (id: number | null | undefined) => (id == null ? null : store.getChannel(id)?.name);
    const realmSettings = {
      topicsPolicy: realm.topicsPolicy,
      spectators: realm.enableSpectatorAccess,
      announcements: channelName(realm.newChannelAnnouncementsChannelId),
      properties: Object.fromEntries(
        Object.entries(store.realmProperties(realmId)).map(([k, v]) => [
          k,
          k.endsWith("ChannelId") && typeof v === "number" ? channelName(v) : v,
        ]),
      ),
      policy: Object.fromEntries(
        Object.entries(store.realmMessagePolicy(realmId)).map(([k, v]) => [
          k,
          typeof v === "object" || k.endsWith("Group") ? groupName(v as GroupSettingValue) : v,
        ]),
      ),
      groups: Object.fromEntries(
        REALM_GROUP_SETTING_WIRE_NAMES.map((w) => [w, groupName(store.realmGroupSetting(realmId, w))]),
      ),
    };
    const groups = store
      .userGroups(owner, true)
      .filter(({ group }) => group.systemRole === null)
      .map(({ group }) => ({
        name: group.name,
        settings: Object.fromEntries(Object.entries(store.groupSettings(group)).map(([k, v]) => [k, groupName(v)])),
      }))
      .sort((x, y) => x.name.localeCompare(y.name));
    // Everyone's subscriptions, ended ones too (channels left, people deactivated), with their own settings.
    const everySubscription = users
      .flatMap((u) => {
        const lists = store.subscriptionLists(u.id, true);
        return [
          ...lists.subscribed.map((x) => ({ ...x, active: true })),
          ...lists.unsubscribed.map((x) => ({ ...x, active: false })),
        ].map(({ subscription: sub, channel, active }) => ({
          who: `${email.get(u.id)} ${u.isActive ? "" : "(deactivated)"}`,
          channel: channel.name,
          active,
          muted: sub.isMuted,
          color: sub.color,
          pin: sub.pinToTop,
          notifications: SUBSCRIPTION_NOTIFICATIONS.map((n) => sub.notifications?.[n] ?? null),
        }));
      })
      .sort((x, y) => `${x.who} ${x.channel}`.localeCompare(`${y.who} ${y.channel}`));
    const bots = users
      .filter((u) => u.isBot)
      .map((u) => ({ email: u.deliveryEmail, active: u.isActive, ...botView(store, u) }))
      .sort((x, y) => x.email.localeCompare(y.email));
    const invitations = store.listInvites(owner).map((i) => ({
      kind: i.kind,
      email: i.email,
      by: email.get(i.invitedById),
      as: i.invitedAs,
      channels: i.channelIds.map((id) => channelName(id)),
      groups: i.groupIds.map((id) => groupName(id)),
      defaults: i.includeRealmDefaultSubscriptions,
      notify: i.notifyReferrerOnJoin,
      text: i.welcomeMessageCustomText,
      at: i.invitedAt,
      expires: i.expiresAt,
      key: i.key,
      usable: store.usableInvite(realmId, i.key).id === i.id,
    }));
    let revoked: string;
    try {
      store.usableInvite(realmId, revokedKey);
      revoked = "usable";
    } catch (error) {
      revoked = String(error);
    }
    const presence = users
      .filter((u) => u.isActive && !u.isBot)
      .map((u) => {
        try {
          const p = store.userPresence(owner, u.id);
          return { user: email.get(u.id), active: p.lastActive, connected: p.lastConnected };
        } catch {
          return { user: email.get(u.id), active: null, connected: null };
        }
      })
      .sort((x, y) => String(x.user).localeCompare(String(y.user)));
    const configuration = {
      defaultsForNewUsers: store.realmSettingDefaults(realmId),
      defaultChannelGroups: store.defaultChannelGroups(owner).map((g) => ({
        name: g.name,
        description: g.description,
        channels: g.channelIds.map((id) => channelName(id)),
      })),
      playgrounds: store.realmPlaygrounds(realmId).map((p) => `${p.name} ${p.pygmentsLanguage} ${p.urlTemplate}`),
    };
    return {
      bots,
      presence,
      invitations,
      revoked,
      realmSettings,
      configuration,
      everySubscription,
      groups,
      defaultChannels: store
        .defaultChannelIds(owner)
        .map((id) => channelName(id))
        .sort(),
      fields: fields.map((f) => ({
        name: f.name,
        hint: f.hint,
        type: f.type,
        data: f.fieldData,
        summary: f.displayInProfileSummary,
        editable: f.editableByUser,
      })),
      linkifiers: store.linkifiers(owner).map((l) => `${l.pattern} -> ${l.urlTemplate}`),
      domains: store.realmDomains(owner).map((d) => `${d.domain}:${d.allowSubdomains}`),
      emoji: emoji.map((e) => ({
        name: e.name,
        author: e.authorId === null ? null : email.get(e.authorId),
        deactivated: e.deactivated,
        image: readFileSync(emojiFilePath(dir, realmId, e.fileName, false)!).toString("base64"),
      })),
      folders: folders.map((f) => `${f.name}: ${f.description} ${f.isArchived ? "(archived)" : ""}`),
      channels: store
        .visibleChannels(owner, true)
        .map((c) => ({
          name: c.name,
          folder: c.folderId === null || c.folderId === undefined ? null : folderName.get(c.folderId),
          permissions: Object.fromEntries(
            CHANNEL_GROUP_SETTINGS.map((spec) => [spec.wire, groupName(store.channelGroupSettings(c)[spec.field])]),
          ),
        }))
        .sort((x, y) => x.name.localeCompare(y.name)),
      statuses,
      perUser,
    };
  };
  const original = view(a, dirA, realmA);
  // The setup's data is all there to compare.
  const bots = original.bots;
  expect(original.invitations).toMatchObject([
    { kind: "email", email: "newcomer@example.org", channels: ["general"], text: null, usable: true },
    { kind: "multiuse", as: 600, groups: ["reviewers"], text: "Welcome to the copy", expires: null, usable: true },
  ]);
  expect(original.revoked).toMatch(/revoked/);
  expect(original.presence.filter((p) => p.connected !== null).map((p) => p.user)).toEqual([
    s.seed.alice.deliveryEmail,
    s.seed.bob.deliveryEmail,
  ]);
  expect(original.presence.find((p) => p.user === s.seed.bob.deliveryEmail)?.active).toBeNull();
  expect(bots).toContainEqual(
    expect.objectContaining({
      service: expect.objectContaining({ baseUrl: "https://bots.example/echo", interface: 2 }),
      sending: "general",
    }),
  );
  expect(bots).toContainEqual(
    expect.objectContaining({ configData: { branches: "main,release", integration_id: "github" }, allPublic: true }),
  );
  expect(bots).toContainEqual(
    expect.objectContaining({ storage: expect.objectContaining({ counter: "41" }), events: "general" }),
  );
  expect(bots).toContainEqual(
    expect.objectContaining({
      active: false,
      service: expect.objectContaining({ baseUrl: "https://bots.example/old" }),
    }),
  );
  expect(original.fields).toHaveLength(3);
  expect(original.defaultChannels).toEqual(["general", "quiet"]);
  expect(original.groups.find((g) => g.name === "reviewers")?.settings).toMatchObject({
    canManageGroup: { members: [s.seed.alice.deliveryEmail], subgroups: [] },
    canJoinGroup: "role:members",
  });
  expect(original.everySubscription).toContainEqual(
    expect.objectContaining({ channel: "west", active: false, muted: true, color: "#123456", pin: true }),
  );
  expect(original.everySubscription).toContainEqual(
    expect.objectContaining({ who: "gone@test.dev (deactivated)", channel: "general", active: true, color: "#654321" }),
  );
  expect(original.configuration).toMatchObject({
    defaultsForNewUsers: { enter_sends: true, emojiset: "text", color_scheme: 3 },
    defaultChannelGroups: [{ name: "starter", channels: ["general", "quiet"] }],
    playgrounds: ["Rust playground Rust https://play.rust-lang.org/?code={code}"],
  });
  const aliceView = original.perUser.find((u) => u.email === s.seed.alice.deliveryEmail)!;
  expect(aliceView.scheduled).toContainEqual(
    expect.objectContaining({ content: "never arrives", failed: expect.any(String), delivered: false }),
  );
  expect(aliceView.scheduled).toContainEqual(
    expect.objectContaining({ delivered: true, deliveredAs: "delivered as planned", failed: null }),
  );
  expect(aliceView.scheduled).toContainEqual(
    expect.objectContaining({ reminder: { of: expect.stringMatching(/^see \[notes/), note: "read it" } }),
  );
  expect(original.perUser.filter((u) => u.avatar !== null).map((u) => u.email)).toEqual([s.seed.bob.deliveryEmail]);
  expect(aliceView.snippets).toHaveLength(1);
  expect(aliceView.views).toHaveLength(2);
  expect(aliceView.settings).toMatchObject({ enter_sends: true, emojiset: "text", default_language: "fr" });
  expect(aliceView.subscriptions.find((x) => x.channel === "general")).toMatchObject({
    color: "#abcdef",
    pin: true,
    notifications: [false, null, null, null, true],
  });
  expect(original.realmSettings).toMatchObject({
    topicsPolicy: "disable_empty_topic",
    announcements: "quiet",
    properties: { description: "the copied org", signupAnnouncementsChannelId: "general", waitingPeriodThreshold: 7 },
    policy: { messageEditHistoryVisibilityPolicy: "moves", canResolveTopicsGroup: "role:members" },
    groups: {
      can_create_public_channel_group: "reviewers",
      can_invite_users_group: { members: [s.seed.alice.deliveryEmail], subgroups: ["reviewers"] },
    },
  });
  expect(original.emoji).toHaveLength(1);
  expect(original.perUser.find((u) => u.email === s.seed.alice.deliveryEmail)!.drafts).toHaveLength(4);
  expect(original.perUser.flatMap((u) => u.uploads)).toHaveLength(2);
  expect(original.perUser.flatMap((u) => u.uploads).find((f) => f.name === "green.png")).toMatchObject({
    image: { width: 80, height: 80, animated: false },
    rendered: [expect.stringContaining("thumbnail")],
  });
  expect(original.statuses.map((st) => st.emoji)).toContain(":teamlogo:");
  const copy = view(b, dirB, realmB);
  for (const part of Object.keys(original) as (keyof typeof original)[])
    expect(copy[part], part).toEqual(original[part]);
}

describe("who may export", () => {
  it("owners and administrators only; others get Zulip's refusal and change nothing", async () => {
    const { owner, alice, guest } = s.seed;
    for (const u of [moderator, alice, guest, bot]) {
      for (const [method, path] of [
        ["POST", "/export/realm"],
        ["GET", "/export/realm"],
        ["GET", "/export/realm/consents"],
        ["DELETE", "/export/realm/1"],
      ] as const) {
        const r = await s.call(u, method, path);
        expect(r.status, `${u.email} ${method} ${path}`).toBe(400);
        expect(r.body).toMatchObject({ code: "UNAUTHORIZED_PRINCIPAL", msg: "Must be an organization administrator" });
      }
    }
    const consents = ok(await s.call(owner, "GET", "/export/realm/consents"))["export_consents"] as {
      user_id: number;
      consented: boolean;
    }[];
    expect(consents.find((c) => c.user_id === moderator.id)).toEqual({ user_id: moderator.id, consented: false });
    expect(consents.find((c) => c.user_id === alice.id)).toEqual({ user_id: alice.id, consented: true });
    expect(consents.some((c) => c.user_id === bot.id || c.user_id === gone.id)).toBe(false);
  });

  it("another realm's export answers like a missing one; bad IDs and export types are refused", async () => {
    const store = s.t.store;
    const other = store.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "o@other.test", fullName: "Oscar" },
    });
    const foreign = store.requestRealmExport(other.owner.id, 1, { supportAddress: "admin@test.dev" });
    store.markExportSucceeded(other.realm.id, foreign.id, {
      exportPath: `${other.realm.id}/${"0".repeat(32)}/zulip-export-00000000.tar.gz`,
      exportUrl: "http://other.localhost/x",
      sha256: "0",
      sizeBytes: 1,
    });
    const theirs = await s.call(s.seed.owner, "DELETE", `/export/realm/${foreign.id}`);
    const missing = await s.call(s.seed.owner, "DELETE", "/export/realm/999999");
    expect(theirs.body).toEqual(missing.body);
    expect(missing.body).toMatchObject({ code: "BAD_REQUEST", msg: "Invalid data export ID" });
    const bad = await s.call(s.seed.owner, "POST", "/export/realm", { export_type: 3 });
    expect(bad.status).toBe(400);
    expect(store.realmExports(other.owner.id).map((e) => e.status)).toEqual([REALM_EXPORT_STATUS.SUCCEEDED]);
  });

  it("refuses a sixth request in seven days, with Zulip's message, and a public export holds public channels only", async () => {
    const owner = s.seed.owner;
    const ids: number[] = [];
    const before = (ok(await s.call(owner, "GET", "/export/realm"))["exports"] as unknown[]).length;
    for (let n = before; n < 5; n++) ids.push(Number(ok(await s.call(owner, "POST", "/export/realm"))["id"]));
    await s.server.exports.idle();
    const sixth = await s.call(owner, "POST", "/export/realm", { export_type: 1 });
    expect(sixth.status).toBe(400);
    expect(sixth.body).toMatchObject({ code: "BAD_REQUEST", msg: "Exceeded rate limit." });
    const list = ok(await s.call(owner, "GET", "/export/realm"))["exports"] as Record<string, unknown>[];
    expect(list).toHaveLength(5);
    const publicOne = list.find((e) => e["id"] === ids[0])!;
    expect(publicOne).toMatchObject({ export_type: 1, pending: false });
    const download = await fetch(`${s.base}${new URL(String(publicOne["export_url"])).pathname}`, {
      headers: { Authorization: basicAuth(owner) },
    });
    const file = join(root, "public.tar.gz");
    writeFileSync(file, Buffer.from(await download.arrayBuffer()));
    const opened = await openExport(file, DEFAULT_LIMITS);
    try {
      const data = readExport(opened.root, DEFAULT_LIMITS);
      const open = new Set(data.streams.filter((c) => c.invite_only !== true).map((c) => c.id));
      const openRecipients = new Set(
        [...data.recipients.values()].filter((r) => r.type === 2 && open.has(r.type_id)).map((r) => r.id),
      );
      expect(data.messages.length).toBeGreaterThan(0);
      expect(data.messages.every((m) => openRecipients.has(m.recipient))).toBe(true);
      // Drafts and scheduled messages are private: none without consent.
      expect([data.drafts.length, data.scheduledMessages.length]).toEqual([0, 0]);
      // Everyone's rows, as Zulip's public export has them.
      expect(data.userMessages.some((um) => um.user === moderator.id)).toBe(true);
    } finally {
      opened.cleanup();
    }
  });
});
