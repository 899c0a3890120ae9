/**
 * Request logs (src/http/request-log.ts): one JSON line per request with the route
 * template, status, duration, bytes, user, realm and the request ID the client got
 * back; never credentials, API keys, parameters or message content; slow requests
 * flagged, long-polls exempt.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RequestLogOptions } from "../../src/http/request-log.js";
import { startServer, type TestServer } from "../support/http.js";

interface Line {
  level: string;
  time: string;
  msg: string;
  req_id: string;
  method: string;
  path: string;
  status: number | null;
  duration_ms: number;
  bytes: number;
  user_id: number | null;
  realm_id: number | null;
  slow?: boolean;
}

let server: TestServer | null = null;
afterEach(() => {
  server?.close();
  server = null;
});

/** A server whose request log is written to memory. */
async function logged(
  options: Omit<RequestLogOptions, "destination"> = {},
): Promise<{ server: TestServer; text: () => string; lines: () => Line[] }> {
  let text = "";
  server = await startServer({
    requestLog: { level: "info", ...options, destination: { write: (chunk: string) => void (text += chunk) } },
  });
  return {
    server,
    text: () => text,
    lines: () =>
      text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Line),
  };
}

describe("request log", () => {
  it("writes one line per request with the route template, status, duration, bytes, user, realm and the X-Request-Id", async () => {
    const { server: s, lines } = await logged();
    const { owner, realm } = s.seed;
    const sent = await s.call(owner, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "hello",
    });
    expect(sent.status).toBe(200);
    const id = sent.body["id"] as number;
    const raw = await fetch(`${s.base}/api/v1/messages/${id}`, {
      headers: { Authorization: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}` },
    });
    const rawBody = Buffer.from(await raw.arrayBuffer());
    const missing = await s.call(owner, "GET", "/no/such/route/x");
    expect(missing.status).toBe(404);

    const [send, get, unmatched] = lines();
    expect(lines()).toHaveLength(3);
    expect(send).toMatchObject({
      level: "info",
      msg: "request",
      method: "POST",
      path: "/api/v1/messages",
      status: 200,
      user_id: owner.id,
      realm_id: realm.id,
    });
    expect(send!.req_id).toBe(sent.headers.get("x-request-id"));
    expect(send!.duration_ms).toBeGreaterThan(0);
    expect(send!.bytes).toBe(Buffer.byteLength(JSON.stringify(sent.body)));
    expect(send!.slow).toBeUndefined();
    expect(new Date(send!.time).getTime()).toBeGreaterThan(0);
    expect(get).toMatchObject({
      method: "GET",
      path: "/api/v1/messages/:message_id",
      status: 200,
      bytes: rawBody.length,
      user_id: owner.id,
    });
    expect(get!.req_id).toBe(raw.headers.get("x-request-id"));
    expect(get!.req_id).not.toBe(send!.req_id);
    // The raw path is not logged: it could hold anything.
    expect(unmatched).toMatchObject({ path: "unmatched", status: 404 });
  });

  it("never logs credentials, API keys, parameters or message content", async () => {
    const { server: s, text, lines } = await logged();
    const { owner, alice } = s.seed;
    const content = "the launch code is 0xC0FFEE";
    const topic = "top secret topic";
    await s.call(owner, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic,
      content,
      api_key: alice.apiKey,
      password: "hunter2-password",
    });
    await s.call(owner, "GET", "/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: "search", operand: "launch code" }],
    });
    // A failed login: the wrong key must not be logged either.
    const bad = await fetch(`${s.base}/api/v1/users/me`, {
      headers: { Authorization: `Basic ${Buffer.from(`${alice.email}:wrong-key-ABCDEF`).toString("base64")}` },
    });
    expect(bad.status).toBe(401);
    expect(lines()).toHaveLength(3);
    expect(lines()[2]).toMatchObject({ path: "/api/v1/users/me", status: 401, user_id: null });
    const all = text();
    for (const secret of [
      owner.apiKey,
      alice.apiKey,
      "wrong-key-ABCDEF",
      "hunter2-password",
      "0xC0FFEE",
      "launch",
      topic,
      owner.email,
      alice.email,
      "Basic ",
    ])
      expect(all).not.toContain(secret);
  });

  it("flags requests over the threshold as slow, at warn, but not the long-poll", async () => {
    const { server: s, lines } = await logged({ slowMs: 0 });
    const { owner } = s.seed;
    await s.call(owner, "GET", "/users/me");
    const queue = await s.call(owner, "POST", "/register", { event_types: ["message"] });
    await s.call(owner, "GET", "/events", { queue_id: queue.body["queue_id"], last_event_id: -1, dont_block: true });
    const [me, register, events] = lines();
    expect(me).toMatchObject({ level: "warn", msg: "slow request", slow: true, path: "/api/v1/users/me" });
    expect(register).toMatchObject({ slow: true, path: "/api/v1/register" });
    expect(events).toMatchObject({ level: "info", path: "/api/v1/events", status: 200 });
    expect(events!.slow).toBeUndefined();
  });

  it("writes nothing below its level: at warn, only slow requests", async () => {
    const { server: s, lines } = await logged({ level: "warn", slowMs: 60_000 });
    await s.call(s.seed.owner, "GET", "/users/me");
    expect(lines()).toEqual([]);
  });
});
