import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROLE, type CreateBotInput, type EventBatch, type Store, type User } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { expectFailsUnchanged } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let admin: User;
let batches: EventBatch[];

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

const bad = (fn: () => unknown, message: string) => expectFailsUnchanged(s, fn, { code: "BAD_REQUEST", message });
const base = (name: string, extra: Partial<CreateBotInput> = {}): CreateBotInput => ({
  fullName: `${name} Bot`,
  shortName: name,
  botDomain: "chat.test",
  ...extra,
});
/** Every event since the last call, as [type/op, payload, audience]. */
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
const sorted = (...ids: number[]) => [...ids].sort((a, b) => a - b);

describe("createBot (POST /bots)", () => {
  it("makes generic, incoming and outgoing webhook bots owned by the caller, with Zulip's address", () => {
    const generic = s.createBot(w.alice.id, base("helper", { defaultSendingChannel: "general" }));
    expect(generic).toMatchObject({
      email: "helper-bot@chat.test",
      fullName: "helper Bot",
      isBot: true,
      botType: 1,
      botOwnerId: w.alice.id,
      role: ROLE.MEMBER,
      botConfig: {
        defaultSendingChannelId: w.general.id,
        defaultEventsRegisterChannelId: null,
        defaultAllPublicChannels: false,
        service: null,
        configData: {},
      },
    });
    const hook = s.createBot(w.alice.id, base("hook", { botType: 2, configData: { stream: "general" } }));
    expect(hook.botConfig).toMatchObject({ service: null, configData: { stream: "general" } });
    const out = s.createBot(
      w.alice.id,
      base("out", { botType: 3, payloadUrl: "https://hooks.test/x", interfaceType: 2, serviceName: "" }),
    );
    expect(out.botConfig?.service).toEqual({
      name: "out",
      baseUrl: "https://hooks.test/x",
      interface: 2,
      token: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
    });
  });

  it("tells administrators and the owner (realm_bot add) and everyone (realm_user add)", () => {
    const helper = s.createBot(w.alice.id, base("helper"));
    const all = events();
    expect(all.find((e) => e.kind === "realm_user/add")?.to).toEqual(
      sorted(
        ...s
          .realmUsers(w.realm.id)
          .filter((u) => u.isActive)
          .map((u) => u.id),
      ),
    );
    expect(all.find((e) => e.kind === "realm_bot/add")).toMatchObject({
      event: { bot: { id: helper.id } },
      to: sorted(w.owner.id, w.alice.id, admin.id),
    });
  });

  it("refuses bad input and callers in Zulip's order, changing nothing", () => {
    const bot = s.createBot(w.alice.id, base("helper"));
    bad(() => s.createBot(w.guest.id, base("g")), "Not allowed for guest users");
    bad(() => s.createBot(bot.id, base("b")), "This endpoint does not accept bot requests.");
    bad(() => s.createBot(w.alice.id, base("  ")), "Bad name or username");
    bad(() => s.createBot(w.alice.id, base("a b")), "Bad name or username");
    bad(() => s.createBot(w.alice.id, base("x", { fullName: "@bad" })), "Invalid characters in name!");
    bad(() => s.createBot(w.alice.id, base("x", { botType: 4 })), "Embedded bots are not enabled.");
    bad(() => s.createBot(w.alice.id, base("helper", { fullName: "Another" })), "Username already in use");
    bad(() => s.createBot(w.alice.id, base("x", { fullName: "Alice" })), "Name is already in use!");
    bad(() => s.createBot(w.alice.id, base("x", { botType: 7 })), "Invalid bot type");
    bad(() => s.createBot(w.alice.id, base("x", { interfaceType: 3 })), "Invalid interface type");
    bad(
      () => s.createBot(w.alice.id, base("x", { defaultSendingChannel: "nowhere" })),
      "Invalid channel name 'nowhere'",
    );
    bad(
      () => s.createBot(w.bob.id, base("x", { defaultEventsRegisterChannel: "secret" })),
      "Invalid channel name 'secret'",
    );
    bad(
      () => s.createBot(w.alice.id, base("x", { botType: 2, serviceName: "github" })),
      "Invalid integration 'github'.",
    );
  });

  it("follows can_create_bots_group and can_create_write_only_bots_group", () => {
    const state = internals(s);
    const realm = state.realms.get(w.realm.id)!;
    const admins = s.systemGroupId(w.realm.id, "role:administrators");
    // Settings PATCH /realm will change; set on the record here.
    state.realms.set(realm.id, { ...realm, canCreateBotsGroup: admins });
    expect(s.createBot(w.alice.id, base("hook", { botType: 2 })).botType).toBe(2);
    bad(() => s.createBot(w.alice.id, base("generic")), "Insufficient permission");
    expect(s.createBot(admin.id, base("admins")).botType).toBe(1);
    state.realms.set(realm.id, { ...realm, canCreateBotsGroup: admins, canCreateWriteOnlyBotsGroup: admins });
    bad(() => s.createBot(w.alice.id, base("hook2", { botType: 2 })), "Insufficient permission");
  });
});

