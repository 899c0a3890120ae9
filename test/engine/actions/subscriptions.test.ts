import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROLE, type EngineError, type Store, type User } from "../../../src/engine/index.js";
import { expectFailsUnchanged } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { internals } from "../../../src/engine/internal.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let admin: User;
let carol: User;

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
  carol = s.createUser({ realmId: w.realm.id, email: "carol@test.dev", fullName: "Carol" });
});
afterEach(() => t.cleanup());

const failsWithoutChange = (fn: () => unknown, expected: { code: string; message: string; data?: unknown }) =>
  expectFailsUnchanged(s, fn, expected);
const sub = (user: User, channelId: number) => internals(s).subsByUser.get(user.id)?.get(channelId);
const channelId = (name: string) => internals(s).channelByName.get(`${w.realm.id}:${name.toUpperCase()}`)!;

describe("subscribe", () => {
  it("subscribes the actor to an existing public channel", () => {
    const r = s.subscribe(carol.id, { channels: [{ name: "general" }] });
    expect(r).toEqual({
      subscribed: new Map([[carol.id, ["general"]]]),
      alreadySubscribed: new Map(),
      unauthorized: [],
      createdChannelIds: [],
    });
    expect(sub(carol, w.general.id)).toMatchObject({
      active: true,
      isMuted: false,
      pinToTop: false,
      intervals: [{ from: internals(s).counters.nextMessageId, to: null }],
    });
    expect(internals(s).subscribers.get(w.general.id)?.has(carol.id)).toBe(true);
  });

  it("reports already-subscribed users and de-duplicates names case-insensitively", () => {
    const r = s.subscribe(w.alice.id, { channels: [{ name: "general" }, { name: "GENERAL" }, { name: " general " }] });
    expect(r.subscribed).toEqual(new Map());
    expect(r.alreadySubscribed).toEqual(new Map([[w.alice.id, ["general"]]]));
  });

  it("creates unknown channels with the requested settings", () => {
    const r = s.subscribe(w.alice.id, {
      channels: [{ name: "new-one", description: "  About  " }],
      principals: [w.alice.id, "BOB@test.dev"],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
    });
    expect(r.createdChannelIds).toEqual([channelId("new-one")]);
    expect(r.subscribed).toEqual(
      new Map([
        [w.alice.id, ["new-one"]],
        [w.bob.id, ["new-one"]],
      ]),
    );
    const c = s.getChannel(r.createdChannelIds[0]!)!;
    expect(c).toMatchObject({
      name: "new-one",
      description: "About",
      renderedDescription: "<p>About</p>",
      inviteOnly: true,
      historyPublicToSubscribers: true,
      creatorId: w.alice.id,
      isWebPublic: false,
      topicsPolicy: "inherit",
    });
    expect(c.canAdministerChannelGroup).toEqual({ directMembers: [w.alice.id], directSubgroups: [] });
  });

  it("accepts principals by ID and by email (trimmed, case-insensitive), de-duplicated", () => {
    const r = s.subscribe(w.owner.id, {
      channels: [{ name: "general" }],
      principals: [carol.id, " Carol@Test.dev ", admin.id],
    });
    expect(r.subscribed).toEqual(
      new Map([
        [carol.id, ["general"]],
        [admin.id, ["general"]],
      ]),
    );
  });

  it("rejoining appends a new receive interval", () => {
    s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "t" }, content: "1" });
    const first = sub(w.bob, w.general.id)!.intervals[0]!;
    s.unsubscribe(w.bob.id, ["general"]);
    const leftAt = internals(s).counters.nextMessageId;
    s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "t" }, content: "2" });
    s.subscribe(w.bob.id, { channels: [{ name: "general" }] });
    expect(sub(w.bob, w.general.id)!.intervals).toEqual([
      { from: first.from, to: leftAt },
      { from: leftAt + 1, to: null },
    ]);
  });

  it("members may subscribe others to public channels and to private channels they are in", () => {
    expect(s.subscribe(w.bob.id, { channels: [{ name: "general" }], principals: [carol.id] }).subscribed).toEqual(
      new Map([[carol.id, ["general"]]]),
    );
    expect(s.subscribe(w.alice.id, { channels: [{ name: "secret" }], principals: [carol.id] }).subscribed).toEqual(
      new Map([[carol.id, ["secret"]]]),
    );
  });

  it("administrators need a private channel's content to subscribe anyone to it, themselves included (Zulip)", () => {
    failsWithoutChange(() => s.subscribe(admin.id, { channels: [{ name: "secret" }], principals: [carol.id] }), {
      code: "BAD_REQUEST",
      message: "Unable to access channel (secret).",
    });
    failsWithoutChange(() => s.subscribe(admin.id, { channels: [{ name: "secret" }] }), {
      code: "BAD_REQUEST",
      message: "Unable to access channel (secret).",
    });
  });

  describe("errors (nothing changed)", () => {
    it("no channels", () => {
      failsWithoutChange(() => s.subscribe(w.alice.id, { channels: [] }), {
        code: "BAD_REQUEST",
        message: "Nothing to do. Specify at least one channel.",
      });
    });
    it("bad channel names", () => {
      failsWithoutChange(() => s.subscribe(w.alice.id, { channels: [{ name: "  " }] }), {
        code: "BAD_REQUEST",
        message: "Channel name can't be empty.",
      });
      failsWithoutChange(() => s.subscribe(w.alice.id, { channels: [{ name: "x".repeat(61) }] }), {
        code: "BAD_REQUEST",
        message: "Channel name too long (limit: 60 characters).",
      });
      failsWithoutChange(() => s.subscribe(w.alice.id, { channels: [{ name: "ab\u0001c" }] }), {
        code: "BAD_REQUEST",
        message: "Invalid character in channel name, at position 3.",
      });
    });
    it("unknown, deactivated and foreign principals: No such user", () => {
      const other = s.createRealm({
        subdomain: "other",
        name: "Other",
        owner: { email: "x@other.dev", fullName: "Xavier" },
      });
      s.setUserActive(carol.id, false);
      for (const principal of [9999, "ghost@test.dev", carol.id, "carol@test.dev", other.owner.id, "x@other.dev"]) {
        failsWithoutChange(
          () =>
            s.subscribe(w.owner.id, {
              channels: [{ name: "general" }, { name: "brand-new" }],
              principals: [w.bob.id, principal],
            }),
          { code: "BAD_REQUEST", message: "No such user" },
        );
      }
    });
    it("private channel, authorization errors fatal (the default)", () => {
      failsWithoutChange(
        () => s.subscribe(w.bob.id, { channels: [{ name: "general" }, { name: "secret" }, { name: "new" }] }),
        { code: "BAD_REQUEST", message: "Unable to access channel (secret)." },
      );
      failsWithoutChange(
        () =>
          s.subscribe(w.bob.id, {
            channels: [{ name: "secret" }],
            principals: [carol.id],
            authorizationErrorsFatal: true,
          }),
        { code: "BAD_REQUEST", message: "Unable to access channel (secret)." },
      );
    });
    it("guests cannot join public channels, create channels or add others", () => {
      failsWithoutChange(() => s.subscribe(w.guest.id, { channels: [{ name: "general" }] }), {
        code: "BAD_REQUEST",
        message: "Unable to access channel (general).",
      });
      // The caller's spelling is echoed, never the stored name of a channel they cannot see.
      failsWithoutChange(() => s.subscribe(w.bob.id, { channels: [{ name: " SeCreT " }] }), {
        code: "BAD_REQUEST",
        message: "Unable to access channel (SeCreT).",
      });
      expect(
        s.subscribe(w.bob.id, { channels: [{ name: "SECRET" }], authorizationErrorsFatal: false }).unauthorized,
      ).toEqual(["SECRET"]);
      failsWithoutChange(() => s.subscribe(w.guest.id, { channels: [{ name: "guest-made" }] }), {
        code: "BAD_REQUEST",
        message: "Unable to access channel (guest-made).",
      });
      failsWithoutChange(
        () => s.subscribe(w.guest.id, { channels: [{ name: "guest-made" }], principals: [carol.id] }),
        { code: "BAD_REQUEST", message: "Unable to access channel (guest-made)." },
      );
    });
    it("a guest cannot tell a private channel from a free name (same refusal, fatal or not, with or without principals)", () => {
      const answer = (name: string, extra: { principals?: number[]; authorizationErrorsFatal?: boolean }) => {
        try {
          const r = s.subscribe(w.guest.id, { channels: [{ name }], ...extra });
          return {
            ok: r.unauthorized.map((n) => n.replace(name, "NAME")),
            subscribed: r.subscribed.size,
            created: r.createdChannelIds.length,
          };
        } catch (e) {
          const err = e as EngineError;
          return { code: err.code, message: err.message.replace(name, "NAME") };
        }
      };
      for (const extra of [
        {},
        { authorizationErrorsFatal: false },
        { principals: [carol.id] },
        { principals: [carol.id], authorizationErrorsFatal: false },
      ]) {
        expect(answer("secret", extra)).toEqual(answer("no-such-channel", extra));
      }
      expect(answer("secret", {})).toEqual({ code: "BAD_REQUEST", message: "Unable to access channel (NAME)." });
      expect(answer("secret", { authorizationErrorsFatal: false })).toEqual({
        ok: ["NAME"],
        subscribed: 0,
        created: 0,
      });
      expect(s.getChannel(channelId("no-such-channel"))).toBeUndefined();
    });
    it("guests subscribed to a channel still cannot add others to it", () => {
      s.subscribe(w.owner.id, { channels: [{ name: "general" }], principals: [w.guest.id] });
      failsWithoutChange(() => s.subscribe(w.guest.id, { channels: [{ name: "general" }], principals: [carol.id] }), {
        code: "BAD_REQUEST",
        message: "Insufficient permission",
      });
    });
    it("web-public channels need spectator access and a moderator", () => {
      failsWithoutChange(
        () => s.subscribe(w.owner.id, { channels: [{ name: "web" }], newChannel: { isWebPublic: true } }),
        { code: "BAD_REQUEST", message: "Web-public channels are not enabled." },
      );
      internals(s).realms.get(w.realm.id)!.enableSpectatorAccess = true;
      failsWithoutChange(
        () => s.subscribe(w.alice.id, { channels: [{ name: "web" }], newChannel: { isWebPublic: true } }),
        { code: "BAD_REQUEST", message: "Insufficient permission" },
      );
    });
    it("public channels always share history (Zulip forces it), private ones default to protected", () => {
      const pub = s.subscribe(w.alice.id, {
        channels: [{ name: "pub" }],
        newChannel: { historyPublicToSubscribers: false },
      }).createdChannelIds[0]!;
      expect(s.getChannel(pub)!.historyPublicToSubscribers).toBe(true);
      const priv = s.subscribe(w.alice.id, { channels: [{ name: "priv-default" }], newChannel: { inviteOnly: true } })
        .createdChannelIds[0]!;
      expect(s.getChannel(priv)!.historyPublicToSubscribers).toBe(false);
    });
  });

  it("authorization errors not fatal: unauthorized channels are reported and skipped", () => {
    const r = s.subscribe(w.bob.id, {
      channels: [{ name: "secret" }, { name: "general" }, { name: "bobs" }],
      authorizationErrorsFatal: false,
    });
    expect(r.unauthorized).toEqual(["secret"]);
    expect(r.subscribed).toEqual(new Map([[w.bob.id, ["bobs"]]]));
    expect(r.alreadySubscribed).toEqual(new Map([[w.bob.id, ["general"]]]));
    expect(r.createdChannelIds).toEqual([channelId("bobs")]);
    expect(sub(w.bob, w.secret.id)).toBeUndefined();
    const guest = s.subscribe(w.guest.id, { channels: [{ name: "general" }], authorizationErrorsFatal: false });
    expect(guest).toEqual({
      subscribed: new Map(),
      alreadySubscribed: new Map(),
      unauthorized: ["general"],
      createdChannelIds: [],
    });
  });
});

