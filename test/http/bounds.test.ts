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
import type { Endpoint } from "../../src/http/endpoint.js";
import { generatedWorstInputs, hasGeneratedWorstInputs } from "../../src/http/worst-inputs.js";
import type { User } from "../../src/engine/types.js";
import { SignJWT } from "jose";
import { parseConfig } from "../../src/config/index.js";
import { basicAuth, encodeParams, expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
/** A JWT secret for the root realm, so that worst tokens reach jose. */
const JWT_SECRET = "bounds test secret, long enough for HS256";
beforeAll(async () => {
  s = await startServer({
    config: parseConfig(
      { JWT_AUTH_KEYS: { "": { key: JWT_SECRET, algorithms: ["HS256"] } }, CAMO_KEY: "bounds-test-camo-key" },
      "test",
    ),
  });
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
function send(
  user: User | null,
  method: string,
  path: string,
  body: string | Buffer,
  options: { chunked?: boolean; root?: boolean; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const url = new URL(`${s.base}${options.root ? "" : "/api/v1"}${path}`);
  const payload = typeof body === "string" ? Buffer.from(body) : body;
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded", ...options.headers };
  if (user) headers["Authorization"] = basicAuth(s.t.store.getUser(user.id));
  if (!options.chunked) headers["Content-Length"] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers },
      (res) => {
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
      },
    );
    // The server may answer 413 and close before the whole body is written.
    req.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error),
    );
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
async function refused(
  worst: () => Promise<Reply>,
  status: number,
  code: string,
  msg: string | RegExp,
): Promise<Reply> {
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
/** Narrow terms in the short list form (35 bytes each form-encoded): 20,000 are over the body limit. */
const manyTerms = (n: number) => Array.from({ length: n }, () => ["in", "home"]);
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
/** A route outside /api/v1 (file downloads), named with its full path. */
const rootRoute = (method: string, path: string) => {
  covered.add(`${method} (root) ${path}`);
  return `${method} ${path} (outside /api/v1)`;
};

describe("bodies", () => {
  it("refuses a 30 MB body with 413 before reading it, declared or streamed", async () => {
    const { alice } = s.seed;
    const body = form({ type: "stream", to: "general", topic: "t", content: huge(30 * MiB) });
    const declared = await refused(
      () => send(alice, "POST", "/messages", body),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
    expect(declared.text.length).toBeLessThan(200);
    await refused(
      () => send(alice, "POST", "/messages", body, { chunked: true }),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
  });

  it("refuses more than 1000 parameters, like Django", async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `p${i}=1`).join("&");
    await refused(
      () => send(s.seed.alice, "GET", "/users/me", many),
      400,
      "BAD_REQUEST",
      "Too many parameters (limit: 1000)",
    );
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

  it(route("POST", "/typing"), async () => {
    const { alice } = s.seed;
    await refused(
      () => send(alice, "POST", "/typing", form({ op: "start", to: ones(40_000) })),
      400,
      "BAD_REQUEST",
      /^to/,
    );
  });

  it(route("POST", "/messages"), async () => {
    const { alice, general } = s.seed;
    // A megabyte is refused; a long message within the limit is cut to 10,000 characters, as Zulip does.
    await refused(
      () => send(alice, "POST", "/messages", form({ type: "stream", to: "general", topic: "t", content: huge(MiB) })),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
    const long = await withBystander(() =>
      send(
        alice,
        "POST",
        "/messages",
        form({ type: "stream", to: "general", topic: longTopic, content: huge(40_000, "é") }),
      ),
    );
    expect(long.status).toBe(200);
    const stored = s.t.store.getMessage(alice.id, long.body["id"] as number).message;
    expect([...stored.content]).toHaveLength(10_000);
    expect(stored.content.endsWith("\n[message truncated]")).toBe(true);
    expect(stored.topic).toBe(`${huge(57, "é")}...`);
    // `to`: 10 MB, then huge names, email lists and ID lists within the limit.
    await refused(
      () => send(alice, "POST", "/messages", form({ type: "direct", to: huge(10 * MiB, "a,"), content: "x" })),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
    const channel = await refused(
      () => send(alice, "POST", "/messages", form({ type: "stream", to: huge(200_000), topic: "t", content: "x" })),
      400,
      "STREAM_DOES_NOT_EXIST",
      /^Channel 'x{100}…' does not exist$/,
    );
    expect(channel.body["stream"]).toBe(`${huge(100)}…`);
    await refused(
      () =>
        send(alice, "POST", "/messages", form({ type: "direct", to: huge(2000, "nobody@test.dev,"), content: "x" })),
      400,
      "BAD_REQUEST",
      "Too many recipients (maximum 1000).",
    );
    await refused(
      () =>
        send(alice, "POST", "/messages", form({ type: "direct", to: `${huge(200_000, "n")}@test.dev`, content: "x" })),
      400,
      "BAD_REQUEST",
      /^Invalid email 'n{100}…'$/,
    );
    await refused(
      () =>
        send(
          alice,
          "POST",
          "/messages",
          form({ type: "direct", to: Array.from({ length: 40_000 }, () => general.id), content: "x" }),
        ),
      400,
      "BAD_REQUEST",
      "Too many recipients (maximum 1000).",
    );
  });

  it(route("GET", "/messages"), async () => {
    const { alice } = s.seed;
    const get = (params: Record<string, unknown>) => () =>
      send(alice, "GET", "/messages", form({ anchor: "newest", num_before: 10, num_after: 0, ...params }));
    await refused(get({ narrow: manyTerms(20_000) }), 413, "BAD_REQUEST", "Request body too large");
    const wordy = Array.from({ length: 10 }, () => ({
      operator: "search",
      operand: huge(1500, "word ").slice(0, 1999),
    }));
    await refused(
      get({ narrow: wordy }),
      400,
      "BAD_REQUEST",
      "narrow is too long (limit: 10000 characters of operands)",
    );
    await refused(
      get({ narrow: [{ operator: "search", operand: huge(200_000) }] }),
      400,
      "BAD_REQUEST",
      'narrow[0]["operand"] is too long (limit: 2000 characters)',
    );
    await refused(
      get({ narrow: [{ operator: "dm", operand: ones(40_000) }] }),
      400,
      "BAD_REQUEST",
      'narrow[0]["operand"] is too long (limit: 1000 items)',
    );
    await refused(
      get({ narrow: [{ operator: "sender", operand: huge(1999) }] }),
      400,
      "BAD_NARROW",
      /^Invalid narrow operator: unknown user x{100}…$/,
    );
    await refused(
      get({ narrow: [{ operator: huge(200_000), operand: "x" }] }),
      400,
      "BAD_NARROW",
      /^Invalid narrow operator: unknown operator x{100}…$/,
    );
    // A topic longer than any stored topic matches nothing (and builds no over-long index key).
    const topic = await withBystander(
      get({
        narrow: [
          { operator: "channel", operand: "general" },
          { operator: "topic", operand: longTopic },
        ],
      }),
    );
    expect(topic.status).toBe(200);
    expect(topic.body["messages"]).toEqual([]);
    await refused(
      () => send(alice, "GET", "/messages", form({ message_ids: Array.from({ length: 3_000_000 }, (_, i) => i) })),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
    await refused(get({ anchor: huge(200_000) }), 400, "BAD_REQUEST", "Invalid anchor");
    await refused(get({ anchor: "date", anchor_date: huge(200_000, "9") }), 400, "BAD_REQUEST", "Invalid anchor_date");
  });

  it(route("GET", "/messages/:message_id"), async () => {
    await refused(
      () => send(s.seed.alice, "GET", `/messages/${huge(2000, "9")}`, ""),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
  });

  it(route("POST", "/messages/flags"), async () => {
    const { alice } = s.seed;
    await refused(
      () =>
        send(
          alice,
          "POST",
          "/messages/flags",
          form({ op: "add", flag: "read", messages: Array.from({ length: 3_000_000 }, (_, i) => i) }),
        ),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
    await refused(
      () => send(alice, "POST", "/messages/flags", form({ op: "add", flag: huge(200_000), messages: [1] })),
      400,
      "BAD_REQUEST",
      /^Invalid flag: 'x{100}…'$/,
    );
    await refused(
      () => send(alice, "POST", "/messages/flags", form({ op: huge(200_000), flag: "read", messages: [1] })),
      400,
      "BAD_REQUEST",
      /^Invalid message flag operation: 'x{100}…'$/,
    );
  });

  it(route("POST", "/messages/flags/narrow"), async () => {
    const { alice } = s.seed;
    const flags = (narrow: unknown) => () =>
      send(
        alice,
        "POST",
        "/messages/flags/narrow",
        form({ anchor: "oldest", num_before: 0, num_after: 5000, op: "add", flag: "starred", narrow }),
      );
    const topic = await withBystander(
      flags([
        { operator: "channel", operand: "general" },
        { operator: "topic", operand: longTopic },
      ]),
    );
    expect(topic.status).toBe(200);
    expect(topic.body["processed_count"]).toBe(0);
  });

  it(route("POST", "/mark_topic_as_read"), async () => {
    const { alice, general } = s.seed;
    await refused(
      () => send(alice, "POST", "/mark_topic_as_read", form({ stream_id: general.id, topic_name: longTopic })),
      400,
      "BAD_REQUEST",
      /^No such topic 'é{100}…'$/,
    );
    await refused(
      () => send(alice, "POST", "/mark_topic_as_read", form({ stream_id: general.id, topic_name: huge(200_000) })),
      400,
      "BAD_REQUEST",
      /^No such topic 'x{100}…'$/,
    );
  });

  it(route("GET", "/users/me"), async () => {
    const r = await withBystander(() =>
      send(s.seed.alice, "GET", "/users/me", form({ client_gravatar: huge(200_000) })),
    );
    expect(r.status).toBe(200);
  });

  it(route("GET", "/users/:user_id_or_email"), async () => {
    const longEmail = `/users/${huge(2000)}@test.dev`;
    await refused(() => send(s.seed.alice, "GET", longEmail, ""), 400, "BAD_REQUEST", "No such user");
  });

  it(route("PATCH", "/users/:user_id_or_email"), async () => {
    const { owner, bob } = s.seed;
    await refused(
      () => send(owner, "PATCH", `/users/${bob.id}`, form({ full_name: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "Name too long!",
    );
    await refused(
      () => send(owner, "PATCH", `/users/${bob.id}`, form({ new_email: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "User not authorized to change user emails",
    );
    s.t.store.setCanChangeUserEmails(owner.id, true);
    const email = await refused(
      () => send(owner, "PATCH", `/users/${bob.id}`, form({ new_email: `${huge(200_000)}@x.dev` })),
      400,
      "BAD_REQUEST",
      /^Invalid email 'x+…'$/,
    );
    expect(String(email.body["msg"]).length).toBeLessThan(200);
  });

  it(route("POST", "/fetch_api_key"), async () => {
    const login = (params: Record<string, unknown>) => () => send(null, "POST", "/fetch_api_key", form(params));
    await refused(login({ username: huge(200_000), password: "x" }), 413, "BAD_REQUEST", "Request body too large");
    await refused(
      login({ username: "alice@test.dev", password: huge(MiB) }),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
    // The largest password the body allows is hashed like any other (scrypt's cost does not grow with it).
    await refused(
      login({ username: "owner@test.dev", password: huge(15_000) }),
      401,
      "AUTHENTICATION_FAILED",
      "Your username or password is incorrect",
    );
    await refused(
      login({ username: huge(15_000), password: "x" }),
      401,
      "AUTHENTICATION_FAILED",
      "Your username or password is incorrect",
    );
  });

  it(route("POST", "/jwt/fetch_api_key"), async () => {
    const jwt = (params: Record<string, unknown>) => () => send(null, "POST", "/jwt/fetch_api_key", form(params));
    await refused(jwt({ token: huge(MiB) }), 413, "BAD_REQUEST", "Request body too large");
    await refused(
      jwt({ token: `${huge(5000)}.${huge(5000)}.${huge(5000)}` }),
      400,
      "BAD_REQUEST",
      "Bad JSON web token",
    );
    const deep = await new SignJWT({
      email: "alice@test.dev",
      nested: JSON.parse(`${"[".repeat(500)}${"]".repeat(500)}`) as unknown,
    })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(JWT_SECRET));
    const r = await withBystander(jwt({ token: deep }));
    expect(r.body["email"]).toBe("alice@test.dev");
    const longEmail = await new SignJWT({ email: huge(10_000) })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(JWT_SECRET));
    await refused(jwt({ token: longEmail }), 401, "AUTHENTICATION_FAILED", "Your username or password is incorrect");
  });

  it(route("POST", "/users/me/api_key/regenerate"), async () => {
    const r = await withBystander(() =>
      send(s.seed.guest, "POST", "/users/me/api_key/regenerate", form({ [huge(500)]: huge(200_000) })),
    );
    expect(r.status).toBe(200);
  });

  it(route("GET", "/users/me/subscriptions"), async () => {
    await refused(
      () => send(s.seed.alice, "GET", "/users/me/subscriptions", form({ include_subscribers: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "Invalid include_subscribers",
    );
  });

  it(route("POST", "/users/me/subscriptions"), async () => {
    const { owner, alice } = s.seed;
    const subscribe = (params: Record<string, unknown>) => () =>
      send(owner, "POST", "/users/me/subscriptions", form(params));
    const product = {
      subscriptions: Array.from({ length: 100 }, (_, i) => ({ name: `c${i}` })),
      principals: Array.from({ length: 100 }, () => alice.id),
    };
    await refused(
      subscribe(product),
      400,
      "BAD_REQUEST",
      "Too many subscriptions requested (maximum 1000 channels times principals).",
    );
    await refused(
      subscribe({ subscriptions: Array.from({ length: 1000 }, (_, i) => ({ name: `new-${i}` })) }),
      400,
      "BAD_REQUEST",
      "Too many new channels in one request (maximum 100); create them in several requests.",
    );
    await refused(
      subscribe({ subscriptions: [{ name: huge(200_000) }] }),
      400,
      "BAD_REQUEST",
      "Channel name too long (limit: 60 characters).",
    );
    await refused(
      subscribe({ subscriptions: [{ name: "new", description: huge(200_000) }] }),
      400,
      "BAD_REQUEST",
      "Channel description too long (limit: 1024 characters).",
    );
  });

  it(route("DELETE", "/users/me/subscriptions"), async () => {
    const { owner } = s.seed;
    await refused(
      () => send(owner, "DELETE", "/users/me/subscriptions", form({ subscriptions: [huge(200_000)] })),
      400,
      "STREAM_DOES_NOT_EXIST",
      /^Channel 'x{100}…' does not exist$/,
    );
  });

  it(route("POST", "/register"), async () => {
    const { alice } = s.seed;
    const register = (params: Record<string, unknown>) => () => send(alice, "POST", "/register", form(params));
    await refused(
      register({ client_capabilities: { [huge(200_000)]: "x" } }),
      400,
      "BAD_REQUEST",
      /^client_capabilities\["x{100}…"\] is not a boolean$/,
    );
  });

  it(route("POST", "/users/me/presence"), async () => {
    const { alice } = s.seed;
    await refused(
      () => send(alice, "POST", "/users/me/presence", form({ status: huge(200_000) })),
      400,
      "BAD_REQUEST",
      /^Invalid status: x{100}…$/,
    );
  });

  it(route("GET", "/realm/presence"), async () => {
    const r = await withBystander(() =>
      send(s.seed.alice, "GET", "/realm/presence", form({ [huge(200)]: huge(200_000) })),
    );
    expect(r.status).toBe(200);
  });

  it(route("GET", "/users/:user_id_or_email/presence"), async () => {
    await refused(
      () => send(s.seed.alice, "GET", `/users/${huge(2000)}@test.dev/presence`, ""),
      400,
      "BAD_REQUEST",
      "No such user",
    );
    await refused(
      () => send(s.seed.alice, "GET", `/users/${huge(2000, "9")}/presence`, ""),
      400,
      "BAD_REQUEST",
      "No such user",
    );
  });

  it(route("POST", "/realm/playgrounds"), async () => {
    const add = (params: Record<string, unknown>) => () =>
      send(
        s.seed.owner,
        "POST",
        "/realm/playgrounds",
        form({ name: "P", pygments_language: "Python", url_template: "https://p.test/{code}", ...params }),
      );
    await refused(
      add({ url_template: huge(1000, "{code}{x}") }),
      400,
      "BAD_REQUEST",
      '"code" should be the only variable present in the URL template',
    );
    await refused(add({ url_template: huge(9000, "{") }), 400, "BAD_REQUEST", "Invalid URL template.");
  });

  it(route("DELETE", "/realm/playgrounds/:playground_id"), async () => {
    await refused(
      () => send(s.seed.owner, "DELETE", `/realm/playgrounds/${huge(2000, "9")}`, ""),
      400,
      "BAD_REQUEST",
      "Invalid playground",
    );
  });

  it(route("GET", "/realm/emoji"), async () => {
    const r = await withBystander(() =>
      send(s.seed.alice, "GET", "/realm/emoji", form({ [huge(200)]: huge(200_000) })),
    );
    expect(r.status).toBe(200);
  });

  it(route("POST", "/realm/emoji/:emoji_name"), async () => {
    const { alice } = s.seed;
    await refused(
      () => send(alice, "POST", `/realm/emoji/${huge(2000, "X")}`, ""),
      400,
      "BAD_REQUEST",
      "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
    );
    // Every check but the image's comes before the body matters: a long valid name with no file.
    await refused(
      () => send(alice, "POST", `/realm/emoji/${huge(2000)}`, form({ [huge(200)]: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "You must upload exactly one file.",
    );
    // The body streams (never held whole): 26 MiB that are not multipart hold no file; a
    // file over MAX_EMOJI_FILE_SIZE_MIB is refused while it streams (test/http/realm-emoji.test.ts).
    await refused(
      () => send(alice, "POST", "/realm/emoji/big", Buffer.alloc(26 * MiB, 120), { chunked: true }),
      400,
      "BAD_REQUEST",
      "You must upload exactly one file.",
    );
  });

  it(route("POST", "/users/me/avatar"), async () => {
    const { alice } = s.seed;
    await refused(
      () => send(alice, "POST", "/users/me/avatar", form({ [huge(200)]: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "You must upload exactly one avatar.",
    );
    // Streamed as the emoji route's: 26 MiB that are not multipart hold no file; a file over
    // MAX_AVATAR_FILE_SIZE_MIB is refused while it streams.
    await refused(
      () => send(alice, "POST", "/users/me/avatar", Buffer.alloc(26 * MiB, 120), { chunked: true }),
      400,
      "BAD_REQUEST",
      "You must upload exactly one avatar.",
    );
  });

  it(route("DELETE", "/realm/emoji/:emoji_name"), async () => {
    await refused(
      () => send(s.seed.owner, "DELETE", `/realm/emoji/${huge(2000)}`, ""),
      404,
      "BAD_REQUEST",
      /^Emoji 'x+…$/,
    );
  });

  it(route("POST", "/user_topics"), async () => {
    const { alice, general } = s.seed;
    const set = (params: Record<string, unknown>) => () =>
      send(alice, "POST", "/user_topics", form({ stream_id: general.id, topic: "t", visibility_policy: 1, ...params }));
    await refused(set({ topic: huge(100, "é") }), 400, "BAD_REQUEST", "topic is too long (limit: 60 characters)");
  });

  it(route("POST", "/users/me/subscriptions/properties"), async () => {
    const { alice, general } = s.seed;
    const change = (data: unknown) => () =>
      send(alice, "POST", "/users/me/subscriptions/properties", form({ subscription_data: data }));
    await refused(
      change([{ stream_id: general.id, property: huge(200_000), value: true }]),
      400,
      "BAD_REQUEST",
      'subscription_data[0]["property"] is too large',
    );
    await refused(
      change([{ stream_id: general.id, property: "color", value: huge(200_000) }]),
      400,
      "BAD_REQUEST",
      /^subscription_data\[0\]\["value"\]/,
    );
    // The largest list allowed, every change valid: one write.
    const r = await withBystander(
      change(
        Array.from({ length: 1000 }, (_, i) => ({ stream_id: general.id, property: "pin_to_top", value: i % 2 === 0 })),
      ),
    );
    expect(r.status).toBe(200);
  });

  it(route("PATCH", "/settings"), async () => {
    const { owner, alice } = s.seed;
    await refused(
      () => send(alice, "PATCH", "/settings", form({ full_name: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "Name too long!",
    );
    await refused(
      () => send(alice, "PATCH", "/settings", form({ timezone: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "Invalid timezone",
    );
    await refused(
      () => send(alice, "PATCH", "/settings", form({ default_language: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "Invalid default_language",
    );
    const sound = await refused(
      () => send(alice, "PATCH", "/settings", form({ notification_sound: huge(200_000) })),
      400,
      "BAD_REQUEST",
      /^Invalid notification sound 'x+/,
    );
    expect(String(sound.body["msg"]).length).toBeLessThan(200);
    const everyone = { user_ids: ones(50_000), group_ids: [1], skip_if_already_edited: true };
    await refused(
      () => send(alice, "PATCH", "/settings", form({ target_users: everyone, color_scheme: 2 })),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
    await refused(
      () => send(owner, "PATCH", "/settings", form({ target_users: everyone, presence_enabled: false })),
      400,
      "BAD_REQUEST",
      "Cannot change this setting for other users.",
    );
    await refused(
      () => send(alice, "PATCH", "/settings", form({ old_password: huge(100_000), new_password: huge(100_000) })),
      400,
      "BAD_REQUEST",
      "Wrong password!",
    );
  });

  it(route("PATCH", "/realm/user_settings_defaults"), async () => {
    const { owner, alice } = s.seed;
    await refused(
      () => send(alice, "PATCH", "/realm/user_settings_defaults", form({ emojiset: huge(200_000) })),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
    await refused(
      () => send(owner, "PATCH", "/realm/user_settings_defaults", form({ emojiset: huge(200_000) })),
      400,
      "BAD_REQUEST",
      "Invalid emojiset",
    );
    await refused(
      () => send(owner, "PATCH", "/realm/user_settings_defaults", form({ notification_sound: huge(200_000) })),
      400,
      "BAD_REQUEST",
      /^Invalid notification sound/,
    );
  });

  it(route("POST", "/drafts"), async () => {
    const { alice } = s.seed;
    const draft = (extra: Record<string, unknown>) => ({ type: "", to: [], topic: "", content: "c", ...extra });
    await refused(
      () => send(alice, "POST", "/drafts", form({ drafts: [draft({ type: "private", to: ones(40_000) })] })),
      400,
      "BAD_REQUEST",
      "Too many recipients (maximum 1000).",
    );
    await refused(
      () =>
        send(
          alice,
          "POST",
          "/drafts",
          form({ drafts: [draft({ type: "stream", to: ones(40_000), topic: longTopic })] }),
        ),
      400,
      "BAD_REQUEST",
      "Must specify exactly 1 channel ID for channel messages",
    );
    await refused(
      () => send(alice, "POST", "/drafts", form({ drafts: [draft({ content: huge(MiB) })] })),
      413,
      "BAD_REQUEST",
      "Request body too large",
    );
    await refused(
      () => send(alice, "POST", "/drafts", form({ drafts: [draft({ content: huge(100_000, " ") })] })),
      400,
      "BAD_REQUEST",
      "Message must not be empty",
    );
  });

  it(route("GET", "/drafts"), async () => {
    const r = await withBystander(() => send(s.seed.alice, "GET", "/drafts", form({ [huge(500)]: huge(200_000) })));
    expect(r.status).toBe(200);
  });

  it(route("PATCH", "/drafts/:draft_id"), async () => {
    const { alice } = s.seed;
    const draft = { type: "", to: [], topic: "", content: "c" };
    await refused(
      () => send(alice, "PATCH", `/drafts/${huge(2000, "9")}`, form({ draft })),
      404,
      "BAD_REQUEST",
      "Draft does not exist",
    );
    await refused(
      () => send(alice, "PATCH", "/drafts/1", form({ draft: { ...draft, to: ones(40_000), topic: huge(100_000) } })),
      404,
      "BAD_REQUEST",
      "Draft does not exist",
    );
  });

  it(route("DELETE", "/drafts/:draft_id"), async () => {
    await refused(
      () => send(s.seed.alice, "DELETE", `/drafts/${huge(2000, "9")}`, ""),
      404,
      "BAD_REQUEST",
      "Draft does not exist",
    );
  });

  it(route("GET", "/saved_snippets"), async () => {
    const r = await withBystander(() =>
      send(s.seed.alice, "GET", "/saved_snippets", form({ [huge(500)]: huge(200_000) })),
    );
    expect(r.status).toBe(200);
  });

  it(route("PATCH", "/saved_snippets/:saved_snippet_id"), async () => {
    const { alice } = s.seed;
    await refused(
      () => send(alice, "PATCH", `/saved_snippets/${huge(2000, "9")}`, form({ title: "t" })),
      404,
      "BAD_REQUEST",
      "Saved snippet does not exist.",
    );
  });

  it(route("DELETE", "/saved_snippets/:saved_snippet_id"), async () => {
    await refused(
      () => send(s.seed.alice, "DELETE", `/saved_snippets/${huge(2000, "9")}`, ""),
      404,
      "BAD_REQUEST",
      "Saved snippet does not exist.",
    );
  });

  it(route("POST", "/user_groups/create"), async () => {
    const { alice } = s.seed;
    const create = (params: Record<string, unknown>) => () =>
      send(alice, "POST", "/user_groups/create", form({ name: "worst", description: "", members: [], ...params }));
    await refused(
      create({ can_manage_group: { direct_members: ones(40_000), direct_subgroups: [] } }),
      400,
      "BAD_REQUEST",
      'can_manage_group["direct_members"] is too long (limit: 10000 items)',
    );
    await refused(
      create({ can_join_group: { direct_members: [], direct_subgroups: ones(40_000) } }),
      400,
      "BAD_REQUEST",
      'can_join_group["direct_subgroups"] is too long (limit: 1000 items)',
    );
    // Within the caps, repeated IDs count once.
    const many = await withBystander(
      create({
        members: Array.from({ length: 10_000 }, () => alice.id),
        can_mention_group: { direct_members: Array.from({ length: 10_000 }, () => alice.id), direct_subgroups: [] },
      }),
    );
    expect(many.status).toBe(200);
    expect(s.t.store.groupMembers(alice.id, many.body["group_id"] as number, true)).toEqual([alice.id]);
  });

  describe("an existing group", () => {
    let group = 0;
    beforeAll(() => {
      group = s.t.store.createGroup(s.seed.alice.id, { name: "bounded", members: [s.seed.alice.id] }).id;
    });
    const longId = huge(2000, "9");

    it(route("PATCH", "/user_groups/:user_group_id"), async () => {
      const { alice } = s.seed;
      const patch = (params: Record<string, unknown>) => () =>
        send(alice, "PATCH", `/user_groups/${group}`, form(params));
      await refused(
        () => send(alice, "PATCH", `/user_groups/${longId}`, form({ name: "x" })),
        400,
        "BAD_REQUEST",
        "Invalid user group",
      );
      await refused(
        patch({ name: huge(200_000) }),
        400,
        "BAD_REQUEST",
        "User group name cannot exceed 100 characters.",
      );
      await refused(
        patch({ can_manage_group: { new: { direct_members: ones(40_000), direct_subgroups: [] } } }),
        400,
        "BAD_REQUEST",
        'can_manage_group["new"]["direct_members"] is too long (limit: 10000 items)',
      );
      // `old` is only compared, never stored: a long one is simply not the current value.
      await refused(
        patch({ can_manage_group: { new: group, old: { direct_members: ones(40_000), direct_subgroups: [] } } }),
        400,
        "BAD_REQUEST",
        "'old' value does not match the expected value.",
      );
    });

    it(route("POST", "/user_groups/:user_group_id/deactivate"), async () => {
      await refused(
        () => send(s.seed.alice, "POST", `/user_groups/${longId}/deactivate`, ""),
        400,
        "BAD_REQUEST",
        "Invalid user group",
      );
    });

    it(route("POST", "/user_groups/:user_group_id/members"), async () => {
      const { alice } = s.seed;
      const members = (params: Record<string, unknown>) => () =>
        send(alice, "POST", `/user_groups/${group}/members`, form(params));
      await refused(
        () => send(alice, "POST", `/user_groups/${longId}/members`, form({ add: [alice.id] })),
        400,
        "BAD_REQUEST",
        "Invalid user group",
      );
      await refused(
        members({ delete: Array.from({ length: 10_000 }, () => 1_999_999) }),
        400,
        "BAD_REQUEST",
        "Invalid user ID: 1999999",
      );
    });

    it(route("GET", "/user_groups/:user_group_id/members"), async () => {
      const { alice } = s.seed;
      await refused(
        () => send(alice, "GET", `/user_groups/${longId}/members`, ""),
        400,
        "BAD_REQUEST",
        "Invalid user group",
      );
    });

    it(route("GET", "/user_groups/:user_group_id/members/:user_id"), async () => {
      const { alice } = s.seed;
      await refused(
        () => send(alice, "GET", `/user_groups/${group}/members/${longId}`, ""),
        400,
        "BAD_REQUEST",
        "No such user",
      );
      await refused(
        () => send(alice, "GET", `/user_groups/${longId}/members/${alice.id}`, ""),
        400,
        "BAD_REQUEST",
        "Invalid user group",
      );
    });

    it(route("POST", "/user_groups/:user_group_id/subgroups"), async () => {
      const { alice } = s.seed;
      const subgroups = (params: Record<string, unknown>) => () =>
        send(alice, "POST", `/user_groups/${group}/subgroups`, form(params));
      await refused(
        subgroups({ add: Array.from({ length: 1000 }, () => 1_999_999) }),
        400,
        "BAD_REQUEST",
        "Invalid user group ID: 1999999",
      );
    });

    it(route("GET", "/user_groups/:user_group_id/subgroups"), async () => {
      const { alice } = s.seed;
      await refused(
        () => send(alice, "GET", `/user_groups/${longId}/subgroups`, ""),
        400,
        "BAD_REQUEST",
        "Invalid user group",
      );
    });
  });

  describe("scheduled messages", () => {
    const inAYear = () => Math.floor(Date.now() / 1000) + 365 * 86_400;

    it(route("POST", "/scheduled_messages"), async () => {
      const { alice, general } = s.seed;
      const schedule = (params: Record<string, unknown>) => () =>
        send(
          alice,
          "POST",
          "/scheduled_messages",
          form({
            type: "stream",
            to: general.id,
            topic: "t",
            content: "x",
            scheduled_delivery_timestamp: inAYear(),
            ...params,
          }),
        );
      await refused(schedule({ content: huge(MiB) }), 413, "BAD_REQUEST", "Request body too large");
      await refused(schedule({ to: huge(200_000) }), 400, "BAD_REQUEST", "to is not valid JSON");
      await refused(
        schedule({ type: "direct", to: ones(40_000) }),
        400,
        "BAD_REQUEST",
        "Too many recipients (maximum 1000).",
      );
      await refused(
        schedule({ to: Array.from({ length: 40_000 }, () => general.id) }),
        400,
        "BAD_REQUEST",
        "Expected exactly one channel",
      );
      await refused(
        schedule({ scheduled_delivery_timestamp: Number.MAX_SAFE_INTEGER }),
        400,
        "BAD_REQUEST",
        "scheduled_delivery_timestamp is too large",
      );
      await refused(
        schedule({ scheduled_delivery_timestamp: -Number.MAX_SAFE_INTEGER }),
        400,
        "BAD_REQUEST",
        "Scheduled delivery time must be in the future.",
      );
      // Long content and topic are cut as a sent message's are.
      const long = await withBystander(schedule({ topic: longTopic, content: huge(40_000, "é") }));
      expect(long.status).toBe(200);
      const stored = s.t.store.scheduledMessages(alice.id).find((m) => m.id === long.body["scheduled_message_id"]);
      expect([...(stored?.content ?? "")]).toHaveLength(10_000);
      expect(stored?.recipient).toEqual({ type: "channel", channelId: general.id, topic: `${huge(57, "é")}...` });
    });

    it(route("GET", "/scheduled_messages"), async () => {
      // The owner has none scheduled (alice's include one of 10,000 characters).
      const r = await withBystander(() =>
        send(s.seed.owner, "GET", "/scheduled_messages", form({ [huge(500)]: huge(200_000) })),
      );
      expect(r.status).toBe(200);
    });

    it(route("PATCH", "/scheduled_messages/:scheduled_message_id"), async () => {
      const { alice } = s.seed;
      const id = s.t.store.scheduleMessage(alice.id, {
        to: { type: "direct", userIds: [alice.id] },
        content: "later",
        deliverAt: inAYear(),
        client: "test",
      }).id;
      const edit = (params: Record<string, unknown>) => () =>
        send(alice, "PATCH", `/scheduled_messages/${id}`, form(params));
      await refused(
        () => send(alice, "PATCH", `/scheduled_messages/${huge(2000, "9")}`, form({ content: "y" })),
        404,
        "BAD_REQUEST",
        "Scheduled message does not exist",
      );
      await refused(edit({ content: huge(MiB) }), 413, "BAD_REQUEST", "Request body too large");
      await refused(edit({ to: ones(40_000) }), 400, "BAD_REQUEST", "Too many recipients (maximum 1000).");
      await refused(
        edit({ to: `${huge(40_000, "[")}${huge(40_000, "]")}` }),
        400,
        "BAD_REQUEST",
        "to is not an integer or a list of integers",
      );
      await refused(
        edit({ scheduled_delivery_timestamp: Number.MAX_SAFE_INTEGER }),
        400,
        "BAD_REQUEST",
        "scheduled_delivery_timestamp is too large",
      );
      await refused(
        edit({
          type: "stream",
          to: s.seed.general.id,
          topic: huge(200_000),
          scheduled_delivery_timestamp: huge(400, "9"),
        }),
        400,
        "BAD_REQUEST",
        "scheduled_delivery_timestamp is too large",
      );
      const long = await withBystander(edit({ content: huge(40_000, "é") }));
      expect(long.status).toBe(200);
      expect([...(s.t.store.scheduledMessages(alice.id).find((m) => m.id === id)?.content ?? "")]).toHaveLength(10_000);
    });

    it(route("DELETE", "/scheduled_messages/:scheduled_message_id"), async () => {
      await refused(
        () => send(s.seed.alice, "DELETE", `/scheduled_messages/${huge(2000, "9")}`, ""),
        404,
        "BAD_REQUEST",
        "Scheduled message does not exist",
      );
    });
  });

  describe("devices and mobile push", () => {
    it(route("POST", "/register_client_device"), async () => {
      const r = await withBystander(() =>
        send(s.seed.bob, "POST", "/register_client_device", form({ [huge(500)]: huge(200_000) })),
      );
      expect(r.status).toBe(200);
      expect(typeof r.body["device_id"]).toBe("number");
    });

    it(route("POST", "/remove_client_device"), async () => {
      await refused(
        () => send(s.seed.bob, "POST", "/remove_client_device", form({ device_id: 1_999_999 })),
        400,
        "BAD_REQUEST",
        "Invalid `device_id`",
      );
    });

    it(route("POST", "/mobile_push/register"), async () => {
      const { bob } = s.seed;
      const register = (params: Record<string, unknown>) => () =>
        send(bob, "POST", "/mobile_push/register", form({ device_id: 1, ...params }));
      // Every field within bounds: this server has no bouncer.
      await refused(
        register({ push_key: huge(1000, "A"), push_key_id: 1 }),
        400,
        "PUSH_SERVICE_NOT_CONFIGURED",
        "Server is not configured to use push notification service.",
      );
    });

    it(route("POST", "/mobile_push/e2ee/test_notification"), async () => {
      await refused(
        () => send(s.seed.bob, "POST", "/mobile_push/e2ee/test_notification", form({ [huge(500)]: huge(200_000) })),
        400,
        "NO_ACTIVE_PUSH_DEVICE",
        "No active registered push device",
      );
    });
  });

  describe("invitations", () => {
    it(route("POST", "/invites"), async () => {
      const { owner } = s.seed;
      const inv = (params: Record<string, unknown>) => () =>
        send(owner, "POST", "/invites", form({ invitee_emails: "bounds@x.dev", stream_ids: [], ...params }));
      // 10,000 addresses (about 160 KB form-encoded): refused whole by the daily limit before any is looked at.
      await refused(
        inv({ invitee_emails: Array.from({ length: 10_000 }, (_, i) => `u${i}@x.dev`).join(",") }),
        400,
        "INVITATION_FAILED",
        /limits the number of invitations/,
      );
      await refused(inv({ invitee_emails: huge(MiB) }), 413, "BAD_REQUEST", "Request body too large");
      await refused(
        inv({ invite_expires_in_minutes: huge(400, "9") }),
        400,
        "BAD_REQUEST",
        "invite_expires_in_minutes is not an integer",
      );
      await refused(
        inv({ invite_expires_in_minutes: 2 ** 52 }),
        400,
        "BAD_REQUEST",
        "Invalid invite_expires_in_minutes",
      );
    });

    it(route("POST", "/invites/multiuse"), async () => {
      const multi = (params: Record<string, unknown>) => () =>
        send(s.seed.owner, "POST", "/invites/multiuse", form(params));
      // The longest welcome text allowed is stored as given.
      const r = await withBystander(multi({ welcome_message_custom_text: huge(8000, "é") }));
      expect(r.status).toBe(200);
    });

    it(route("GET", "/invites"), async () => {
      const r = await withBystander(() => send(s.seed.alice, "GET", "/invites", form({ [huge(500)]: huge(200_000) })));
      expect(r.status).toBe(200);
    });

    it(route("DELETE", "/invites/:invite_id"), async () => {
      await refused(
        () => send(s.seed.owner, "DELETE", `/invites/${huge(2000, "9")}`, ""),
        400,
        "BAD_REQUEST",
        "No such invitation",
      );
    });

    it(route("DELETE", "/invites/multiuse/:invite_id"), async () => {
      await refused(
        () => send(s.seed.owner, "DELETE", `/invites/multiuse/${huge(2000, "9")}`, ""),
        400,
        "BAD_REQUEST",
        "No such invitation",
      );
    });

    it(route("POST", "/invites/:invite_id/resend"), async () => {
      await refused(
        () => send(s.seed.owner, "POST", `/invites/${huge(2000, "9")}/resend`, ""),
        400,
        "BAD_REQUEST",
        "No such invitation",
      );
    });
  });

  describe("files", () => {
    const tus = { "Tus-Resumable": "1.0.0" };
    const notFound = "This file does not exist or has been deleted.";
    /** A real upload of alice's, as [realm, hash, random, name]. */
    const aliceFile = async () => {
      const form = new FormData();
      form.append("file", new Blob(["bounded"]), "b.txt");
      const r = await s.call(s.seed.alice, "POST", "/user_uploads", {}, { body: form });
      return String(r.body["url"]).split("/").slice(2);
    };

    it(route("POST", "/user_uploads"), async () => {
      const { alice } = s.seed;
      // A declared body far over the upload limit is refused before it is read.
      const boundary = "--zz";
      const big = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="${huge(200_000)}"\r\n\r\n`),
        Buffer.alloc(2 * MiB),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const multipart = { "Content-Type": `multipart/form-data; boundary=${boundary}` };
      await refused(
        () => send(alice, "POST", "/user_uploads", Buffer.alloc(101 * MiB + 1), { headers: multipart }),
        400,
        "BAD_REQUEST",
        "File is larger than this server's configured maximum upload size (100 MiB).",
      );
      // A 200 KB file name is cut to 255 bytes when stored; the original is kept (as Zulip keeps it), not echoed in
      // errors.
      const named = await withBystander(() =>
        send(alice, "POST", "/user_uploads", big.subarray(0, 300_000), { headers: multipart }),
      );
      expect(named.status).toBe(400);
      // 10,000 tiny parts: Django's field limit.
      const parts =
        Array.from(
          { length: 1001 },
          (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="p${i}"\r\n\r\n1\r\n`,
        ).join("") + `--${boundary}--\r\n`;
      await refused(
        () => send(alice, "POST", "/user_uploads", parts, { headers: multipart }),
        400,
        "BAD_REQUEST",
        "Too many parameters (limit: 1000)",
      );
    });

    for (const [method, path] of [
      ["GET", "/user_uploads/:realm_id/:path_hash/:path_random/:filename"],
      ["GET", "/user_uploads/download/:realm_id/:path_hash/:path_random/:filename"],
    ] as const) {
      it(rootRoute(method, path), async () => {
        const [realm, hash, random] = await aliceFile();
        const at = path.startsWith("/user_uploads/download") ? "/user_uploads/download" : "/user_uploads";
        await refused(
          () => send(s.seed.alice, "GET", `${at}/${realm}/${hash}/${random}/${huge(4000)}`, "", { root: true }),
          404,
          "BAD_REQUEST",
          notFound,
        );
        await refused(
          () => send(s.seed.alice, "GET", `${at}/${huge(4000, "9")}/${hash}/${random}/b.txt`, "", { root: true }),
          404,
          "BAD_REQUEST",
          notFound,
        );
        const ranged = await withBystander(() =>
          send(s.seed.alice, "GET", `${at}/${realm}/${hash}/${random}/b.txt`, "", {
            root: true,
            headers: { Range: `bytes=${huge(3000, "9")}-` },
          }),
        );
        expect(ranged.status).toBe(416);
      });
    }

    it(
      rootRoute("GET", "/user_uploads/thumbnail/:realm_id/:path_hash/:path_random/:filename/:thumbnail_format"),
      async () => {
        const [realm, hash, random] = await aliceFile();
        await refused(
          () =>
            send(s.seed.alice, "GET", `/user_uploads/thumbnail/${realm}/${hash}/${random}/b.txt/${huge(4000)}`, "", {
              root: true,
            }),
          404,
          "BAD_REQUEST",
          notFound,
        );
      },
    );

    it(rootRoute("GET", "/user_uploads/temporary/:token/:filename"), async () => {
      await refused(
        () => send(null, "GET", `/user_uploads/temporary/${huge(4000, "A")}/b.txt`, "", { root: true }),
        400,
        "BAD_REQUEST",
        "Invalid token",
      );
    });

    it(rootRoute("GET", "/external_content/:digest/:encoded_url"), async () => {
      // The signature is checked before anything is decoded or fetched.
      await refused(
        () => send(null, "GET", `/external_content/${huge(1000, "a")}/${huge(2000, "0")}`, "", { root: true }),
        403,
        "BAD_REQUEST",
        "Invalid signature",
      );
    });

    it(route("GET", "/user_uploads/:realm_id/:path_hash/:path_random/:filename"), async () => {
      const [realm, hash, random] = await aliceFile();
      await refused(
        () =>
          send(
            s.seed.alice,
            "GET",
            `/user_uploads/${realm}/${hash}/${random}/${huge(4000)}`,
            form({ [huge(500)]: huge(200_000) }),
          ),
        404,
        "BAD_REQUEST",
        notFound,
      );
    });

    it(route("GET", "/attachments"), async () => {
      const r = await withBystander(() =>
        send(s.seed.bob, "GET", "/attachments", form({ [huge(500)]: huge(200_000) })),
      );
      expect(r.status).toBe(200);
    });

    it(route("DELETE", "/attachments/:attachment_id"), async () => {
      await refused(
        () => send(s.seed.alice, "DELETE", `/attachments/${huge(2000, "9")}`, ""),
        400,
        "BAD_REQUEST",
        "Invalid attachment",
      );
    });

    it(route("POST", "/tus"), async () => {
      const { alice } = s.seed;
      const create = (headers: Record<string, string>) => () =>
        send(alice, "POST", "/tus", "", { headers: { ...tus, ...headers } });
      expect((await withBystander(create({ "Upload-Length": huge(400, "9") }))).status).toBe(400);
      expect((await withBystander(create({ "Upload-Length": String(200 * MiB) }))).status).toBe(413);
      expect(
        (await withBystander(create({ "Upload-Length": "10", "Upload-Metadata": `filename ${huge(3000, "!")}` })))
          .status,
      ).toBe(400);
      expect((await withBystander(create({ "Upload-Defer-Length": "1" }))).status).toBe(411);
    });

    for (const method of ["HEAD", "PATCH", "DELETE"]) {
      it(route(method, "/tus/:upload_id"), async () => {
        const r = await withBystander(() =>
          send(s.seed.alice, method, `/tus/${huge(3000, "a")}`, method === "PATCH" ? Buffer.alloc(64 * 1024) : "", {
            headers: { ...tus, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0" },
          }),
        );
        expect(r.status).toBe(404);
      });
    }
  });

  it("covers every endpoint of the route table, with the generated inputs below", () => {
    expect([...covered].sort()).toEqual(ENDPOINTS.map((e) => `${e.method} ${e.root ? "(root) " : ""}${e.path}`).sort());
  });
});

describe("worst inputs generated from each parameter's bounds (src/http/worst-inputs.ts)", () => {
  const key = (e: Endpoint) => `${e.method} ${e.root ? "(root) " : ""}${e.path}`;
  for (const endpoint of ENDPOINTS.filter(hasGeneratedWorstInputs)) {
    covered.add(key(endpoint));
    it(key(endpoint), async () => {
      // Parameters are parsed before any permission check: a member reaches every endpoint's parser.
      const caller = endpoint.auth === "none" ? null : s.seed.alice;
      for (const input of generatedWorstInputs(endpoint)) {
        const body = new URLSearchParams(input.params).toString();
        try {
          const root = endpoint.root === true;
          const sent = () => send(caller, endpoint.method, input.path, body, { root });
          await refused(sent, input.status, input.code, input.msg);
        } catch (error) {
          throw new Error(`${input.label}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    });
  }
});
