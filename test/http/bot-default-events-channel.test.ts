/**
 * A bot's register with default_events_register_stream set and no narrow: the queue gets
 * that channel's messages only. Zulip never refuses the registration when the bot cannot
 * see the channel (its queue filters by the channel); parley answered BAD_NARROW
 * (events oracle seeds 1-3). Once the bot can see the channel, its messages arrive.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

let s: TestServer;
let bot: User;

beforeAll(async () => {
  s = await startServer();
  const { owner, realm } = s.seed;
  bot = s.t.store.createUser({
    realmId: realm.id,
    email: "listener-bot@test.dev",
    fullName: "Listener",
    bot: { type: 1, ownerId: owner.id },
  });
  const r = await s.call(owner, "PATCH", `/bots/${bot.id}`, { default_events_register_stream: "secret" });
  expect(r.status).toBe(200);
});
afterAll(() => s.close());

const send = (channel: string, content: string) =>
  s.t.store.sendMessage({ senderId: s.seed.owner.id, to: { type: "channel", channel, topic: "t" }, content }).id;

describe("a bot's default events channel", () => {
  it("registers even when the bot cannot see the channel, and the queue gets that channel's messages only", async () => {
    const reg = await s.call(bot, "POST", "/register", { event_types: ["message"] });
    expect(reg).toMatchObject({ status: 200, body: { result: "success" } });
    const poll = async () => {
      const r = await s.call(bot, "GET", "/events", {
        queue_id: reg.body["queue_id"],
        last_event_id: -1,
        dont_block: true,
      });
      return (r.body["events"] as Record<string, unknown>[])
        .filter((e) => e["type"] === "message")
        .map((e) => (e["message"] as Record<string, unknown>)["id"]);
    };
    send("secret", "unseen");
    expect(await poll()).toEqual([]);
    s.t.store.subscribe(s.seed.owner.id, { channels: [{ name: "secret" }], principals: [bot.id] });
    s.t.store.subscribe(s.seed.owner.id, { channels: [{ name: "general" }], principals: [bot.id] });
    send("general", "elsewhere");
    const seen = send("secret", "seen");
    expect(await poll()).toEqual([seen]);
  });

  it("an explicit narrow still replaces the default", async () => {
    const reg = await s.call(bot, "POST", "/register", {
      event_types: ["message"],
      narrow: JSON.stringify([["stream", "general"]]),
    });
    expect(reg.status).toBe(200);
    const id = send("general", "here");
    send("secret", "not here");
    const r = await s.call(bot, "GET", "/events", {
      queue_id: reg.body["queue_id"],
      last_event_id: -1,
      dont_block: true,
    });
    const ids = (r.body["events"] as Record<string, unknown>[])
      .filter((e) => e["type"] === "message")
      .map((e) => (e["message"] as Record<string, unknown>)["id"]);
    expect(ids).toEqual([id]);
  });
});
