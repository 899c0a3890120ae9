/**
 * GET /metrics: Prometheus text with request, event-queue, send, flag, LMDB, bitmap
 * cache and process metrics that move with traffic; readable from loopback, or from
 * elsewhere only with the bearer token.
 */
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import { isLoopback, mayReadMetrics } from "../../src/http/metrics.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";
import { startServer, type TestServer } from "../support/http.js";
import type { MessageRenderer } from "../../src/engine/index.js";
import { renderFullMarkdown } from "../../src/markdown/index.js";

let server: TestServer | null = null;
const cleanups: (() => void)[] = [];
afterEach(() => {
  server?.close();
  server = null;
  for (const c of cleanups.splice(0)) c();
});

/** The value of one sample (`name{labels} value`), or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function scrape(
  base: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string | null; text: string }> {
  const r = await fetch(`${base}/metrics`, { headers });
  return { status: r.status, type: r.headers.get("content-type"), text: await r.text() };
}

describe("GET /metrics", () => {
  it("serves Prometheus text whose counters and gauges move with traffic", async () => {
    server = await startServer();
    const s = server;
    const { owner } = s.seed;
    const first = await scrape(s.base);
    expect(first.status).toBe(200);
    expect(first.type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      "process_cpu_user_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_heap_size_used_bytes",
      "parley_lmdb_map_size_bytes",
      "parley_lmdb_pages_used",
      "parley_event_queues",
    ]) {
      expect(sample(first.text, name), name).toBeGreaterThan(-1);
    }
    const sends = (t: string) => sample(t, "parley_messages_sent_total") ?? 0;
    const posts = (t: string) =>
      sample(t, "parley_http_requests_total", { method: "POST", path: "/api/v1/messages", status: "200" }) ?? 0;

    const queue = await s.call(owner, "POST", "/register", { event_types: ["message", "update_message_flags"] });
    const sent = await s.call(owner, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "counted",
    });
    await s.call(owner, "POST", "/messages/flags", { messages: [sent.body["id"]], op: "add", flag: "starred" });
    await s.call(owner, "GET", "/messages/999999");
    // A long-poll left waiting.
    const controller = new AbortController();
    const waiting = fetch(`${s.base}/api/v1/events?queue_id=${String(queue.body["queue_id"])}&last_event_id=1`, {
      headers: { Authorization: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}` },
      signal: controller.signal,
    }).catch(() => null);
    await new Promise((r) => setTimeout(r, 100));

    const after = (await scrape(s.base)).text;
    controller.abort();
    await waiting;
    expect(sends(after)).toBe(sends(first.text) + 1);
    expect(posts(after)).toBe(posts(first.text) + 1);
    expect(
      sample(after, "parley_http_requests_total", {
        method: "GET",
        path: "/api/v1/messages/:message_id",
        status: "400",
      }),
    ).toBe(1);
    expect(
      sample(after, "parley_http_request_duration_seconds_count", { method: "POST", path: "/api/v1/messages" }),
    ).toBe(1);
    expect(sample(after, "parley_flag_updates_total", { flag: "starred", op: "add" })).toBe(1);
    expect(sample(after, "parley_flag_update_messages_total", { flag: "starred", op: "add" })).toBe(1);
    expect(sample(after, "parley_event_queues")).toBe(1);
    expect(sample(after, "parley_event_polls_waiting")).toBe(1);
    expect(sample(after, "parley_events_delivered_total")).toBe(2);
    expect(sample(after, "parley_bitmap_cache_bytes")).toBeGreaterThan(0);
    expect(sample(after, "parley_lmdb_pages_used")).toBeGreaterThanOrEqual(
      sample(first.text, "parley_lmdb_pages_used")!,
    );
    // The first scrape is counted too, under its own path.
    expect(sample(after, "parley_http_requests_total", { method: "GET", path: "/metrics", status: "200" })).toBe(1);
  });

  it("answers other methods with 405", async () => {
    server = await startServer();
    const r = await fetch(`${server.base}/metrics`, { method: "POST" });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET");
  });

  it("reads loopback as loopback in every notation, and nothing else without the token", () => {
    for (const a of [
      "127.0.0.1",
      "127.8.0.3",
      "::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "0000:0000:0000:0000:0000:0000:0000:0001",
      "0:0:0:0:0:0:0:1",
    ])
      expect(isLoopback(a), a).toBe(true);
    for (const a of ["192.0.2.2", "10.0.0.1", "::ffff:10.1.2.3", "fd00::2", "1127.0.0.1", ""])
      expect(isLoopback(a), a).toBe(false);
    expect(mayReadMetrics("10.0.0.1", "", "s3cret")).toBe(false);
    expect(mayReadMetrics("10.0.0.1", "Bearer wrong", "s3cret")).toBe(false);
    expect(mayReadMetrics("10.0.0.1", "Bearer s3cret", "s3cret")).toBe(true);
    expect(mayReadMetrics("10.0.0.1", "Basic s3cret", "s3cret")).toBe(false);
    expect(mayReadMetrics("10.0.0.1", "Bearer ", undefined)).toBe(false);
    expect(mayReadMetrics("10.0.0.1", "Bearer ", "")).toBe(false);
  });

  // Over real HTTP from a non-loopback address: this machine's own external interface
  // (connecting to it gives a peer address that is not loopback).
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && !i.internal && i.family === "IPv4")?.address;
  it(`refuses non-loopback clients without the token, over real HTTP (via ${external ?? "no external interface: access rules checked above only"})`, async () => {
    if (external === undefined) return;
    const open = async (token: string | undefined): Promise<{ server: ParleyServer; port: number }> => {
      const t: TempStore = tempStore();
      seedRealm(t.store);
      const srv = createServer(t.store, { rateLimit: false, ...(token === undefined ? {} : { metricsToken: token }) });
      const port = await srv.listen(0, "0.0.0.0");
      cleanups.push(() => {
        srv.close();
        t.cleanup();
      });
      return { server: srv, port };
    };
    const withToken = await open("t0ken-for-prometheus");
    const remote = `http://${external}:${withToken.port}`;
    const refused = await scrape(remote);
    expect(refused.status).toBe(401);
    expect(refused.text).toMatch(/Bearer with the metrics token/);
    expect(refused.text).not.toContain("parley_");
    expect((await scrape(remote, { Authorization: "Bearer not-it" })).status).toBe(401);
    const allowed = await scrape(remote, { Authorization: "Bearer t0ken-for-prometheus" });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain("parley_http_requests_total");
    expect((await scrape(`http://127.0.0.1:${withToken.port}`)).status).toBe(200);

    const noToken = await open(undefined);
    const closed = await scrape(`http://${external}:${noToken.port}`, { Authorization: "Bearer anything" });
    expect(closed.status).toBe(401);
    expect(closed.text).toMatch(/loopback clients only/);
  });
  it("logs a Markdown renderer failure with the message's ID and counts it; the message is kept as text", async () => {
    const logged: { message: string; error: unknown }[] = [];
    // A lookup that throws inside the renderer: a renderer bug, as far as the engine can tell.
    const broken: MessageRenderer = (content, context) =>
      renderFullMarkdown(content, {
        ...context,
        findUsersByName: () => {
          throw new Error("lookup exploded");
        },
      });
    server = await startServer({ logError: (message, error) => logged.push({ message, error }) }, { renderer: broken });
    const s = server;
    const before = sample((await scrape(s.base)).text, "parley_markdown_render_failures_total");
    expect(before).toBe(0);
    const sent = await s.call(s.seed.owner, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "hi @**Alice** *there*",
    });
    expect(sent.status).toBe(200);
    const id = sent.body["id"] as number;
    expect(logged).toHaveLength(1);
    expect(logged[0]!.message).toBe(`message ${id}: Markdown rendering failed; stored as plain text without mentions`);
    expect(String(logged[0]!.error)).toContain("lookup exploded");
    expect(sample((await scrape(s.base)).text, "parley_markdown_render_failures_total")).toBe(1);
    const stored = await s.call(s.seed.owner, "GET", `/messages/${id}`);
    expect((stored.body["message"] as { content: string }).content).toContain("@**Alice**");
    // A message that renders is not counted.
    await s.call(s.seed.owner, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "plain" });
    expect(sample((await scrape(s.base)).text, "parley_markdown_render_failures_total")).toBe(1);
  });
});
