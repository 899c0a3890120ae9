/**
 * A bot's default_sending_stream, used where Zulip uses it (Addressee.legacy_build
 * behind POST /messages): a channel message sent without `to` goes there, with the
 * usual sending checks; without a default it is "Missing channel", and a direct
 * message without `to` is "Message must have recipients" (parley answered "Missing
 * 'to' argument" to both and ignored the default).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

let s: TestServer;
let bot: User;
let plainBot: User;

beforeAll(async () => {
  s = await startServer();
  const { owner, realm } = s.seed;
  const make = (email: string, fullName: string) =>
    s.t.store.createUser({ realmId: realm.id, email, fullName, bot: { type: 1, ownerId: owner.id } });
  bot = make("poster-bot@test.dev", "Poster");
  plainBot = make("plain-bot@test.dev", "Plain");
  const r = await s.call(owner, "PATCH", `/bots/${bot.id}`, { default_sending_stream: "general" });
  expect(r.status).toBe(200);
});
afterAll(() => s.close());

describe("POST /messages without `to`", () => {
  it("a bot's channel message goes to its default sending channel", async () => {
    const r = await s.call(bot, "POST", "/messages", { type: "stream", topic: "news", content: "hello" });
    expect(r).toMatchObject({ status: 200, body: { result: "success" } });
    const message = s.t.store.findMessageRecord(r.body["id"] as number)!;
    expect([message.recipient, message.topic, message.senderId]).toEqual([
      { type: "channel", channelId: s.seed.general.id },
      "news",
      bot.id,
    ]);
    // An explicit `to` still wins.
    const other = await s.call(bot, "POST", "/messages", { type: "channel", to: "secret", topic: "t", content: "x" });
    expect(other.status).toBe(200);
  });

  it("without a default (any person, a bot without one): Missing channel, nothing sent", async () => {
    const before = s.t.store.lastMessageId;
    for (const user of [s.seed.alice, plainBot]) {
      const r = await s.call(user, "POST", "/messages", { type: "stream", topic: "t", content: "x" });
      expect(r).toMatchObject({ status: 400, body: { result: "error", code: "BAD_REQUEST", msg: "Missing channel" } });
    }
    expect(s.t.store.lastMessageId).toBe(before);
  });

  it("a direct message: Message must have recipients", async () => {
    const r = await s.call(bot, "POST", "/messages", { type: "direct", content: "x" });
    expect(r).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", msg: "Message must have recipients" } });
  });

  it("the default channel gets the usual sending checks (archived: refused)", async () => {
    const { owner, general } = s.seed;
    const archived = await s.call(owner, "DELETE", `/streams/${general.id}`);
    expect(archived.status).toBe(200);
    const r = await s.call(bot, "POST", "/messages", { type: "stream", topic: "t", content: "x" });
    expect(r.status).toBe(400);
  });
});
