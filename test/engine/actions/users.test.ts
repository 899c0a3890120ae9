import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROLE, type Store, type User } from "../../../src/engine/index.js";
import { expectFailsUnchanged, fingerprint } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { internals } from "../../../src/engine/internal.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let admin: User;

beforeEach(() => {
  t = tempStore({ now: () => 1_700_000_000 });
  s = t.store;
  w = seedRealm(s);
  admin = s.createUser({
    realmId: w.realm.id,
    email: "admin@test.dev",
    fullName: "Ada Admin",
    role: ROLE.ADMINISTRATOR,
  });
});
afterEach(() => t.cleanup());

const failsWithoutChange = (fn: () => unknown, expected: { code: string; message: string; data?: unknown }) =>
  expectFailsUnchanged(s, fn, expected);
const send = (topic: string, senderId = w.owner.id, channel = "general") =>
  s.sendMessage({ senderId, to: { type: "channel", channel, topic }, content: "x" }).id;
const intervals = (user: User, channelId: number) => internals(s).subsByUser.get(user.id)?.get(channelId)?.intervals;
const newest = (user: User) =>
  s.getMessages(user.id, { anchor: "newest", numBefore: 100, numAfter: 0 }).messages.map((v) => v.message.id);

describe("createUser", () => {
  it("creates members by default, with a fresh API key, indexed by email", () => {
    const u = s.createUser({
      realmId: w.realm.id,
      email: " Dan@Test.dev ",
      fullName: "  Dan  ",
      timezone: "Europe/Paris",
    });
    expect(u).toMatchObject({
      realmId: w.realm.id,
      email: "Dan@Test.dev",
      deliveryEmail: "Dan@Test.dev",
      fullName: "Dan",
      role: ROLE.MEMBER,
      isBot: false,
      botType: null,
      botOwnerId: null,
      isActive: true,
      dateJoined: 1_700_000_000,
      timezone: "Europe/Paris",
    });
    expect(u.apiKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(s.findUserByEmail(w.realm.id, "dan@test.dev")?.id).toBe(u.id);
    expect(s.findUserByApiKey(u.apiKey)?.id).toBe(u.id);
    expect(t.reopen().findUserByEmail(w.realm.id, "DAN@TEST.DEV")?.id).toBe(u.id);
  });

  it("bots record their type and owner", () => {
    const bot = s.createUser({
      realmId: w.realm.id,
      email: "bot@test.dev",
      fullName: "Helper Bot",
      bot: { type: 2, ownerId: w.alice.id },
      apiKey: "fixedkey",
    });
    expect(bot).toMatchObject({ isBot: true, botType: 2, botOwnerId: w.alice.id, apiKey: "fixedkey" });
  });

  it("validation errors (nothing changed)", () => {
    const make = (over: Partial<Parameters<Store["createUser"]>[0]>) => () =>
      s.createUser({ realmId: w.realm.id, email: "new@test.dev", fullName: "New", ...over });
    failsWithoutChange(make({ realmId: 9999 }), { code: "BAD_REQUEST", message: "Invalid realm" });
    failsWithoutChange(make({ email: "not-an-email" }), {
      code: "BAD_REQUEST",
      message: "Invalid email 'not-an-email'",
    });
    failsWithoutChange(make({ email: "a b@test.dev" }), {
      code: "BAD_REQUEST",
      message: "Invalid email 'a b@test.dev'",
    });
    failsWithoutChange(make({ email: "ALICE@test.dev" }), {
      code: "BAD_REQUEST",
      message: "Email 'ALICE@test.dev' already in use",
    });
    failsWithoutChange(make({ role: 500 as 400 }), { code: "BAD_REQUEST", message: "Invalid role" });
    failsWithoutChange(make({ fullName: "   " }), { code: "BAD_REQUEST", message: "Name too short!" });
    failsWithoutChange(make({ fullName: "x".repeat(101) }), { code: "BAD_REQUEST", message: "Name too long!" });
    failsWithoutChange(make({ fullName: "Bad*Name" }), { code: "BAD_REQUEST", message: "Invalid characters in name!" });
    failsWithoutChange(make({ fullName: "Bad@Name" }), { code: "BAD_REQUEST", message: "Invalid characters in name!" });
    failsWithoutChange(make({ bot: { type: 1, ownerId: 9999 } }), {
      code: "BAD_REQUEST",
      message: "Invalid bot owner",
    });
    s.setUserActive(w.bob.id, false);
    failsWithoutChange(make({ bot: { type: 1, ownerId: w.bob.id } }), {
      code: "BAD_REQUEST",
      message: "Invalid bot owner",
    });
  });

  it("the same email may exist in another realm", () => {
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    const u = s.createUser({ realmId: other.realm.id, email: "alice@test.dev", fullName: "Other Alice" });
    expect(s.findUserByEmail(other.realm.id, "alice@test.dev")?.id).toBe(u.id);
    expect(s.findUserByEmail(w.realm.id, "alice@test.dev")?.id).toBe(w.alice.id);
  });
});

describe("updateUser", () => {
  it("administrators change names, roles and profile data", () => {
    const text = s.createProfileField(admin.id, 1, { name: "Title" }).id;
    const users = s.createProfileField(admin.id, 6, { name: "Mentors" }).id;
    const u = s.updateUser(admin.id, w.alice.id, {
      fullName: "Alicia",
      role: ROLE.MODERATOR,
      profileData: [
        { id: text, value: "x" },
        { id: users, value: [admin.id] },
      ],
    });
    expect(u).toMatchObject({
      fullName: "Alicia",
      role: ROLE.MODERATOR,
      profileData: { [text]: "x", [users]: [admin.id] },
    });
    expect(s.getUser(w.alice.id)).toEqual(u);
    const cleared = s.updateUser(admin.id, w.alice.id, {
      profileData: [
        { id: text, value: null },
        { id: users, value: "" },
      ],
    });
    expect(cleared.profileData).toEqual({});
    expect(t.reopen().getUser(w.alice.id)).toMatchObject({ fullName: "Alicia", role: ROLE.MODERATOR, profileData: {} });
  });

  it("errors (nothing changed)", () => {
    failsWithoutChange(() => s.updateUser(w.alice.id, w.bob.id, { fullName: "B" }), {
      code: "BAD_REQUEST",
      message: "Insufficient permission",
    });
    failsWithoutChange(() => s.updateUser(admin.id, 9999, { fullName: "B" }), {
      code: "BAD_REQUEST",
      message: "No such user",
    });
    failsWithoutChange(() => s.updateUser(9999, w.bob.id, { fullName: "B" }), {
      code: "BAD_REQUEST",
      message: "Invalid user ID 9999",
    });
    failsWithoutChange(() => s.updateUser(admin.id, w.bob.id, { role: ROLE.OWNER }), {
      code: "UNAUTHORIZED_PRINCIPAL",
      message: "Must be an organization owner",
    });
    failsWithoutChange(() => s.updateUser(admin.id, w.owner.id, { role: ROLE.MEMBER }), {
      code: "UNAUTHORIZED_PRINCIPAL",
      message: "Must be an organization owner",
    });
    failsWithoutChange(() => s.updateUser(w.owner.id, w.owner.id, { role: ROLE.MEMBER }), {
      code: "BAD_REQUEST",
      message: "The owner permission cannot be removed from the only organization owner.",
    });
    failsWithoutChange(() => s.updateUser(admin.id, w.bob.id, { role: 1 as 100 }), {
      code: "BAD_REQUEST",
      message: "Invalid role",
    });
    failsWithoutChange(() => s.updateUser(admin.id, w.bob.id, { fullName: "" }), {
      code: "BAD_REQUEST",
      message: "Name too short!",
    });
  });

  it("a bot owner is not counted as the last owner: it can be demoted while one human owner remains", () => {
    const bot = s.createUser({
      realmId: w.realm.id,
      email: "ownerbot@test.dev",
      fullName: "Owner Bot",
      role: ROLE.OWNER,
      bot: { type: 1, ownerId: w.owner.id },
    });
    expect(s.updateUser(w.owner.id, bot.id, { role: ROLE.MEMBER }).role).toBe(ROLE.MEMBER);
    failsWithoutChange(() => s.updateUser(w.owner.id, w.owner.id, { role: ROLE.MEMBER }), {
      code: "BAD_REQUEST",
      message: "The owner permission cannot be removed from the only organization owner.",
    });
  });

  it("a second owner makes demotion possible", () => {
    s.updateUser(w.owner.id, admin.id, { role: ROLE.OWNER });
    expect(s.updateUser(admin.id, w.owner.id, { role: ROLE.MEMBER }).role).toBe(ROLE.MEMBER);
  });
});

describe("setUserActive", () => {
  it("deactivation closes receive intervals; messages sent meanwhile are never received", () => {
    const m1 = send("t");
    const openFrom = intervals(w.alice, w.general.id)![0]!.from;
    s.setUserActive(w.alice.id, false);
    const closedAt = internals(s).counters.nextMessageId;
    expect(closedAt).toBe(m1 + 1);
    expect(intervals(w.alice, w.general.id)).toEqual([{ from: openFrom, to: closedAt }]);
    expect(intervals(w.alice, w.secret.id)).toEqual([
      { from: intervals(w.alice, w.secret.id)![0]!.from, to: closedAt },
    ]);
    expect(s.getUser(w.alice.id).isActive).toBe(false);
    const during = send("t");
    s.setUserActive(w.alice.id, true);
    const reopenedAt = internals(s).counters.nextMessageId;
    expect(intervals(w.alice, w.general.id)).toEqual([
      { from: openFrom, to: closedAt },
      { from: reopenedAt, to: null },
    ]);
    const after = send("t");
    expect(newest(w.alice)).toEqual([m1, after]);
    expect(s.getMessage(w.alice.id, during).flags).toEqual(["read", "historical"]);
    expect(s.unreadSummary(w.alice.id).streams).toEqual([
      { streamId: w.general.id, topic: "t", unreadMessageIds: [m1, after] },
    ]);
    // Persisted.
    const reopened = t.reopen();
    expect(internals(reopened).subsByUser.get(w.alice.id)!.get(w.general.id)!.intervals).toEqual([
      { from: openFrom, to: closedAt },
      { from: reopenedAt, to: null },
    ]);
    s = reopened;
    expect(newest(w.alice)).toEqual([m1, after]);
  });

  it("protected-history messages sent while deactivated stay inaccessible", () => {
    s.setUserActive(w.alice.id, false);
    const during = send("s", w.owner.id, "secret");
    s.setUserActive(w.alice.id, true);
    expect(() => s.getMessage(w.alice.id, during)).toThrow("Invalid message(s)");
  });

  it("inactive subscriptions are left alone", () => {
    s.unsubscribe(w.alice.id, ["general"]);
    const before = intervals(w.alice, w.general.id);
    s.setUserActive(w.alice.id, false);
    s.setUserActive(w.alice.id, true);
    expect(intervals(w.alice, w.general.id)).toEqual(before);
    expect(internals(s).subsByUser.get(w.alice.id)!.get(w.general.id)!.active).toBe(false);
  });

  it("no-ops write nothing", () => {
    const before = fingerprint(s);
    expect(s.setUserActive(w.alice.id, true)).toBe(s.getUser(w.alice.id));
    expect(fingerprint(s)).toBe(before);
  });

  it("a deactivated user is refused by queries and sends", () => {
    s.setUserActive(w.bob.id, false);
    failsWithoutChange(() => s.getMessages(w.bob.id, { anchor: "newest", numBefore: 1, numAfter: 0 }), {
      code: "NOT_FOUND",
      message: "Account is deactivated",
    });
    failsWithoutChange(() => s.unreadSummary(w.bob.id), { code: "NOT_FOUND", message: "Account is deactivated" });
    failsWithoutChange(() => send("t", w.bob.id), { code: "BAD_REQUEST", message: "Account is deactivated" });
  });

  it("errors (nothing changed)", () => {
    failsWithoutChange(() => s.setUserActive(w.owner.id, false), {
      code: "BAD_REQUEST",
      message: "Cannot deactivate the only organization owner",
    });
    failsWithoutChange(() => s.setUserActive(9999, false), { code: "BAD_REQUEST", message: "Invalid user ID 9999" });
  });

  it("verify stays clean across deactivation and reactivation", () => {
    send("t");
    s.setUserActive(w.bob.id, false);
    send("t");
    s.setUserActive(w.bob.id, true);
    send("t");
    expect(s.verify()).toMatchObject({ differences: [], problems: [] });
  });
});