describe("updateBot (PATCH /bots/{id})", () => {
  it("changes settings with one realm_bot update per setting, to the bot's managers", () => {
    const bot = s.createBot(w.alice.id, base("out", { botType: 3, payloadUrl: "https://a.test" }));
    events();
    const next = s.updateBot(w.alice.id, bot.id, {
      fullName: "Renamed Bot",
      defaultSendingChannel: "general",
      defaultAllPublicChannels: true,
      servicePayloadUrl: "https://b.test",
      serviceInterface: 2,
      configData: { key: "value" },
    });
    expect(next).toMatchObject({
      fullName: "Renamed Bot",
      botConfig: {
        defaultSendingChannelId: w.general.id,
        defaultAllPublicChannels: true,
        service: { baseUrl: "https://b.test", interface: 2 },
        configData: { key: "value" },
      },
    });
    const all = events();
    expect(all.filter((e) => e.kind === "realm_bot/update").map((e) => [e.event, e.to])).toEqual([
      [expect.objectContaining({ fields: ["defaultSendingChannelId"] }), sorted(w.owner.id, w.alice.id, admin.id)],
      [expect.objectContaining({ fields: ["defaultAllPublicChannels"] }), sorted(w.owner.id, w.alice.id, admin.id)],
      [expect.objectContaining({ fields: ["service"] }), sorted(w.owner.id, w.alice.id, admin.id)],
    ]);
    expect(all.filter((e) => e.kind === "realm_user/update").map((e) => e.event)).toEqual([
      expect.objectContaining({ userId: bot.id, changes: { fullName: "Renamed Bot" } }),
    ]);
    // "" clears a default channel; the name sent unchanged is no rename.
    expect(
      s.updateBot(w.alice.id, bot.id, { defaultSendingChannel: "", fullName: "Renamed Bot" }).botConfig,
    ).toMatchObject({ defaultSendingChannelId: null });
  });

  it("moves the bot to a new owner: delete for the old one, add for the new one, out of private channels", () => {
    const bot = s.createBot(w.alice.id, base("helper"));
    s.subscribe(w.alice.id, { channels: [{ name: "secret" }, { name: "general" }], principals: [bot.id] });
    events();
    s.updateBot(admin.id, bot.id, { botOwnerId: w.bob.id });
    expect(s.getUser(bot.id).botOwnerId).toBe(w.bob.id);
    const all = events();
    expect(all.find((e) => e.kind === "realm_bot/delete")?.to).toEqual([w.alice.id]);
    expect(all.find((e) => e.kind === "realm_bot/add")?.to).toEqual([w.bob.id]);
    expect(all.find((e) => e.kind === "realm_user/update")?.event).toMatchObject({ changes: { botOwnerId: w.bob.id } });
    expect(s.subscriptionLists(bot.id, false).subscribed.map((c) => c.channel.name)).toEqual(["general"]);
  });

  it("refuses what Zulip refuses, changing nothing", () => {
    const bot = s.createBot(w.alice.id, base("helper"));
    bad(() => s.updateBot(w.alice.id, 999_999, { fullName: "X Y" }), "No such bot");
    bad(() => s.updateBot(w.alice.id, w.bob.id, { fullName: "X Y" }), "No such bot");
    bad(() => s.updateBot(w.bob.id, bot.id, { fullName: "X Y" }), "Insufficient permission");
    bad(() => s.updateBot(w.alice.id, bot.id, { fullName: "Bob" }), "Name is already in use!");
    expectFailsUnchanged(s, () => s.updateBot(w.alice.id, bot.id, { role: ROLE.MODERATOR }), {
      code: "UNAUTHORIZED_PRINCIPAL",
      message: "Must be an organization administrator",
    });
    expectFailsUnchanged(s, () => s.updateBot(admin.id, bot.id, { role: ROLE.OWNER }), {
      code: "UNAUTHORIZED_PRINCIPAL",
      message: "Must be an organization owner",
    });
    bad(() => s.updateBot(admin.id, bot.id, { role: 500 }), "Invalid role");
    bad(() => s.updateBot(w.alice.id, bot.id, { botOwnerId: 999_999 }), "Failed to change owner, no such user");
    s.setUserActive(w.bob.id, false);
    bad(() => s.updateBot(w.alice.id, bot.id, { botOwnerId: w.bob.id }), "Failed to change owner, user is deactivated");
    bad(
      () => s.updateBot(w.alice.id, bot.id, { botOwnerId: bot.id }),
      "Failed to change owner, bots can't own other bots",
    );
    bad(() => s.updateBot(w.alice.id, bot.id, { defaultSendingChannel: "nowhere" }), "Invalid channel name 'nowhere'");
    bad(
      () => s.updateBot(w.alice.id, bot.id, { servicePayloadUrl: "https://x.test" }),
      "This bot has no outgoing webhook service",
    );
    bad(
      () => s.updateBot(w.alice.id, bot.id, { servicePayloadUrl: "https://x.test", serviceInterface: 9 }),
      "Invalid interface type",
    );
    bad(() => s.updateBot(w.guest.id, bot.id, { fullName: "X Y" }), "Not allowed for guest users");
  });
});

