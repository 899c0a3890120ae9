import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashPassword, ROLE, type EventBatch, type Store, type User } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { expectFailsUnchanged, fingerprint } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let admin: User;
let batches: EventBatch[];

const CHEAP = { N: 1024, r: 8, p: 1 } as const;

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
  batches = [];
  s.onEvents((batch) => batches.push(batch));
});
afterEach(() => t.cleanup());

const fails = (fn: () => unknown, code: string, message: string, data?: unknown) =>
  expectFailsUnchanged(s, fn, { code, message, ...(data === undefined ? {} : { data }) });
const bad = (fn: () => unknown, message: string) => fails(fn, "BAD_REQUEST", message);
const bot = (ownerId: number, name = "Helper", email = `${name.toLowerCase()}-bot@test.dev`) =>
  s.createUser({ realmId: w.realm.id, email, fullName: name, bot: { type: 1, ownerId } });
/** Every event since the last call, as [type/op, audience]. */
const events = () => {
  const out = batches.flatMap((b) =>
    b.deliveries.map(({ event, audience }) => ({
      kind: `${event.type}${"op" in event ? `/${String(event.op)}` : ""}`,
      event,
      to: [...audience].sort((a, b) => a - b),
    })),
  );
  batches = [];
  return out;
};

describe("createAccount (POST /users, the CLI)", () => {
  it("subscribes the new person to the realm's default channels, revokes invitations to the address, greets them", () => {
    s.subscribe(w.owner.id, {
      channels: [{ name: "lobby" }],
      principals: [w.owner.id],
      newChannel: { isDefault: true },
    });
    s.inviteUsers(
      w.owner.id,
      "newcomer@test.dev",
      {
        invitedAs: ROLE.MEMBER,
        channelIds: [],
        groupIds: [],
        includeRealmDefaultSubscriptions: true,
        notifyReferrerOnJoin: false,
        welcomeMessageCustomText: null,
        expiresInMinutes: null,
      },
      { realmUrl: "http://test", dailyLimit: 100 },
    );
    events();
    const user = s.createAccount({ realmId: w.realm.id, email: "newcomer@test.dev", fullName: "New Comer" });
    const lobby = internals(s).channelByName.get(`${w.realm.id}:LOBBY`)!;
    expect(s.subscriptionLists(user.id, false).subscribed.map((c) => c.channel.id)).toEqual([lobby]);
    expect(s.listInvites(w.owner.id)).toEqual([]);
    const kinds = events().map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(["realm_user/add", "subscription/add", "invites_changed"]));
    const dm = s.getMessages(user.id, {
      anchor: "newest",
      numBefore: 5,
      numAfter: 0,
      narrow: [{ operator: "is", operand: "dm" }],
    });
    expect(dm.messages.map((m) => m.message.content)).toEqual([expect.stringContaining("Welcome Bot")]);
  });
});

