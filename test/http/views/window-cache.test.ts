/**
 * Whole GET /messages answers kept per (user, parameters): after every kind of change
 * that can alter a window, each answer must equal what a server without the cache
 * answers on the same store at that moment (no stale answer), and answers nothing
 * touched must still come from the cache.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basicAuth, encodeParams, startServer, type TestServer } from "../../support/http.js";
import { createServer, type ParleyServer } from "../../../src/http/server.js";
import { WindowReplyCache } from "../../../src/http/views/window-cache.js";
import { JsonParts, RawJson, ReadyReply, success } from "../../../src/http/respond.js";
import { seedRealm, tempStore } from "../../support/temp-store.js";
import type { User } from "../../../src/engine/types.js";
import { messageToWire } from "../../../src/wire/message.js";

let s: TestServer;
/** The same store served without kept answers: the oracle. */
let plain: ParleyServer;
let plainBase: string;

beforeAll(async () => {
  s = await startServer();
  plain = createServer(s.t.store, { rateLimit: false, logError: () => undefined, windowCacheBytes: 0 });
  plainBase = `http://127.0.0.1:${await plain.listen(0, "127.0.0.1")}`;
});
afterAll(() => {
  plain.close();
  s.close();
});

async function getText(base: string, user: User, params: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${base}/api/v1/messages?${encodeParams(params)}`, {
    headers: { Authorization: basicAuth(s.t.store.getUser(user.id)) },
  });
  expect(response.status).toBe(200);
  return response.text();
}

const PROBES: Record<string, unknown>[] = [
  { anchor: "newest", num_before: 20, num_after: 0 },
  { anchor: "newest", num_before: 5, num_after: 0, narrow: [{ operator: "channel", operand: "general" }] },
  {
    anchor: "newest",
    num_before: 5,
    num_after: 0,
    narrow: [
      { operator: "channel", operand: "general" },
      { operator: "topic", operand: "a" },
    ],
    apply_markdown: false,
  },
  { anchor: "oldest", num_before: 0, num_after: 50, narrow: [{ operator: "is", operand: "starred" }] },
  { anchor: "first_unread", num_before: 2, num_after: 3 },
  { anchor: "0", num_before: 0, num_after: 100, narrow: [{ operator: "is", operand: "dm" }] },
];

/** Every probe for alice and bob, three times each, against the oracle; returns the cache hits it made. */
async function expectCurrent(): Promise<number> {
  const before = s.server.windows.hits;
  for (let round = 0; round < 3; round++) {
    for (const user of [s.seed.alice, s.seed.bob]) {
      for (const probe of PROBES)
        expect(await getText(s.base, user, probe)).toBe(await getText(plainBase, user, probe));
    }
  }
  return s.server.windows.hits - before;
}

describe("kept GET /messages answers", () => {
  it("are served again until a change, and every change that alters a window drops them", async () => {
    const { owner, alice, bob, general } = s.seed;
    const send = async (from: User, params: Record<string, unknown>) =>
      (await s.call(from, "POST", "/messages", params)).body["id"] as number;
    const first = await send(owner, { type: "stream", to: "general", topic: "a", content: "one" });
    await send(owner, { type: "stream", to: "general", topic: "b", content: "two" });
    // Third round of each probe: kept (stored on the second miss).
    expect(await expectCurrent()).toBe(2 * PROBES.length);

    // Expected hits in the three rounds afterwards: one per probe and user whose
    // answers were dropped (the third round), three for a user whose answers were kept.
    const dropped = 2 * PROBES.length;
    const onlyOne = (1 + 3) * PROBES.length;
    const steps: [string, () => Promise<unknown> | unknown, number][] = [
      [
        "a new channel message",
        () => send(owner, { type: "stream", to: "general", topic: "a", content: "three" }),
        dropped,
      ],
      [
        "a direct message",
        () => send(bob, { type: "private", to: JSON.stringify([alice.id]), content: "psst" }),
        dropped,
      ],
      [
        "alice reads everything",
        () => s.call(alice, "POST", "/messages/flags", { messages: [first], op: "add", flag: "read" }),
        onlyOne,
      ],
      [
        "bob stars a message",
        () => s.call(bob, "POST", "/messages/flags", { messages: [first], op: "add", flag: "starred" }),
        onlyOne,
      ],
      ["a reaction", () => s.call(bob, "POST", `/messages/${first}/reactions`, { emoji_name: "tada" }), dropped],
      ["a sender rename", () => s.t.store.updateUser(owner.id, owner.id, { fullName: "Olive Renamed" }), dropped],
      [
        "a topic muted",
        () => s.call(alice, "POST", "/user_topics", { stream_id: general.id, topic: "b", visibility_policy: 1 }),
        onlyOne,
      ],
      [
        "bob mutes the channel",
        () =>
          s.call(bob, "POST", "/users/me/subscriptions/properties", {
            subscription_data: [{ stream_id: general.id, property: "is_muted", value: true }],
          }),
        onlyOne,
      ],
      [
        "bob leaves the channel",
        () => s.call(bob, "DELETE", "/users/me/subscriptions", { subscriptions: ["general"] }),
        dropped,
      ],
    ];
    for (const [name, change, expectedHits] of steps) {
      const r = await change();
      if (r && typeof r === "object" && "status" in r) expect(r.status, name).toBe(200);
      expect(await expectCurrent(), name).toBe(expectedHits);
    }
  });

  it("answer what the engine's own records say, in Zulip's wire shape, first and when kept", async () => {
    const { alice } = s.seed;
    const cases: [
      Record<string, unknown>,
      { applyMarkdown: boolean; clientGravatar: boolean; allowEmptyTopicName: boolean },
    ][] = [
      [
        { anchor: "newest", num_before: 50, num_after: 0 },
        { applyMarkdown: true, clientGravatar: true, allowEmptyTopicName: false },
      ],
      [
        { anchor: "newest", num_before: 50, num_after: 0, apply_markdown: false, client_gravatar: false },
        { applyMarkdown: false, clientGravatar: false, allowEmptyTopicName: false },
      ],
      [
        { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "search", operand: "one" }] },
        { applyMarkdown: true, clientGravatar: true, allowEmptyTopicName: false },
      ],
    ];
    for (const [params, options] of cases) {
      const engine = s.t.store.getMessages(alice.id, {
        narrow: params["narrow"] ?? [],
        anchor: "newest",
        numBefore: 50,
        numAfter: 0,
      });
      const expected = engine.messages.map((view) => messageToWire(s.t.store, s.seed.realm, view, options));
      expect(expected.length).toBeGreaterThan(0);
      for (let i = 0; i < 3; i++) expect(JSON.parse(await getText(s.base, alice, params)).messages).toEqual(expected);
    }
  });

  it("one user's flag change keeps the other users' answers", async () => {
    const { alice, bob } = s.seed;
    const probe = PROBES[0]!;
    for (let i = 0; i < 2; i++) {
      await getText(s.base, alice, probe);
      await getText(s.base, bob, probe);
    }
    const id = (
      await s.call(alice, "POST", "/messages", {
        type: "private",
        to: JSON.stringify([alice.id]),
        content: "note to self",
      })
    ).body["id"] as number;
    for (let i = 0; i < 2; i++) {
      await getText(s.base, alice, probe);
      await getText(s.base, bob, probe);
    }
    await s.call(alice, "POST", "/messages/flags", { messages: [id], op: "add", flag: "starred" });
    const hits = s.server.windows.hits;
    expect(await getText(s.base, bob, probe)).toBe(await getText(plainBase, bob, probe));
    expect(s.server.windows.hits).toBe(hits + 1);
    expect(await getText(s.base, alice, probe)).toBe(await getText(plainBase, alice, probe));
    expect(s.server.windows.hits).toBe(hits + 1);
  });

  it("answers with ignored parameters name them also when the window is kept, in the same bytes", async () => {
    const { alice } = s.seed;
    const hits = s.server.windows.hits;
    for (let i = 0; i < 3; i++) {
      const withIgnored = { ...PROBES[0], bogus_parameter: "1", other_bogus: "2" };
      const text = await getText(s.base, alice, withIgnored);
      expect(text).toBe(await getText(plainBase, alice, withIgnored));
      expect(JSON.parse(text).ignored_parameters_unsupported).toEqual(["bogus_parameter", "other_bogus"]);
      const clean = await getText(s.base, alice, PROBES[0]!);
      expect(JSON.parse(clean).ignored_parameters_unsupported).toBeUndefined();
    }
    expect(s.server.windows.hits - hits).toBeGreaterThanOrEqual(4);
  });
});

describe("WindowReplyCache", () => {
  const data = (n: number) => ({ found_newest: true, messages: new RawJson([Buffer.from(`[${n}]`)]) });

  it("stores a key on its second miss, as the success body", () => {
    const t = tempStore();
    try {
      seedRealm(t.store);
      const cache = new WindowReplyCache(t.store);
      expect(cache.put(1, 1, "k", cache.epoch, data(1))).not.toBeInstanceOf(ReadyReply);
      expect(cache.get(1, "k")).toBeNull();
      const stored = cache.put(1, 1, "k", cache.epoch, data(1));
      expect(stored).toBeInstanceOf(ReadyReply);
      const kept = cache.get(1, "k")!;
      expect(kept.body.equals((success(data(1), []).body as JsonParts).joined())).toBe(true);
      const named = kept.reply(["x"]).body as JsonParts;
      expect(named.joined().equals((success(data(1), ["x"]).body as JsonParts).joined())).toBe(true);
      expect(cache.get(2, "k")).toBeNull();
    } finally {
      t.cleanup();
    }
  });

  it("never stores an answer computed across a change", () => {
    const t = tempStore();
    try {
      const { owner } = seedRealm(t.store);
      const cache = new WindowReplyCache(t.store);
      for (let i = 0; i < 3; i++) {
        const epoch = cache.epoch;
        t.store.sendMessage({
          senderId: owner.id,
          to: { type: "channel", channel: "general", topic: "x" },
          content: "meanwhile",
        });
        expect(cache.put(1, 1, "k", epoch, data(i))).not.toBeInstanceOf(ReadyReply);
      }
      expect(cache.get(1, "k")).toBeNull();
      expect(cache.bytes).toBe(0);
    } finally {
      t.cleanup();
    }
  });

  it("keeps within its budget, dropping the least recently used", () => {
    const t = tempStore();
    try {
      seedRealm(t.store);
      const cache = new WindowReplyCache(t.store, 20_000);
      const big = () => ({ messages: new RawJson([Buffer.from(`[${"1,".repeat(1000)}1]`)]) });
      for (let i = 0; i < 40; i++) {
        cache.put(1, 1, `k${i}`, cache.epoch, big());
        cache.put(1, 1, `k${i}`, cache.epoch, big());
        expect(cache.get(1, "k0"), `k0 after ${i}`).not.toBeNull();
        expect(cache.bytes).toBeLessThanOrEqual(20_000);
      }
      expect(cache.get(1, "k1")).toBeNull();
      expect(cache.get(1, "k39")).not.toBeNull();
    } finally {
      t.cleanup();
    }
  });
});
