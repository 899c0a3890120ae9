import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  canAccessChannelHistory,
  canAccessMessage,
  canSeeChannel,
  canSendToChannel,
  isAllowedBy,
  isGroupMember,
  membersOf,
  SYSTEM_GROUPS,
} from "../../src/engine/access.js";
import { ROLE, type Channel, type Message, type Store, type User } from "../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";
import { internals } from "../../src/engine/internal.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let admin: User;
let mod: User;

beforeEach(() => {
  t = tempStore();
  s = t.store;
  w = seedRealm(s);
  admin = s.createUser({
    realmId: w.realm.id,
    email: "admin@test.dev",
    fullName: "Ada Admin",
    role: ROLE.ADMINISTRATOR,
  });
  mod = s.createUser({ realmId: w.realm.id, email: "mod@test.dev", fullName: "Mo Mod", role: ROLE.MODERATOR });
});
afterEach(() => t.cleanup());

const u = (user: User) => s.getUser(user.id);
const channel = (name: string): Channel =>
  internals(s).channels.get(internals(s).channelByName.get(`${w.realm.id}:${name.toUpperCase()}`)!)!;
const message = (id: number) => internals(s).tables.messages.get(id) as Message;

describe("system groups by role", () => {
  const expected: Record<string, number[]> = {
    "role:internet": [100, 200, 300, 400, 600],
    "role:everyone": [100, 200, 300, 400, 600],
    "role:members": [100, 200, 300, 400],
    "role:fullmembers": [100, 200, 300, 400],
    "role:moderators": [100, 200, 300],
    "role:administrators": [100, 200],
    "role:owners": [100],
    "role:nobody": [],
  };
  it("every realm has the eight system groups", () => {
    expect(SYSTEM_GROUPS.map((g) => g.name)).toEqual(Object.keys(expected));
  });
  for (const [name, roles] of Object.entries(expected)) {
    it(`${name} contains roles ${roles.join(",") || "none"}`, () => {
      const id = s.systemGroupId(w.realm.id, name);
      const everyone = [w.owner, admin, mod, w.alice, w.guest];
      expect(everyone.filter((user) => isGroupMember(internals(s), id, u(user))).map((user) => user.role)).toEqual(
        roles,
      );
      expect(membersOf(internals(s), w.realm.id, id).sort((a, b) => a - b)).toEqual(
        [w.owner, admin, mod, w.alice, w.bob, w.guest]
          .filter((user) => roles.includes(user.role))
          .map((user) => user.id)
          .sort((a, b) => a - b),
      );
    });
  }
  it("deactivated users belong to no group", () => {
    s.setUserActive(w.alice.id, false);
    expect(isGroupMember(internals(s), s.systemGroupId(w.realm.id, "role:everyone"), u(w.alice))).toBe(false);
  });
  it("a system group of another realm does not contain this realm's users", () => {
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    expect(isGroupMember(internals(s), s.systemGroupId(other.realm.id, "role:everyone"), u(w.owner))).toBe(false);
    expect(s.systemGroupId(other.realm.id, "role:everyone")).not.toBe(s.systemGroupId(w.realm.id, "role:everyone"));
  });
  it("an unknown system group name is an error", () => {
    expect(() => s.systemGroupId(w.realm.id, "role:bogus")).toThrow(
      `Realm ${w.realm.id} has no system group role:bogus`,
    );
  });
});