describe("the bot's API key", () => {
  it("its owner and administrators read and regenerate it; the old key stops at once; no event", () => {
    const bot = s.createBot(w.alice.id, base("helper"));
    expect(s.botApiKey(w.alice.id, bot.id)).toBe(bot.apiKey);
    expect(s.botApiKey(admin.id, bot.id)).toBe(bot.apiKey);
    bad(() => s.botApiKey(w.bob.id, bot.id), "Insufficient permission");
    bad(() => s.regenerateBotApiKey(w.bob.id, bot.id), "Insufficient permission");
    events();
    const key = s.regenerateBotApiKey(admin.id, bot.id);
    expect(key).not.toBe(bot.apiKey);
    expect(s.findUserByApiKey(bot.apiKey)).toBeUndefined();
    expect(s.findUserByApiKey(key)?.id).toBe(bot.id);
    expect(events()).toEqual([]);
  });

  it("a bot holding can_create_users is managed by owners only", () => {
    const bot = s.createBot(admin.id, base("maker"));
    s.setCanCreateUsers(bot.id, true);
    expectFailsUnchanged(s, () => s.botApiKey(admin.id, bot.id), {
      code: "UNAUTHORIZED_PRINCIPAL",
      message: "Must be an organization owner",
    });
    expect(s.botApiKey(w.owner.id, bot.id)).toBe(bot.apiKey);
  });
});