describe("unsubscribe", () => {
  it("removes the actor and reports channels they were not in", () => {
    s.subscribe(w.alice.id, { channels: [{ name: "other" }] });
    s.unsubscribe(w.alice.id, ["other"]);
    const to = internals(s).counters.nextMessageId;
    expect(s.unsubscribe(w.alice.id, ["general", "other", "GENERAL"])).toEqual({
      removed: ["general"],
      notRemoved: ["other"],
    });
    const record = sub(w.alice, w.general.id)!;
    expect(record.active).toBe(false);
    expect(record.intervals[record.intervals.length - 1]!.to).toBe(to);
    expect(internals(s).subscribers.get(w.general.id)?.has(w.alice.id)).toBe(false);
  });

  it("administrators, channel administrators and bot owners may remove others", () => {
    expect(s.unsubscribe(admin.id, ["general"], [w.bob.id])).toEqual({ removed: ["general"], notRemoved: [] });
    s.subscribe(w.alice.id, { channels: [{ name: "alices" }], principals: [w.alice.id, carol.id] });
    expect(s.unsubscribe(w.alice.id, ["alices"], ["carol@test.dev"])).toEqual({ removed: ["alices"], notRemoved: [] });
    const bot = s.createUser({
      realmId: w.realm.id,
      email: "bot@test.dev",
      fullName: "Bobs Bot",
      bot: { type: 1, ownerId: w.bob.id },
    });
    s.subscribe(w.owner.id, { channels: [{ name: "general" }], principals: [bot.id] });
    expect(s.unsubscribe(w.bob.id, ["general"], [bot.id])).toEqual({ removed: ["general"], notRemoved: [] });
  });

  describe("errors (nothing changed)", () => {
    it("no channels", () => {
      failsWithoutChange(() => s.unsubscribe(w.alice.id, []), {
        code: "BAD_REQUEST",
        message: "Nothing to do. Specify at least one channel.",
      });
    });
    it("unknown channels and private channels the actor cannot see", () => {
      failsWithoutChange(() => s.unsubscribe(w.alice.id, ["general", "nope"]), {
        code: "STREAM_DOES_NOT_EXIST",
        message: "Channel 'nope' does not exist",
        data: { stream: "nope" },
      });
      failsWithoutChange(() => s.unsubscribe(w.bob.id, ["secret"]), {
        code: "STREAM_DOES_NOT_EXIST",
        message: "Channel 'secret' does not exist",
        data: { stream: "secret" },
      });
    });
    it("members may not remove other members", () => {
      failsWithoutChange(() => s.unsubscribe(w.alice.id, ["general"], [w.alice.id, w.bob.id]), {
        code: "BAD_REQUEST",
        message: "Insufficient permission",
      });
      failsWithoutChange(() => s.unsubscribe(w.alice.id, ["general"], ["bob@test.dev"]), {
        code: "BAD_REQUEST",
        message: "Insufficient permission",
      });
    });
    it("unknown principals", () => {
      failsWithoutChange(() => s.unsubscribe(w.owner.id, ["general"], [w.bob.id, 9999]), {
        code: "BAD_REQUEST",
        message: "No such user",
      });
      failsWithoutChange(() => s.unsubscribe(w.owner.id, ["general"], ["ghost@test.dev"]), {
        code: "BAD_REQUEST",
        message: "No such user",
      });
    });
  });
});