describe("user groups with subgroups", () => {
  it("membership follows subgroups recursively", () => {
    const a = s.createGroup(w.owner.id, { name: "A", members: [w.alice.id] });
    const b = s.createGroup(w.owner.id, { name: "B", members: [w.bob.id], subgroups: [a.id] });
    const c = s.createGroup(w.owner.id, { name: "C", subgroups: [b.id] });
    expect(isGroupMember(internals(s), c.id, u(w.alice))).toBe(true);
    expect(isGroupMember(internals(s), c.id, u(w.bob))).toBe(true);
    expect(isGroupMember(internals(s), c.id, u(w.owner))).toBe(false);
    expect(isGroupMember(internals(s), a.id, u(w.bob))).toBe(false);
    const d = s.createGroup(w.owner.id, { name: "D", subgroups: [s.systemGroupId(w.realm.id, "role:administrators")] });
    expect(isGroupMember(internals(s), d.id, u(admin))).toBe(true);
    expect(isGroupMember(internals(s), d.id, u(mod))).toBe(false);
  });

  it("cycles terminate (and are refused when created through the API)", () => {
    const a = s.createGroup(w.owner.id, { name: "A", members: [w.alice.id] });
    const b = s.createGroup(w.owner.id, { name: "B", subgroups: [a.id] });
    const c = s.createGroup(w.owner.id, { name: "C", subgroups: [b.id] });
    expect(() => s.updateGroupSubgroups(w.owner.id, a.id, [c.id], [])).toThrow(
      `User group ${a.id} is already a subgroup of one of the passed subgroups.`,
    );
    expect(() => s.updateGroupSubgroups(w.owner.id, a.id, [a.id], [])).toThrow(
      `User group ${a.id} is already a subgroup of one of the passed subgroups.`,
    );
    // Force a cycle A -> C -> B -> A in memory: recursion must still terminate.
    internals(s).groups.set(a.id, { ...internals(s).groups.get(a.id)!, subgroups: [c.id] });
    for (const g of [a, b, c]) {
      expect(isGroupMember(internals(s), g.id, u(w.alice))).toBe(true);
      expect(isGroupMember(internals(s), g.id, u(w.bob))).toBe(false);
    }
    expect(isAllowedBy(internals(s), { directMembers: [], directSubgroups: [a.id, c.id] }, u(w.bob))).toBe(false);
    expect(membersOf(internals(s), w.realm.id, c.id)).toEqual([w.alice.id]);
  });

  it("deactivated groups and groups of another realm contain nobody", () => {
    const a = s.createGroup(w.owner.id, { name: "A", members: [w.alice.id] });
    const b = s.createGroup(w.owner.id, { name: "B", subgroups: [a.id] });
    internals(s).groups.set(a.id, { ...internals(s).groups.get(a.id)!, deactivated: true });
    expect(isGroupMember(internals(s), a.id, u(w.alice))).toBe(false);
    expect(isGroupMember(internals(s), b.id, u(w.alice))).toBe(false);
    expect(isGroupMember(internals(s), 99999, u(w.alice))).toBe(false);
  });
});

describe("isAllowedBy: group-setting values", () => {
  it("a group ID or an anonymous group of members and subgroups", () => {
    const a = s.createGroup(w.owner.id, { name: "A", members: [w.alice.id] });
    const value = { directMembers: [w.bob.id], directSubgroups: [a.id, s.systemGroupId(w.realm.id, "role:owners")] };
    expect(isAllowedBy(internals(s), value, u(w.bob))).toBe(true);
    expect(isAllowedBy(internals(s), value, u(w.alice))).toBe(true);
    expect(isAllowedBy(internals(s), value, u(w.owner))).toBe(true);
    expect(isAllowedBy(internals(s), value, u(admin))).toBe(false);
    expect(isAllowedBy(internals(s), a.id, u(w.alice))).toBe(true);
    expect(isAllowedBy(internals(s), { directMembers: [], directSubgroups: [] }, u(w.owner))).toBe(false);
    expect(membersOf(internals(s), w.realm.id, value).sort((x, y) => x - y)).toEqual(
      [w.owner.id, w.alice.id, w.bob.id].sort((x, y) => x - y),
    );
  });
  it("a deactivated direct member is not allowed", () => {
    s.setUserActive(w.bob.id, false);
    expect(isAllowedBy(internals(s), { directMembers: [w.bob.id], directSubgroups: [] }, u(w.bob))).toBe(false);
  });
});

