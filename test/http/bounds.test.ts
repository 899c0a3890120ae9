/**
 * The worst inputs of every endpoint: huge strings, huge lists, 20,000-term narrows,
 * over-long topics, oversized bodies. Each gets a 4xx (or the correct 200) with a small
 * body that does not echo the input, changes nothing when refused, and a cheap request
 * sent alongside still answers. How long the event loop is held is measured by
 * bench/worst-inputs.ts, not here.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDPOINTS } from "../../src/http/endpoints/index.js";
import type { User } from "../../src/engine/types.js";
import { basicAuth, encodeParams, expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

/** Largest response body any of these inputs may produce. */
const SMALL = 4096;
const MiB = 1024 * 1024;

interface Reply {
  readonly status: number;
  readonly text: string;
  readonly body: Record<string, unknown>;
}

/**
 * One request with the parameters form-encoded in the body, whatever the method
 * (GET bodies are read like Zulip's request.POST; fetch cannot send them). With
 * `chunked`, no Content-Length is sent, so the limit must be enforced while streaming.
 */
function send(user: User | null, method: string, path: string, body: string | Buffer, options: { chunked?: boolean } = {}): Promise<Reply> {
  const url = new URL(`${s.base}/api/v1${path}`);
  const payload = typeof body === "string" ? Buffer.from(body) : body;
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
  if (user) headers["Authorization"] = basicAuth(s.t.store.getUser(user.id));
  if (!options.chunked) headers["Content-Length"] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          parsed = { raw: text };
        }
        resolve({ status: res.statusCode ?? 0, text, body: parsed });
      });
    });
    // The server may answer 413 and close before the whole body is written.
    req.on("error", (error: NodeJS.ErrnoException) => (error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error)));
    if (options.chunked) {
      for (let i = 0; i < payload.length; i += 64 * 1024) req.write(payload.subarray(i, i + 64 * 1024));
      req.end();
    } else req.end(payload);
  });
}

const form = (params: Record<string, unknown>) => encodeParams(params).toString();

/** The worst input together with a cheap request; the cheap one must still answer. */
async function withBystander(worst: () => Promise<Reply>): Promise<Reply> {
  const [reply, bystander] = await Promise.all([worst(), s.call(s.seed.bob, "GET", "/users/me")]);
  expect(bystander.status).toBe(200);
  expect(reply.text.length).toBeLessThan(SMALL);
  return reply;
}

/** Refused with `status`, `code` and a message matching `msg`; nothing stored changed. */
async function refused(worst: () => Promise<Reply>, status: number, code: string, msg: string | RegExp): Promise<Reply> {
  let reply: Reply | undefined;
  await expectRejectedUnchanged(
    s,
    async () => {
      reply = await withBystander(worst);
      return reply;
    },
    status,
    code,
    msg,
  );
  return reply!;
}

const huge = (n: number, unit = "x") => unit.repeat(n);
/** Narrow terms in the short list form (35 bytes each form-encoded): 20,000 are over the body limit, 5000 under it. */
const manyTerms = (n = 5000) => Array.from({ length: n }, () => ["in", "home"]);
/** A list of `n` small integers (short when form-encoded). */
const ones = (n: number) => Array.from({ length: n }, () => 1);
/** 2 KB of UTF-8 (1000 characters): far over the 60-character topic limit. */
const longTopic = huge(1000, "é");

/** `${method} ${path}` of every route this file sends worst inputs to. */
const covered = new Set<string>();
const route = (method: string, path: string) => {
  covered.add(`${method} ${path}`);
  return `${method} ${path}`;
};

describe("bodies", () => {
  it("refuses a 30 MB body with 413 before reading it, declared or streamed", async () => {
    const { alice } = s.seed;
    const body = form({ type: "stream", to: "general", topic: "t", content: huge(30 * MiB) });
    const declared = await refused(() => send(alice, "POST", "/messages", body), 413, "BAD_REQUEST", "Request body too large");
    expect(declared.text.length).toBeLessThan(200);
    await refused(() => send(alice, "POST", "/messages", body, { chunked: true }), 413, "BAD_REQUEST", "Request body too large");
  });

  it("refuses a body over the endpoint's own limit", async () => {
    await refused(() => send(null, "GET", "/server_settings", huge(64 * 1024)), 413, "BAD_REQUEST", "Request body too large");
  });

  it("refuses more than 1000 parameters, like Django", async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `p${i}=1`).join("&");
    await refused(() => send(s.seed.alice, "GET", "/users/me", many), 400, "BAD_REQUEST", "Too many parameters (limit: 1000)");
  });

  it("clips unknown parameter names it reports as ignored", async () => {
    const r = await withBystander(() => send(s.seed.alice, "GET", "/users/me", `${huge(100_000, "k")}=1`));
    expect(r.status).toBe(200);
    const ignored = r.body["ignored_parameters_unsupported"] as string[];
    expect(ignored).toHaveLength(1);
    expect(ignored[0]!.length).toBeLessThanOrEqual(101);
  });
});