describe("POST /users: checkCreateUserByAdmin and createUserByAdmin", () => {
  const input = { email: "made@test.dev", fullName: "Made Up", password: "correct horse battery" };

  it("refuses non-administrators, administrators without can_create_users, and bad input, in Zulip's order", () => {
    fails(
      () => s.checkCreateUserByAdmin(w.alice.id, input),
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
    bad(() => s.checkCreateUserByAdmin(admin.id, input), "User not authorized to create users");
    s.setCanCreateUsers(admin.id, true);
    bad(() => s.checkCreateUserByAdmin(admin.id, { ...input, fullName: "x" }), "Name too short!");
    bad(() => s.checkCreateUserByAdmin(admin.id, { ...input, email: "not an address" }), "Bad name or username");
    bad(
      () => s.checkCreateUserByAdmin(admin.id, { ...input, email: "ALICE@test.dev" }),
      "Email 'ALICE@test.dev' already in use",
    );
    bad(() => s.checkCreateUserByAdmin(admin.id, { ...input, password: "password" }), "The password is too weak.");
    expect(s.checkCreateUserByAdmin(admin.id, { ...input, email: " made@test.dev " })).toEqual({
      email: "made@test.dev",
      fullName: "Made Up",
    });
  });

  it("creates the account with its password once hashed, judging the actor again", async () => {
    s.setCanCreateUsers(admin.id, true);
    const password = await hashPassword(input.password, CHEAP);
    s.setCanCreateUsers(admin.id, false);
    bad(() => s.createUserByAdmin(admin.id, { ...input, password }), "User not authorized to create users");
    s.setCanCreateUsers(admin.id, true);
    const user = s.createUserByAdmin(admin.id, { ...input, password });
    expect(user).toMatchObject({ email: "made@test.dev", fullName: "Made Up", role: ROLE.MEMBER, isActive: true });
    expect((await s.loginWithPassword(w.realm.id, "made@test.dev", input.password, CHEAP)).id).toBe(user.id);
  });
});

describe("deactivateUser (DELETE /users/{id})", () => {
  it("deactivates the person with their active bots, revokes their invitations, mails the comment", () => {
    const helper = bot(w.alice.id);
    const other = bot(w.bob.id, "Other");
    s.inviteUsers(
      w.alice.id,
      "friend@test.dev",
      {
        invitedAs: ROLE.MEMBER,
        channelIds: [],
        groupIds: [],
        includeRealmDefaultSubscriptions: true,
        notifyReferrerOnJoin: true,
        welcomeMessageCustomText: null,
        expiresInMinutes: null,
      },
      { realmUrl: "http://test", dailyLimit: 100 },
    );
    const mailsBefore = s.outboxMail().length;
    events();
    s.deactivateUser(admin.id, w.alice.id, { comment: "  Thanks for everything  ", realmUrl: "http://test" });
    expect(s.getUser(w.alice.id).isActive).toBe(false);
    expect(s.getUser(helper.id).isActive).toBe(false);
    expect(s.getUser(other.id).isActive).toBe(true);
    expect(s.listInvites(w.owner.id)).toEqual([]);
    const mails = s.outboxMail().slice(mailsBefore);
    expect(mails.map((m) => [m.to, m.subject])).toEqual([
      [["alice@test.dev"], "Your account on Test has been deactivated"],
    ]);
    expect(mails[0]!.text).toContain("Thanks for everything");
    const all = events();
    expect(all.filter((e) => e.kind === "realm_user/update").map((e) => e.event)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ userId: helper.id, changes: { isActive: false } }),
        expect.objectContaining({ userId: w.alice.id, changes: { isActive: false } }),
      ]),
    );
    // No realm_bot event for deactivation since feature level 474.
    expect(all.filter((e) => e.kind.startsWith("realm_bot"))).toEqual([]);
  });

  it("sends no mail without a comment, and one without a comment's text for an empty one", () => {
    const before = s.outboxMail().length;
    s.deactivateUser(admin.id, w.bob.id);
    expect(s.outboxMail().length).toBe(before);
    s.deactivateUser(admin.id, w.alice.id, { comment: "", realmUrl: "http://test" });
    expect(s.outboxMail().length).toBe(before + 1);
    expect(s.outboxMail()[before]!.text).not.toContain("They wrote");
  });

  it("refuses, changing nothing: unknown, bots, deactivated, non-administrators, owners by administrators, the last owner", () => {
    const helper = bot(w.alice.id);
    bad(() => s.deactivateUser(admin.id, 999_999), "No such user");
    bad(() => s.deactivateUser(admin.id, helper.id), "No such user");
    const other = s.createRealm({ subdomain: "o", name: "O", owner: { email: "o@o.dev", fullName: "Oscar" } });
    bad(() => s.deactivateUser(admin.id, other.owner.id), "No such user");
    bad(() => s.deactivateUser(w.alice.id, w.bob.id), "Insufficient permission");
    fails(() => s.deactivateUser(admin.id, w.owner.id), "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    bad(() => s.deactivateUser(w.owner.id, w.owner.id), "Cannot deactivate the only organization owner");
    s.setUserActive(w.bob.id, false);
    bad(() => s.deactivateUser(admin.id, w.bob.id), "User is deactivated");
    // A second owner can go; the first then cannot.
    s.updateUser(w.owner.id, admin.id, { role: ROLE.OWNER });
    s.deactivateUser(w.owner.id, admin.id);
    bad(() => s.deactivateUser(w.owner.id, w.owner.id), "Cannot deactivate the only organization owner");
  });
});

describe("deactivateOwnUser (DELETE /users/me)", () => {
  it("lets anyone go but the last owner and the last user", () => {
    s.deactivateOwnUser(w.guest.id);
    expect(s.getUser(w.guest.id).isActive).toBe(false);
    fails(
      () => s.deactivateOwnUser(w.owner.id),
      "CANNOT_DEACTIVATE_LAST_USER",
      "Cannot deactivate the only organization owner.",
      {
        is_last_owner: true,
        entity: "organization owner",
      },
    );
    const lonely = s.createRealm({ subdomain: "l", name: "L", owner: { email: "l@l.dev", fullName: "Lone" } });
    // System bots (the Welcome Bot) are not users of the organization.
    s.createAccount({ realmId: lonely.realm.id, email: "tmp@l.dev", fullName: "Temp" });
    s.deactivateOwnUser(s.findUserByEmail(lonely.realm.id, "tmp@l.dev")!.id);
    fails(
      () => s.deactivateOwnUser(lonely.owner.id),
      "CANNOT_DEACTIVATE_LAST_USER",
      "Cannot deactivate the only user.",
      {
        is_last_owner: false,
        entity: "user",
      },
    );
  });
});

describe("reactivateUser (POST /users/{id}/reactivate)", () => {
  it("administrators reactivate people; owners their bots; a bot of a deactivated owner passes to the actor", () => {
    const helper = bot(w.alice.id);
    s.deactivateUser(admin.id, w.alice.id);
    bad(() => s.reactivateUser(w.bob.id, w.alice.id), "Insufficient permission");
    s.reactivateUser(admin.id, helper.id);
    expect(s.getUser(helper.id)).toMatchObject({ isActive: true, botOwnerId: admin.id });
    s.reactivateUser(admin.id, w.alice.id);
    expect(s.getUser(w.alice.id).isActive).toBe(true);
    // A bot's owner may reactivate it.
    const own = bot(w.bob.id, "Bobs");
    s.deactivateBot(w.bob.id, own.id);
    s.reactivateUser(w.bob.id, own.id);
    expect(s.getUser(own.id)).toMatchObject({ isActive: true, botOwnerId: w.bob.id });
    // Reactivating an active user changes nothing.
    const before = fingerprint(s);
    s.reactivateUser(admin.id, w.alice.id);
    expect(fingerprint(s)).toBe(before);
  });

  it("refuses a bot whose name an active user now has, and a bot the actor may not create", () => {
    const helper = bot(w.alice.id, "Alice");
    s.deactivateBot(w.alice.id, helper.id);
    bad(
      () => s.reactivateUser(admin.id, helper.id),
      'There is already an active bot named "Alice" in this organization. To reactivate this bot, you must rename or deactivate the other one first.',
    );
    bad(() => s.reactivateUser(admin.id, 999_999), "No such user");
  });
});