describe("channel history access", () => {
  let shared: Channel;
  let web: Channel;
  beforeEach(() => {
    s.subscribe(w.owner.id, {
      channels: [{ name: "shared" }],
      principals: [w.owner.id, w.alice.id],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
    });
    internals(s).realms.get(w.realm.id)!.enableSpectatorAccess = true;
    s.subscribe(w.owner.id, { channels: [{ name: "web" }], newChannel: { isWebPublic: true } });
    shared = channel("shared");
    web = channel("web");
  });

  it("public channels: every non-guest; guests only when subscribed", () => {
    for (const user of [w.owner, admin, w.alice, w.bob])
      expect(canAccessChannelHistory(internals(s), u(user), w.general)).toBe(true);
    expect(canAccessChannelHistory(internals(s), u(admin), w.general)).toBe(true); // not subscribed
    expect(canAccessChannelHistory(internals(s), u(w.guest), w.general)).toBe(false);
    s.subscribe(w.owner.id, { channels: [{ name: "general" }], principals: [w.guest.id] });
    expect(canAccessChannelHistory(internals(s), u(w.guest), w.general)).toBe(true);
  });

  it("private channels with shared history: subscribers only", () => {
    expect(canAccessChannelHistory(internals(s), u(w.alice), shared)).toBe(true);
    expect(canAccessChannelHistory(internals(s), u(w.bob), shared)).toBe(false);
    expect(canAccessChannelHistory(internals(s), u(admin), shared)).toBe(false);
  });

  it("private channels with protected history: nobody, not even subscribers", () => {
    expect(w.secret.historyPublicToSubscribers).toBe(false);
    expect(canAccessChannelHistory(internals(s), u(w.alice), w.secret)).toBe(false);
    expect(canAccessChannelHistory(internals(s), u(w.owner), w.secret)).toBe(false);
  });

  it("web-public channels: everyone, guests included", () => {
    for (const user of [w.owner, w.alice, w.guest])
      expect(canAccessChannelHistory(internals(s), u(user), web)).toBe(true);
  });

  it("channels of another realm: nobody", () => {
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    expect(canAccessChannelHistory(internals(s), other.owner, w.general)).toBe(false);
    expect(canSeeChannel(internals(s), other.owner, w.general)).toBe(false);
  });

  it("canSeeChannel: administrators see private channels' metadata, guests only what they may read", () => {
    expect(canSeeChannel(internals(s), u(admin), shared)).toBe(true);
    expect(canSeeChannel(internals(s), u(w.bob), shared)).toBe(false);
    expect(canSeeChannel(internals(s), u(w.alice), w.secret)).toBe(true);
    expect(canSeeChannel(internals(s), u(w.guest), w.general)).toBe(false);
    expect(canSeeChannel(internals(s), u(w.guest), web)).toBe(true);
  });
});