describe("worst inputs per endpoint", () => {
  it(route("GET", "/server_settings"), async () => {
    const r = await withBystander(() => send(null, "GET", "/server_settings", form({ [huge(500)]: "x" })));
    expect(r.status).toBe(200);
  });

  it(route("GET", "/events"), async () => {
    const { alice } = s.seed;
    await refused(() => send(alice, "GET", "/events", form({ queue_id: huge(200_000), dont_block: true })), 400, "BAD_REQUEST", "queue_id is too long (limit: 64 characters)");
    await refused(() => send(alice, "GET", "/events", form({ queue_id: huge(64), last_event_id: huge(400, "9"), dont_block: true })), 400, "BAD_REQUEST", "last_event_id is too large");
  });

  it(route("DELETE", "/events"), async () => {
    await refused(() => send(s.seed.alice, "DELETE", "/events", form({ queue_id: huge(200_000) })), 400, "BAD_REQUEST", "queue_id is too long (limit: 64 characters)");
  });

  it(route("POST", "/typing"), async () => {
    const { alice, general } = s.seed;
    await refused(() => send(alice, "POST", "/typing", form({ op: "start", to: ones(40_000) })), 400, "BAD_REQUEST", /^to/);
    await refused(() => send(alice, "POST", "/typing", form({ op: "start", type: "channel", stream_id: general.id, topic: huge(200_000) })), 400, "BAD_REQUEST", "topic is too long (limit: 600 characters)");
  });

  it(route("POST", "/messages"), async () => {
    const { alice, general } = s.seed;
    // A megabyte is refused; a long message within the limit is cut to 10,000 characters, as Zulip does.
    await refused(() => send(alice, "POST", "/messages", form({ type: "stream", to: "general", topic: "t", content: huge(MiB) })), 413, "BAD_REQUEST", "Request body too large");
    const long = await withBystander(() => send(alice, "POST", "/messages", form({ type: "stream", to: "general", topic: longTopic, content: huge(40_000, "é") })));
    expect(long.status).toBe(200);
    const stored = s.t.store.getMessage(alice.id, long.body["id"] as number).message;
    expect([...stored.content]).toHaveLength(10_000);
    expect(stored.content.endsWith("\n[message truncated]")).toBe(true);
    expect(stored.topic).toBe(`${huge(57, "é")}...`);
    // `to`: 10 MB, then huge names, email lists and ID lists within the limit.
    await refused(() => send(alice, "POST", "/messages", form({ type: "direct", to: huge(10 * MiB, "a,"), content: "x" })), 413, "BAD_REQUEST", "Request body too large");
    const channel = await refused(() => send(alice, "POST", "/messages", form({ type: "stream", to: huge(200_000), topic: "t", content: "x" })), 400, "STREAM_DOES_NOT_EXIST", /^Channel 'x{100}…' does not exist$/);
    expect(channel.body["stream"]).toBe(`${huge(100)}…`);
    await refused(() => send(alice, "POST", "/messages", form({ type: "direct", to: huge(2000, "nobody@test.dev,"), content: "x" })), 400, "BAD_REQUEST", "Too many recipients (maximum 1000).");
    await refused(() => send(alice, "POST", "/messages", form({ type: "direct", to: `${huge(200_000, "n")}@test.dev`, content: "x" })), 400, "BAD_REQUEST", /^Invalid email 'n{100}…'$/);
    await refused(() => send(alice, "POST", "/messages", form({ type: "direct", to: Array.from({ length: 40_000 }, () => general.id), content: "x" })), 400, "BAD_REQUEST", "Too many recipients (maximum 1000).");
  });

  it(route("GET", "/messages"), async () => {
    const { alice } = s.seed;
    const get = (params: Record<string, unknown>) => () => send(alice, "GET", "/messages", form({ anchor: "newest", num_before: 10, num_after: 0, ...params }));
    await refused(get({ narrow: manyTerms(20_000) }), 413, "BAD_REQUEST", "Request body too large");
    await refused(get({ narrow: manyTerms() }), 400, "BAD_REQUEST", "narrow is too long (limit: 100 terms)");
    const wordy = Array.from({ length: 10 }, () => ({ operator: "search", operand: huge(1500, "word ").slice(0, 1999) }));
    await refused(get({ narrow: wordy }), 400, "BAD_REQUEST", "narrow is too long (limit: 10000 characters of operands)");
    await refused(get({ narrow: [{ operator: "search", operand: huge(200_000) }] }), 400, "BAD_REQUEST", 'narrow[0]["operand"] is too long (limit: 2000 characters)');
    await refused(get({ narrow: [{ operator: "dm", operand: ones(40_000) }] }), 400, "BAD_REQUEST", 'narrow[0]["operand"] is too long (limit: 1000 items)');
    await refused(get({ narrow: [{ operator: "sender", operand: huge(1999) }] }), 400, "BAD_NARROW", /^Invalid narrow operator: unknown user x{100}…$/);
    await refused(get({ narrow: [{ operator: huge(200_000), operand: "x" }] }), 400, "BAD_NARROW", /^Invalid narrow operator: unknown operator x{100}…$/);
    // A topic longer than any stored topic matches nothing (and builds no over-long index key).
    const topic = await withBystander(get({ narrow: [{ operator: "channel", operand: "general" }, { operator: "topic", operand: longTopic }] }));
    expect(topic.status).toBe(200);
    expect(topic.body["messages"]).toEqual([]);
    const ids = () => send(alice, "GET", "/messages", form({ message_ids: ones(40_000) }));
    await refused(ids, 400, "BAD_REQUEST", "Too many messages requested (maximum 5000).");
    await refused(() => send(alice, "GET", "/messages", form({ message_ids: Array.from({ length: 3_000_000 }, (_, i) => i) })), 413, "BAD_REQUEST", "Request body too large");
    await refused(get({ anchor: huge(200_000) }), 400, "BAD_REQUEST", "Invalid anchor");
    await refused(get({ anchor: "date", anchor_date: huge(200_000, "9") }), 400, "BAD_REQUEST", "Invalid anchor_date");
  });

  it(route("GET", "/messages/:message_id"), async () => {
    await refused(() => send(s.seed.alice, "GET", `/messages/${huge(2000, "9")}`, ""), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  it(route("POST", "/messages/flags"), async () => {
    const { alice } = s.seed;
    await refused(() => send(alice, "POST", "/messages/flags", form({ op: "add", flag: "read", messages: Array.from({ length: 3_000_000 }, (_, i) => i) })), 413, "BAD_REQUEST", "Request body too large");
    await refused(() => send(alice, "POST", "/messages/flags", form({ op: "add", flag: "read", messages: ones(40_000) })), 400, "BAD_REQUEST", "messages is too long (limit: 5000 items)");
    await refused(() => send(alice, "POST", "/messages/flags", form({ op: "add", flag: huge(200_000), messages: [1] })), 400, "BAD_REQUEST", /^Invalid flag: 'x{100}…'$/);
    await refused(() => send(alice, "POST", "/messages/flags", form({ op: huge(200_000), flag: "read", messages: [1] })), 400, "BAD_REQUEST", /^Invalid message flag operation: 'x{100}…'$/);
  });

  it(route("POST", "/messages/flags/narrow"), async () => {
    const { alice } = s.seed;
    const flags = (narrow: unknown) => () => send(alice, "POST", "/messages/flags/narrow", form({ anchor: "oldest", num_before: 0, num_after: 5000, op: "add", flag: "starred", narrow }));
    await refused(flags(manyTerms()), 400, "BAD_REQUEST", "narrow is too long (limit: 100 terms)");
    const topic = await withBystander(flags([{ operator: "channel", operand: "general" }, { operator: "topic", operand: longTopic }]));
    expect(topic.status).toBe(200);
    expect(topic.body["processed_count"]).toBe(0);
  });

  it(route("POST", "/mark_topic_as_read"), async () => {
    const { alice, general } = s.seed;
    await refused(() => send(alice, "POST", "/mark_topic_as_read", form({ stream_id: general.id, topic_name: longTopic })), 400, "BAD_REQUEST", /^No such topic 'é{100}…'$/);
    await refused(() => send(alice, "POST", "/mark_topic_as_read", form({ stream_id: general.id, topic_name: huge(200_000) })), 400, "BAD_REQUEST", /^No such topic 'x{100}…'$/);
  });

  for (const method of ["POST", "DELETE"]) {
    it(route(method, "/messages/:message_id/reactions"), async () => {
      await refused(() => send(s.seed.alice, method, "/messages/1/reactions", form({ emoji_name: huge(200_000) })), 400, "BAD_REQUEST", "emoji_name is too long (limit: 80 characters)");
    });
  }

  it(route("GET", "/users"), async () => {
    await refused(() => send(s.seed.alice, "GET", "/users", form({ user_ids: ones(40_000) })), 400, "BAD_REQUEST", "user_ids is too long (limit: 10000 items)");
  });

  it(route("GET", "/users/me"), async () => {
    const r = await withBystander(() => send(s.seed.alice, "GET", "/users/me", form({ client_gravatar: huge(200_000) })));
    expect(r.status).toBe(200);
  });

  it(route("GET", "/users/:user_id_or_email"), async () => {
    await refused(() => send(s.seed.alice, "GET", `/users/${huge(2000)}@test.dev`, form({ client_gravatar: huge(200_000) })), 400, "BAD_REQUEST", "client_gravatar is not a boolean");
  });

  it(route("PATCH", "/users/:user_id_or_email"), async () => {
    const { owner, bob } = s.seed;
    await refused(() => send(owner, "PATCH", `/users/${bob.id}`, form({ full_name: huge(200_000) })), 400, "BAD_REQUEST", "Name too long!");
    await refused(() => send(owner, "PATCH", `/users/${bob.id}`, form({ profile_data: Array.from({ length: 2000 }, (_, i) => ({ id: i, value: "v" })) })), 400, "BAD_REQUEST", "profile_data is too long (limit: 1000 items)");
  });

  it(route("GET", "/users/me/subscriptions"), async () => {
    await refused(() => send(s.seed.alice, "GET", "/users/me/subscriptions", form({ include_subscribers: huge(200_000) })), 400, "BAD_REQUEST", "Invalid include_subscribers");
  });

  it(route("POST", "/users/me/subscriptions"), async () => {
    const { owner, alice } = s.seed;
    const subscribe = (params: Record<string, unknown>) => () => send(owner, "POST", "/users/me/subscriptions", form(params));
    await refused(subscribe({ subscriptions: Array.from({ length: 5000 }, (_, i) => ({ name: `c${i}` })) }), 400, "BAD_REQUEST", "subscriptions is too long (limit: 1000 items)");
    await refused(subscribe({ subscriptions: [{ name: "general" }], principals: ones(40_000) }), 400, "BAD_REQUEST", "principals is too long (limit: 1000 items)");
    const product = { subscriptions: Array.from({ length: 100 }, (_, i) => ({ name: `c${i}` })), principals: Array.from({ length: 100 }, () => alice.id) };
    await refused(subscribe(product), 400, "BAD_REQUEST", "Too many subscriptions requested (maximum 1000 channels times principals).");
    await refused(subscribe({ subscriptions: [{ name: huge(200_000) }] }), 400, "BAD_REQUEST", "Channel name too long (limit: 60 characters).");
    await refused(subscribe({ subscriptions: [{ name: "new", description: huge(200_000) }] }), 400, "BAD_REQUEST", "Channel description too long (limit: 1024 characters).");
  });

  it(route("DELETE", "/users/me/subscriptions"), async () => {
    const { owner } = s.seed;
    await refused(() => send(owner, "DELETE", "/users/me/subscriptions", form({ subscriptions: Array.from({ length: 5000 }, (_, i) => `c${i}`) })), 400, "BAD_REQUEST", "subscriptions is too long (limit: 1000 items)");
    await refused(() => send(owner, "DELETE", "/users/me/subscriptions", form({ subscriptions: [huge(200_000)] })), 400, "STREAM_DOES_NOT_EXIST", /^Channel 'x{100}…' does not exist$/);
  });

  it(route("GET", "/streams"), async () => {
    await refused(() => send(s.seed.alice, "GET", "/streams", form({ include_all: huge(200_000) })), 400, "BAD_REQUEST", "include_all is not a boolean");
  });

  it(route("POST", "/register"), async () => {
    const { alice } = s.seed;
    const register = (params: Record<string, unknown>) => () => send(alice, "POST", "/register", form(params));
    await refused(register({ narrow: manyTerms() }), 400, "BAD_REQUEST", "narrow is too long (limit: 100 terms)");
    await refused(register({ event_types: Array.from({ length: 5000 }, () => "message") }), 400, "BAD_REQUEST", "event_types is too long (limit: 1000 items)");
    await refused(register({ client_capabilities: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, true])) }), 400, "BAD_REQUEST", "client_capabilities is too long (limit: 1000 items)");
    await refused(register({ client_capabilities: { [huge(200_000)]: "x" } }), 400, "BAD_REQUEST", /^client_capabilities\["x{100}…"\] is not a boolean$/);
  });

  it(route("POST", "/users/me/presence"), async () => {
    const { alice } = s.seed;
    await refused(() => send(alice, "POST", "/users/me/presence", form({ status: huge(200_000) })), 400, "BAD_REQUEST", /^Invalid status: x{100}…$/);
    await refused(() => send(alice, "POST", "/users/me/presence", form({ status: "active", last_update_id: huge(100_000, "9") })), 400, "BAD_REQUEST", "last_update_id is too large");
    await refused(() => send(alice, "POST", "/users/me/presence", form({ status: "active", history_limit_days: huge(100_000, "9") })), 400, "BAD_REQUEST", "history_limit_days is too large");
  });

  it(route("GET", "/realm/presence"), async () => {
    const r = await withBystander(() => send(s.seed.alice, "GET", "/realm/presence", form({ [huge(200)]: huge(200_000) })));
    expect(r.status).toBe(200);
  });

  it(route("GET", "/users/:user_id_or_email/presence"), async () => {
    await refused(() => send(s.seed.alice, "GET", `/users/${huge(2000)}@test.dev/presence`, ""), 400, "BAD_REQUEST", "No such user");
    await refused(() => send(s.seed.alice, "GET", `/users/${huge(2000, "9")}/presence`, ""), 400, "BAD_REQUEST", "No such user");
  });

  it(route("POST", "/realm/playgrounds"), async () => {
    const add = (params: Record<string, unknown>) => () => send(s.seed.owner, "POST", "/realm/playgrounds", form({ name: "P", pygments_language: "Python", url_template: "https://p.test/{code}", ...params }));
    await refused(add({ url_template: huge(200_000) }), 400, "BAD_REQUEST", "url_template is too long (limit: 10000 characters)");
    await refused(add({ url_template: huge(1000, "{code}{x}") }), 400, "BAD_REQUEST", '"code" should be the only variable present in the URL template');
    await refused(add({ url_template: huge(9000, "{") }), 400, "BAD_REQUEST", "Invalid URL template.");
    await refused(add({ name: huge(200_000) }), 400, "BAD_REQUEST", "name is too long (limit: 1000 characters)");
    await refused(add({ pygments_language: huge(200_000) }), 400, "BAD_REQUEST", "pygments_language is too long (limit: 1000 characters)");
  });

  it(route("DELETE", "/realm/playgrounds/:playground_id"), async () => {
    await refused(() => send(s.seed.owner, "DELETE", `/realm/playgrounds/${huge(2000, "9")}`, ""), 400, "BAD_REQUEST", "Invalid playground");
  });

  it(route("POST", "/user_topics"), async () => {
    const { alice, general } = s.seed;
    const set = (params: Record<string, unknown>) => () => send(alice, "POST", "/user_topics", form({ stream_id: general.id, topic: "t", visibility_policy: 1, ...params }));
    await refused(set({ topic: huge(200_000) }), 400, "BAD_REQUEST", "topic is too long (limit: 600 characters)");
    await refused(set({ topic: huge(100, "é") }), 400, "BAD_REQUEST", "topic is too long (limit: 60 characters)");
    await refused(set({ stream_id: huge(100_000, "9") }), 400, "BAD_REQUEST", "stream_id is too large");
    await refused(set({ visibility_policy: huge(100_000, "9") }), 400, "BAD_REQUEST", "visibility_policy is too large");
  });

  it(route("POST", "/users/me/subscriptions/properties"), async () => {
    const { alice, general } = s.seed;
    const change = (data: unknown) => () => send(alice, "POST", "/users/me/subscriptions/properties", form({ subscription_data: data }));
    await refused(change(Array.from({ length: 1500 }, () => ({ stream_id: general.id, property: "pin_to_top", value: true }))), 400, "BAD_REQUEST", "subscription_data is too long (limit: 1000 items)");
    await refused(change([{ stream_id: general.id, property: huge(200_000), value: true }]), 400, "BAD_REQUEST", 'subscription_data[0]["property"] is too large');
    await refused(change([{ stream_id: general.id, property: "color", value: huge(200_000) }]), 400, "BAD_REQUEST", /^subscription_data\[0\]\["value"\]/);
    // The largest list allowed, every change valid: one write.
    const r = await withBystander(change(Array.from({ length: 1000 }, (_, i) => ({ stream_id: general.id, property: "pin_to_top", value: i % 2 === 0 }))));
    expect(r.status).toBe(200);
  });

  it("covers every endpoint of the route table", () => {
    expect([...covered].sort()).toEqual(ENDPOINTS.map((e) => `${e.method} ${e.path}`).sort());
  });
});
