/**
 * GET /messages/matches_narrow over HTTP: the IDs GET /messages with the same narrow returns, with the same search
 * highlights; nothing the caller cannot read (private channels, others' DMs, another realm); GET /messages' refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";

let s: TestServer;
const ids: Record<string, number> = {};

async function send(user: User, params: Record<string, unknown>): Promise<number> {
  const r = await s.call(user, "POST", "/messages", params);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["id"] as number;
}

beforeAll(async () => {
  s = await startServer();
  const { owner, alice, bob } = s.seed;
  ids["fox"] = await send(alice, { type: "stream", to: "general", topic: "animals", content: "the quick brown fox" });
  ids["dog"] = await send(alice, { type: "stream", to: "general", topic: "fox den", content: "a lazy dog" });
  ids["secret"] = await send(alice, { type: "stream", to: "secret", topic: "animals", content: "a secret fox" });
  ids["dm"] = await send(alice, { type: "direct", to: JSON.stringify([owner.id]), content: "a private fox" });
  ids["bobDm"] = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "your fox" });
  const queen = s.t.store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen Bee" },
  }).owner;
  s.t.store.subscribe(queen.id, { channels: [{ name: "hive" }], principals: [queen.id] });
  ids["foreign"] = s.t.store.sendMessage({
    senderId: queen.id,
    to: { type: "channel", channel: "hive", topic: "animals" },
    content: "a foreign fox",
    client: "test",
  }).id;
});
afterAll(() => s.close());

const all = () => Object.values(ids);
type Fields = Record<string, { match_content: string; match_subject: string }>;

async function matches(user: User, narrow: unknown, msgIds: readonly number[] = all()): Promise<Fields> {
  const r = await s.call(user, "GET", "/messages/matches_narrow", { msg_ids: msgIds, narrow });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success", msg: "" });
  return r.body["messages"] as Fields;
}

/** GET /messages' answer for the same IDs and narrow, as matches_narrow's fields. */
async function viaGetMessages(user: User, narrow: unknown): Promise<Fields> {
  const r = await s.call(user, "GET", "/messages", { message_ids: all(), narrow });
  expect(r.status).toBe(200);
  const out: Fields = {};
  for (const m of r.body["messages"] as Record<string, unknown>[]) {
    out[String(m["id"])] = {
      match_content: (m["match_content"] ?? m["content"]) as string,
      match_subject: (m["match_subject"] ?? m["subject"]) as string,
    };
  }
  return out;
}

describe("GET /messages/matches_narrow", () => {
  it("answers the messages a search holds, highlighted as GET /messages highlights them", async () => {
    const { bob } = s.seed;
    const narrow = [{ operator: "search", operand: "fox" }];
    const found = await matches(bob, narrow);
    expect(Object.keys(found).sort()).toEqual([ids["fox"], ids["dog"], ids["bobDm"]].map(String).sort());
    expect(found[ids["fox"]!]!.match_content).toContain('<span class="highlight">fox</span>');
    expect(found[ids["dog"]!]!.match_subject).toBe('<span class="highlight">fox</span> den');
    expect(found).toEqual(await viaGetMessages(bob, narrow));
  });

  it("answers other narrows with the plain HTML and topic, and only for the IDs asked", async () => {
    const { bob } = s.seed;
    const narrow = [{ operator: "channel", operand: "general" }];
    const found = await matches(bob, narrow, [ids["dog"]!, ids["secret"]!, 99_999]);
    expect(Object.keys(found)).toEqual([String(ids["dog"])]);
    expect(found[ids["dog"]!]).toEqual({ match_content: "<p>a lazy dog</p>", match_subject: "fox den" });
    expect(await matches(bob, [{ operator: "topic", operand: "animals" }])).toEqual(
      await viaGetMessages(bob, [{ operator: "topic", operand: "animals" }]),
    );
  });

  it("never answers for messages the caller cannot read", async () => {
    const { alice, bob, guest } = s.seed;
    const readable = (fields: Fields) =>
      Object.keys(fields)
        .map(Number)
        .sort((a, b) => a - b);
    expect(readable(await matches(bob, []))).toEqual([ids["fox"]!, ids["dog"]!, ids["bobDm"]!].sort((a, b) => a - b));
    expect(readable(await matches(alice, []))).not.toContain(ids["foreign"]);
    expect(await matches(guest, [])).toEqual({});
    expect(await matches(bob, [{ operator: "search", operand: "secret" }])).toEqual({});
    expect(await matches(bob, [{ operator: "search", operand: "foreign" }])).toEqual({});
  });

  it("refuses bad input as GET /messages does, changing nothing", async () => {
    const { bob } = s.seed;
    const ask = (params: Record<string, unknown>) => () => s.call(bob, "GET", "/messages/matches_narrow", params);
    const unknownChannel = [{ operator: "channel", operand: "nowhere" }];
    const viaGet = await s.call(bob, "GET", "/messages", { message_ids: [1], narrow: unknownChannel });
    expect(viaGet.status).toBe(400);
    await expectRejectedUnchanged(
      s,
      ask({ msg_ids: [1], narrow: unknownChannel }),
      400,
      viaGet.body["code"] as string,
      viaGet.body["msg"] as string,
    );
    await expectRejectedUnchanged(
      s,
      ask({ narrow: [] }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'msg_ids' argument",
    );
    await expectRejectedUnchanged(
      s,
      ask({ msg_ids: [1] }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'narrow' argument",
    );
    await expectRejectedUnchanged(s, ask({ msg_ids: "[1,", narrow: [] }), 400, "BAD_REQUEST", /msg_ids/);
    await expectRejectedUnchanged(
      s,
      ask({ msg_ids: Array.from({ length: 5001 }, () => 1), narrow: [] }),
      400,
      "BAD_REQUEST",
      "Too many messages requested (maximum 5000).",
    );
    expect((await s.call(null, "GET", "/messages/matches_narrow", { msg_ids: [1], narrow: [] })).status).toBe(401);
  });
});