describe("canSendToChannel", () => {
  it("public channels: members yes, unsubscribed guests no, subscribed guests yes", () => {
    expect(canSendToChannel(internals(s), u(w.bob), w.general)).toBe(true);
    expect(canSendToChannel(internals(s), u(admin), w.general)).toBe(true);
    expect(canSendToChannel(internals(s), u(w.guest), w.general)).toBe(false);
    s.subscribe(w.owner.id, { channels: [{ name: "general" }], principals: [w.guest.id] });
    expect(canSendToChannel(internals(s), u(w.guest), w.general)).toBe(true);
  });

  it("private channels: subscribers and bots owned by subscribers", () => {
    expect(canSendToChannel(internals(s), u(w.alice), w.secret)).toBe(true);
    expect(canSendToChannel(internals(s), u(w.bob), w.secret)).toBe(false);
    expect(canSendToChannel(internals(s), u(admin), w.secret)).toBe(false);
    const aliceBot = s.createUser({
      realmId: w.realm.id,
      email: "abot@test.dev",
      fullName: "Alice Bot",
      bot: { type: 1, ownerId: w.alice.id },
    });
    const bobBot = s.createUser({
      realmId: w.realm.id,
      email: "bbot@test.dev",
      fullName: "Bob Bot",
      bot: { type: 1, ownerId: w.bob.id },
    });
    const orphan = s.createUser({
      realmId: w.realm.id,
      email: "obot@test.dev",
      fullName: "Orphan Bot",
      bot: { type: 1, ownerId: null },
    });
    expect(canSendToChannel(internals(s), u(aliceBot), w.secret)).toBe(true);
    expect(canSendToChannel(internals(s), u(bobBot), w.secret)).toBe(false);
    expect(canSendToChannel(internals(s), u(orphan), w.secret)).toBe(false);
    // The owner leaving takes the bot's right away.
    s.unsubscribe(w.alice.id, ["secret"]);
    expect(canSendToChannel(internals(s), u(aliceBot), w.secret)).toBe(false);
  });

  it("can_send_message_group restricts everyone, subscribers included", () => {
    s.subscribe(w.owner.id, {
      channels: [{ name: "announce" }],
      principals: [w.owner.id, w.alice.id, admin.id],
      newChannel: { permissions: { canSendMessageGroup: s.systemGroupId(w.realm.id, "role:administrators") } },
    });
    const announce = channel("announce");
    expect(canSendToChannel(internals(s), u(w.alice), announce)).toBe(false);
    expect(canSendToChannel(internals(s), u(admin), announce)).toBe(true);
    expect(canSendToChannel(internals(s), u(w.owner), announce)).toBe(true);
    expect(() =>
      s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "announce", topic: "x" }, content: "hi" }),
    ).toThrow("You do not have permission to post in this channel.");
    // A bot is judged by its owner's membership when its own fails (Zulip's fallback).
    const adminBot = s.createUser({
      realmId: w.realm.id,
      email: "adminbot@test.dev",
      fullName: "Admin Bot",
      bot: { type: 1, ownerId: admin.id },
    });
    const aliceBot2 = s.createUser({
      realmId: w.realm.id,
      email: "alicebot2@test.dev",
      fullName: "Alice Bot Two",
      bot: { type: 1, ownerId: w.alice.id },
    });
    expect(canSendToChannel(internals(s), u(adminBot), announce)).toBe(true);
    expect(canSendToChannel(internals(s), u(aliceBot2), announce)).toBe(false);
  });

  it("archived channels, deactivated users and other realms: no", () => {
    expect(canSendToChannel(internals(s), u(w.bob), { ...w.general, isArchived: true })).toBe(false);
    s.setUserActive(w.bob.id, false);
    expect(canSendToChannel(internals(s), u(w.bob), w.general)).toBe(false);
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    expect(canSendToChannel(internals(s), other.owner, w.general)).toBe(false);
  });
});

describe("canAccessMessage", () => {
  it("public channel messages: anyone with history access, or who received it", () => {
    const m = message(
      s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "t" }, content: "x" }).id,
    );
    expect(canAccessMessage(internals(s), u(w.bob), m)).toBe(true);
    expect(canAccessMessage(internals(s), u(admin), m)).toBe(true);
    expect(canAccessMessage(internals(s), u(w.guest), m)).toBe(false);
  });

  it("protected history: only messages received while subscribed", () => {
    const before = message(
      s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "secret", topic: "t" }, content: "old" })
        .id,
    );
    s.subscribe(w.owner.id, { channels: [{ name: "secret" }], principals: [w.bob.id] });
    const after = message(
      s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "secret", topic: "t" }, content: "new" })
        .id,
    );
    expect(canAccessMessage(internals(s), u(w.bob), before)).toBe(false);
    expect(canAccessMessage(internals(s), u(w.bob), after)).toBe(true);
    expect(canAccessMessage(internals(s), u(w.alice), before)).toBe(true);
    expect(canAccessMessage(internals(s), u(admin), after)).toBe(false);
    // Leaving keeps the received message accessible (the row stays).
    s.unsubscribe(w.bob.id, ["secret"]);
    expect(canAccessMessage(internals(s), u(w.bob), after)).toBe(true);
  });

  it("direct messages: participants only", () => {
    const m = message(
      s.sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "dm" }).id,
    );
    expect(canAccessMessage(internals(s), u(w.alice), m)).toBe(true);
    expect(canAccessMessage(internals(s), u(w.bob), m)).toBe(true);
    expect(canAccessMessage(internals(s), u(w.owner), m)).toBe(false);
    expect(canAccessMessage(internals(s), u(admin), m)).toBe(false);
  });
});