describe("setChannelMuted", () => {
  it("mutes a subscribed channel and refuses others", () => {
    s.setChannelMuted(w.alice.id, w.general.id, true);
    expect(sub(w.alice, w.general.id)!.isMuted).toBe(true);
    expect(internals(t.reopen()).subsByUser.get(w.alice.id)!.get(w.general.id)!.isMuted).toBe(true);
    s = t.store;
    failsWithoutChange(() => s.setChannelMuted(carol.id, w.general.id, true), {
      code: "BAD_REQUEST",
      message: `Not subscribed to channel ID ${w.general.id}`,
    });
  });
});

describe("channels written before the newer group settings", () => {
  it("open with Zulip's defaults for can_move_messages_within_channel, can_resolve_topics and can_create_topic", () => {
    const {
      canMoveMessagesWithinChannelGroup: _a,
      canResolveTopicsGroup: _b,
      canCreateTopicGroup: _c,
      ...old
    } = w.general;
    internals(s).tables.channels.putSync(old.id, old);
    const reopened = t.reopen();
    const channel = reopened.getChannel(w.general.id)!;
    expect(channel.canCreateTopicGroup).toBeUndefined();
    const group = (name: string) => reopened.systemGroupId(w.realm.id, name);
    expect(reopened.channelGroupSettings(channel)).toMatchObject({
      canMoveMessagesWithinChannelGroup: group("role:nobody"),
      canResolveTopicsGroup: group("role:nobody"),
      canCreateTopicGroup: group("role:everyone"),
      canSendMessageGroup: w.general.canSendMessageGroup,
    });
  });
});

describe("channel creation messages", () => {
  it("are opt-in for embedders: without creationMessages no bot and no message", () => {
    s.subscribe(w.alice.id, { channels: [{ name: "quiet-one" }] });
    expect(s.findUserByEmail(w.realm.id, "notification-bot@zulip.com")).toBeUndefined();
    expect(s.getChannel(channelId("quiet-one"))!.firstMessageId).toBeNull();
    s.subscribe(w.alice.id, { channels: [{ name: "loud-one" }], creationMessages: { announce: false } });
    const bot = s.findUserByEmail(w.realm.id, "notification-bot@zulip.com")!;
    const first = s.getChannel(channelId("loud-one"))!.firstMessageId!;
    expect(s.getMessage(w.alice.id, first)).toMatchObject({
      message: { senderId: bot.id, topic: "channel events", client: "Internal" },
      flags: ["read"],
    });
  });
});
