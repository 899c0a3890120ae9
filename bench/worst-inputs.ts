/**
 * @module bench/worst-inputs
 * `npm run bench:worst [-- --scale 100k|1m|N] [--data DIR] [--runs N] [--out DIR] [--only REGEX]`
 * `npm run bench:worst -- --attacks [--only REGEX] [--out DIR]`: the hardening issue's
 * hostile loads instead (bench/attacks/runner.ts, also `npm run bench:attacks`).
 *
 * How long the worst input of every endpoint holds the server's event loop. The
 * server runs in a child process (bench/worst-inputs-server.ts) on a private copy of
 * a generated dataset and measures its own event-loop delay (perf_hooks
 * monitorEventLoopDelay, 1 ms resolution); meanwhile this process sends a cheap
 * request (GET /users/me) every 2 ms and records the slowest answer. Each input is
 * sent `--runs` times (default 3); the report gives the largest figures, per input
 * and per endpoint, against the 50 ms budget. Inputs: the refused ones (oversized
 * bodies, lists, narrows, strings; what test/http/bounds.test.ts checks for
 * correctness) and the largest accepted ones (5000-message windows and flag
 * updates, 10,000-character messages, 1000 subscriptions, a full /register; and, in
 * bench/worst-inputs-more.ts, every other route at its caps: groups of 10,000, a full
 * event queue, 100 MiB uploads, ...). Every route in the route table has an input: one
 * the lists leave out (a new endpoint) gets those generated from its parameters' bounds
 * (src/http/worst-inputs.ts, the inputs test/http/bounds.test.ts checks).
 * Report: bench/results/worst-inputs-<scale>.md. `--only` keeps the inputs whose
 * "ROUTE — label" matches (in table order, so later rows still meet the state earlier
 * ones left) and writes its partial report to bench/tmp unless --out says otherwise.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { ENDPOINTS } from "../src/http/endpoints/index.js";
import { generatedWorstInputs } from "../src/http/worst-inputs.js";
import { chooseDataset, ensureDataset, workingCopy } from "./dataset.js";
import { fileCases, moreCases } from "./worst-inputs-more.js";
import { editCases } from "./worst-inputs-edits.js";
import { sendCases } from "./worst-inputs-sends.js";
import { runAttacks } from "./attacks/runner.js";
import type { Manifest } from "../tools/generate/manifest.js";
import type { AddCase, Captured, Case, Dynamic, Step } from "./worst-inputs-case.js";

const log = (line: string) => process.stderr.write(line + "\n");
const BUDGET_MS = 50;
const MiB = 1024 * 1024;

interface Sent {
  readonly method: string;
  readonly path: string;
  readonly auth: string | null;
  readonly body: Buffer;
  readonly chunked?: boolean;
  readonly headers?: Record<string, string>;
  readonly root?: boolean;
}

interface Reply {
  readonly status: number;
  readonly bytes: number;
  readonly ms: number;
  /** The answer and its headers, kept only when asked for (captures). */
  readonly text?: string;
  readonly headers?: Record<string, string | string[] | undefined>;
}

interface Row {
  readonly route: string;
  readonly label: string;
  readonly requestBytes: number;
  readonly status: number;
  readonly responseBytes: number;
  readonly requestMs: number;
  readonly loopMaxMs: number;
  readonly pingMaxMs: number;
}

function send(port: number, c: Sent, keep = false): Promise<Reply> {
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded", ...c.headers };
  if (c.auth) headers["Authorization"] = c.auth;
  if (!c.chunked) headers["Content-Length"] = String(c.body.length);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path: c.root ? c.path : `/api/v1${c.path}`, method: c.method, headers, agent: false },
      (res) => {
        let bytes = 0;
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          if (keep) chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            bytes,
            ms: performance.now() - t0,
            ...(keep ? { text: Buffer.concat(chunks).toString("utf8"), headers: res.headers } : {}),
          }),
        );
      },
    );
    // A 413 may close the connection before the whole body is written, and before
    // the client has read the answer: that counts as status 0 (closed), not a failure.
    req.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error),
    );
    req.on("close", () => resolve({ status: 0, bytes: 0, ms: performance.now() - t0 }));
    if (c.chunked) {
      for (let i = 0; i < c.body.length; i += 64 * 1024) req.write(c.body.subarray(i, i + 64 * 1024));
      req.end();
    } else req.end(c.body);
  });
}

const form = (params: Record<string, unknown>) => {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) out.set(k, typeof v === "string" ? v : JSON.stringify(v));
  return Buffer.from(out.toString());
};
const x = (n: number, unit = "x") => unit.repeat(n);
const ones = (n: number) => Array.from({ length: n }, () => 1);

/** Appends inputs to `out`; the caller's default identity is the main subject. */
function adder(out: Case[], auth: { main: string }): AddCase {
  return (route, label, path, body, options = {}) => {
    const [method] = route.split(" ");
    out.push({
      route,
      label,
      method: method!,
      path,
      body,
      ...options,
      auth: options.auth === undefined ? auth.main : options.auth,
    });
  };
}

/** The worst inputs of every endpoint, refused and accepted. */
function cases(m: Manifest, auth: { main: string; owner: string; spares: string[] }): Case[] {
  const out: Case[] = [];
  const add = adder(out, auth);
  const general = m.generalChannelId;
  const generalName = m.channelNames[0]!;
  const manyTerms = Array.from({ length: 20_000 }, () => ["in", "home"]);
  const fewerTerms = Array.from({ length: 5000 }, () => ["in", "home"]);
  const longTopic = x(1000, "é");
  const window = { anchor: "newest", num_before: 5000, num_after: 0 };

  add("GET /server_settings", "64 KB body (limit 16 KB)", "/server_settings", Buffer.alloc(64 * 1024, "x"), {
    auth: null,
  });
  add("GET /server_settings", "plain", "/server_settings", Buffer.alloc(0), { auth: null });

  add(
    "POST /messages",
    "30 MB content (Content-Length)",
    "/messages",
    form({ type: "stream", to: generalName, topic: "t", content: x(30 * MiB) }),
  );
  add(
    "POST /messages",
    "30 MB content (chunked)",
    "/messages",
    form({ type: "stream", to: generalName, topic: "t", content: x(30 * MiB) }),
    { chunked: true },
  );
  add("POST /messages", "10 MB `to`", "/messages", form({ type: "direct", to: x(5 * MiB, "a,"), content: "x" }));
  add(
    "POST /messages",
    "250 KB body: 40k-char content, 2 KB topic (sent, cut to 10,000)",
    "/messages",
    form({ type: "stream", to: generalName, topic: longTopic, content: x(40_000, "é") }),
  );
  add(
    "POST /messages",
    "10,000 chars of markdown (sent)",
    "/messages",
    form({ type: "stream", to: generalName, topic: "bench", content: x(1000, "**b** _i_ ") }),
  );
  add(
    "POST /messages",
    "200 KB channel name",
    "/messages",
    form({ type: "stream", to: x(200_000), topic: "t", content: "x" }),
  );
  add("POST /messages", "40k recipient IDs", "/messages", form({ type: "direct", to: ones(40_000), content: "x" }));
  add(
    "POST /messages",
    "200 KB email",
    "/messages",
    form({ type: "direct", to: `${x(200_000, "n")}@example.com`, content: "x" }),
  );

  const getMessages = (label: string, params: Record<string, unknown>) =>
    add("GET /messages", label, "/messages", form(params));
  getMessages("20,000 narrow terms", { ...window, narrow: manyTerms });
  getMessages("5000 narrow terms", { ...window, narrow: fewerTerms });
  getMessages("200 KB search operand", { ...window, narrow: [{ operator: "search", operand: x(200_000) }] });
  getMessages("2 KB topic operand", {
    ...window,
    narrow: [
      { operator: "channel", operand: general },
      { operator: "topic", operand: longTopic },
    ],
  });
  getMessages("100 × 1999-char search operands", {
    ...window,
    narrow: Array.from({ length: 100 }, (_, i) => ({
      operator: "search",
      operand: `${x(1990, "word ")}${i}`.slice(0, 1999),
    })),
  });
  getMessages("40k-element dm operand", { ...window, narrow: [{ operator: "dm", operand: ones(40_000) }] });
  getMessages("40k message_ids", { message_ids: ones(40_000) });
  add(
    "GET /messages",
    "3M message_ids (24 MB)",
    "/messages",
    form({ message_ids: Array.from({ length: 3_000_000 }, (_, i) => i) }),
  );
  getMessages("200 KB anchor", { anchor: x(200_000), num_before: 10, num_after: 0 });
  getMessages("5000 newest, all messages (accepted)", window);
  getMessages("5000 newest of the 10,000-subscriber channel (accepted)", {
    ...window,
    narrow: [{ operator: "channel", operand: general }],
  });
  getMessages("5000 message_ids (accepted)", {
    message_ids: Array.from({ length: 5000 }, (_, i) => m.lastMessageId - i * 7),
  });
  getMessages("5000 search hits (accepted)", { ...window, narrow: [{ operator: "search", operand: m.commonWord }] });

  add("GET /messages/:message_id", "2000-digit ID", `/messages/${x(2000, "9")}`, Buffer.alloc(0));

  const flags = (label: string, params: Record<string, unknown>) =>
    add("POST /messages/flags", label, "/messages/flags", form(params));
  flags("3M IDs (24 MB)", { op: "add", flag: "read", messages: Array.from({ length: 3_000_000 }, (_, i) => i) });
  flags("40k IDs", { op: "add", flag: "read", messages: ones(40_000) });
  flags("200 KB flag", { op: "add", flag: x(200_000), messages: [1] });
  flags("5000 recent IDs, mark unread", {
    op: "remove",
    flag: "read",
    messages: Array.from({ length: 5000 }, (_, i) => m.lastMessageId - i),
  });
  flags("5000 recent IDs, star", {
    op: "add",
    flag: "starred",
    messages: Array.from({ length: 5000 }, (_, i) => m.lastMessageId - i),
  });

  const flagsNarrow = (label: string, params: Record<string, unknown>) =>
    add(
      "POST /messages/flags/narrow",
      label,
      "/messages/flags/narrow",
      form({ anchor: "newest", num_before: 5000, num_after: 0, op: "add", flag: "starred", ...params }),
    );
  flagsNarrow("20,000 narrow terms", { narrow: manyTerms });
  flagsNarrow("5000 narrow terms", { narrow: fewerTerms });
  flagsNarrow("2 KB topic operand", {
    narrow: [
      { operator: "channel", operand: general },
      { operator: "topic", operand: longTopic },
    ],
  });
  flagsNarrow("5000 messages of a channel (accepted)", { narrow: [{ operator: "channel", operand: general }] });
  flagsNarrow("5000 messages, mark unread (accepted)", { flag: "read", op: "remove", narrow: [] });

  add(
    "POST /mark_topic_as_read",
    "2 KB topic",
    "/mark_topic_as_read",
    form({ stream_id: general, topic_name: longTopic }),
  );
  add(
    "POST /mark_topic_as_read",
    "200 KB topic",
    "/mark_topic_as_read",
    form({ stream_id: general, topic_name: x(200_000) }),
  );
  add(
    "POST /mark_topic_as_read",
    "the biggest topic (accepted)",
    "/mark_topic_as_read",
    form({ stream_id: general, topic_name: m.bigTopic }),
  );

  for (const method of ["POST", "DELETE"]) {
    add(
      `${method} /messages/:message_id/reactions`,
      "200 KB emoji name",
      `/messages/${m.lastMessageId}/reactions`,
      form({ emoji_name: x(200_000) }),
    );
  }
  const smile = form({ emoji_name: "smile" });
  add("POST /messages/:message_id/reactions", "add (accepted)", `/messages/${m.lastMessageId}/reactions`, smile, {
    once: true,
    undo: { method: "DELETE", body: smile },
  });
  add("DELETE /messages/:message_id/reactions", "remove (accepted)", `/messages/${m.lastMessageId}/reactions`, smile, {
    once: true,
    prepare: [{ method: "POST", body: smile }],
    undo: { method: "POST", body: smile },
  });

  add("GET /users", "40k user_ids", "/users", form({ user_ids: ones(40_000) }));
  add("GET /users", "every user (accepted)", "/users", Buffer.alloc(0));
  add(
    "GET /users/me",
    "1001 parameters",
    "/users/me",
    Buffer.from(Array.from({ length: 1001 }, (_, i) => `p${i}=1`).join("&")),
  );
  add("GET /users/me", "100 KB parameter name", "/users/me", Buffer.from(`${x(100_000, "k")}=1`));
  add("GET /users/:user_id_or_email", "2 KB email", `/users/${x(2000)}@example.com`, Buffer.alloc(0));
  add(
    "PATCH /users/:user_id_or_email",
    "200 KB full_name",
    `/users/${m.subjects.main}`,
    form({ full_name: x(200_000) }),
    { auth: auth.owner },
  );
  add(
    "PATCH /users/:user_id_or_email",
    "2000 profile_data items",
    `/users/${m.subjects.main}`,
    form({ profile_data: Array.from({ length: 2000 }, (_, i) => ({ id: i, value: "v" })) }),
    { auth: auth.owner },
  );
  add(
    "GET /users/me/subscriptions",
    "with subscribers (accepted)",
    "/users/me/subscriptions",
    form({ include_subscribers: true }),
  );
  add(
    "POST /users/me/subscriptions",
    "5000 channels",
    "/users/me/subscriptions",
    form({ subscriptions: Array.from({ length: 5000 }, (_, i) => ({ name: `c${i}` })) }),
    { auth: auth.owner },
  );
  add(
    "POST /users/me/subscriptions",
    "40k principals",
    "/users/me/subscriptions",
    form({ subscriptions: [{ name: generalName }], principals: ones(40_000) }),
    { auth: auth.owner },
  );
  const benchChannels = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ name: `bench-${from + i}` }));
  add(
    "POST /users/me/subscriptions",
    "1000 new channels (limit 100)",
    "/users/me/subscriptions",
    form({ subscriptions: benchChannels(0, 1000) }),
    { auth: auth.owner },
  );
  add(
    "POST /users/me/subscriptions",
    "100 new channels (accepted)",
    "/users/me/subscriptions",
    form({ subscriptions: benchChannels(0, 100) }),
    {
      auth: auth.owner,
      once: true,
      warmup: form({ subscriptions: Array.from({ length: 100 }, (_, i) => ({ name: `warm-${i}` })) }),
    },
  );
  // The other 900 of bench-0..999, 100 a request, unmeasured: the 1000-channel rows below need them.
  const rest = Array.from({ length: 9 }, (_, i) => ({
    method: "POST",
    body: form({ subscriptions: benchChannels(100 * (i + 1), 100) }),
  }));
  add(
    "DELETE /users/me/subscriptions",
    "5000 names",
    "/users/me/subscriptions",
    form({ subscriptions: Array.from({ length: 5000 }, (_, i) => `c${i}`) }),
    { auth: auth.owner },
  );
  add(
    "DELETE /users/me/subscriptions",
    "200 KB name",
    "/users/me/subscriptions",
    form({ subscriptions: [x(200_000)] }),
    { auth: auth.owner },
  );
  add(
    "DELETE /users/me/subscriptions",
    "1000 channels (accepted)",
    "/users/me/subscriptions",
    form({ subscriptions: benchChannels(0, 1000).map((c) => c.name) }),
    { auth: auth.owner, once: true, prepare: rest },
  );
  add(
    "POST /users/me/subscriptions",
    "1000 existing channels (accepted)",
    "/users/me/subscriptions",
    form({ subscriptions: benchChannels(0, 1000) }),
    { auth: auth.owner, once: true },
  );
  add(
    "POST /users/me/subscriptions",
    "1000 principals to one channel (accepted)",
    "/users/me/subscriptions",
    form({ subscriptions: benchChannels(0, 1), principals: Array.from({ length: 1000 }, (_, i) => 100 + i) }),
    { auth: auth.owner, once: true },
  );
  add("GET /streams", "every channel (accepted)", "/streams", form({ include_all: true }), { auth: auth.owner });
  add("POST /register", "20,000 narrow terms", "/register", form({ narrow: manyTerms }));
  add("POST /register", "5000 narrow terms", "/register", form({ narrow: fewerTerms }));
  add(
    "POST /register",
    "5000 client_capabilities",
    "/register",
    form({ client_capabilities: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, true])) }),
  );
  add("POST /register", "full initial state (accepted)", "/register", Buffer.alloc(0));
  // After the full /register: these add groups, drafts and snippets that it would also carry.
  moreCases(add, m, auth);
  // Sends that reach thousands (wildcard and group mentions); before the edits, which delete the biggest topic.
  sendCases(add, m, auth);
  // Issue #28's routes, last: deleting the biggest topic cannot be undone.
  editCases(add, m, auth);
  return out;
}

/** The inputs, then the file uploads (built last: they hold 200 MB of bodies), then the generated ones. */
async function withFiles(list: Case[], auth: { main: string; owner: string }): Promise<Case[]> {
  const out = [...list];
  await fileCases(adder(out, auth), auth);
  return [...out, ...generatedCases(out, auth)];
}

/**
 * A route the lists above leave out (a new endpoint) gets the inputs generated from
 * its parameters' bounds (src/http/worst-inputs.ts), so every route has a row.
 */
function generatedCases(have: readonly Case[], auth: { main: string }): Case[] {
  const out: Case[] = [];
  const add = adder(out, auth);
  const key = (route: string, root: boolean) => `${route}${root ? " (root)" : ""}`;
  const covered = new Set(have.map((c) => key(c.route, c.root === true)));
  for (const endpoint of ENDPOINTS) {
    const route = `${endpoint.method} ${endpoint.path}`;
    if (covered.has(key(route, endpoint.root === true))) continue;
    for (const input of generatedWorstInputs(endpoint)) {
      const body = Buffer.from(new URLSearchParams(input.params).toString());
      const options = { root: endpoint.root === true, ...(endpoint.auth === "none" ? { auth: null } : {}) };
      add(route, `generated: ${input.label}`, input.path, body, options);
    }
  }
  return out;
}

/** Sends GET /users/me back to back (2 ms apart) until stopped; resolves with the slowest. */
function pinger(port: number, auth: string): { stop(): Promise<number> } {
  let running = true;
  let max = 0;
  const loop = (async () => {
    while (running) {
      const r = await send(port, { method: "GET", path: "/users/me", auth, body: Buffer.alloc(0) });
      max = Math.max(max, r.ms);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return max;
    },
  };
}

const valueOf = <T>(value: Dynamic<T>, ctx: Captured, run: number): T =>
  typeof value === "function" ? (value as (ctx: Captured, run: number) => T)(ctx, run) : value;

function resolveCase(c: Case, ctx: Captured, run: number): Sent {
  return {
    method: c.method,
    path: valueOf(c.path, ctx, run),
    auth: valueOf(c.auth, ctx, run),
    body: valueOf(c.body, ctx, run),
    ...(c.chunked ? { chunked: true } : {}),
    ...(c.headers ? { headers: c.headers } : {}),
    ...(c.root ? { root: true } : {}),
  };
}

/** Sends an unmeasured step of an input; it must answer 200. */
async function runStep(port: number, c: Case, step: Step, ctx: Captured, doing: string): Promise<void> {
  if (step.unless !== undefined && step.unless in ctx) return;
  const path = valueOf(step.path ?? c.path, ctx, -1);
  const headers = step.headers ?? c.headers;
  const reply = await send(
    port,
    {
      method: step.method,
      path,
      auth: valueOf(step.auth !== undefined ? step.auth : c.auth, ctx, -1),
      body: valueOf(step.body, ctx, -1),
      ...(headers ? { headers } : {}),
    },
    step.capture !== undefined,
  );
  if (reply.status !== (step.status ?? 200))
    throw new Error(`${c.route} — ${c.label}: ${doing} (${step.method} ${path}) answered ${reply.status}`);
  if (step.capture)
    step.capture(reply.text ? (JSON.parse(reply.text) as Record<string, unknown>) : {}, ctx, reply.headers ?? {});
}

function ask<T>(child: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once("message", (reply) => resolve(reply as T));
    child.send(message);
  });
}

async function startServer(dir: string): Promise<{ child: ChildProcess; port: number }> {
  // WORST_SERVER_NODE_ARGS: Node options for the measured server (e.g. --cpu-prof), to profile it.
  const execArgv = (process.env["WORST_SERVER_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== "");
  const child = fork(join("dist", "bench", "worst-inputs-server.js"), ["--data", dir], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
    execArgv,
  });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) =>
      reject(new Error(`the server exited with code ${code}: is the build current (npm run build)?`)),
    );
    lines.on("line", (line) => {
      const match = /^listening on (\d+)/.exec(line);
      if (match) resolve(Number(match[1]));
    });
  });
  return { child, port };
}

const fmt = (n: number) => n.toFixed(1);

async function main(): Promise<number> {
  const text = { type: "string" } as const;
  const options = { scale: text, data: text, runs: text, out: text, only: text, attacks: { type: "boolean" } } as const;
  const { values } = parseArgs({ options, strict: true });
  // The hardening issue's hostile loads (bench/attacks): their own runner and report.
  if (values.attacks) {
    return runAttacks({
      ...(values.only !== undefined ? { only: values.only } : {}),
      ...(values.out !== undefined ? { out: values.out } : {}),
    });
  }
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, log);
  const runs = Number(values.runs ?? 3);
  const work = workingCopy(choice.dir);
  const store = openStore(work.dir);
  const basic = (id: number) => {
    const u = store.getUser(id);
    return "Basic " + Buffer.from(`${u.email}:${u.apiKey}`).toString("base64");
  };
  // `spares`: users no other input uses, one per send of the input that regenerates its caller's API key.
  const spares = Array.from({ length: runs + 1 }, (_, i) => basic(manifest.subjects.dmPartner + 1 + i));
  const auth = { main: basic(manifest.subjects.main), owner: basic(manifest.ownerId), spares };
  store.close();

  log("building inputs…");
  const only = values.only === undefined ? null : new RegExp(values.only);
  const all = (await withFiles(cases(manifest, auth), auth)).filter(
    (c) => only === null || only.test(`${c.route} — ${c.label}`),
  );
  const { child, port } = await startServer(work.dir);
  const stop = () => {
    if (child.connected) child.send("stop");
    else if (child.exitCode === null) child.kill("SIGTERM");
  };
  process.once("SIGINT", () => {
    stop();
    process.exit(130);
  });
  const rows: Row[] = [];
  const captured: Captured = {};
  const loadAtStart = loadavg();
  try {
    // Warm-up: the first requests compile the hot paths; that is not what is measured.
    for (let i = 0; i < 50; i++)
      await send(port, { method: "GET", path: "/users/me", auth: auth.main, body: Buffer.alloc(0) });
    await send(port, {
      method: "GET",
      path: "/messages",
      auth: auth.main,
      body: form({ anchor: "newest", num_before: 100, num_after: 0 }),
    });
    for (const c of all) {
      let row: Row | null = null;
      // One unmeasured send of the same input first: a server that has run for a while
      // has compiled its paths for large inputs too (a 10,000-character Markdown send
      // takes ~150 ms cold and ~15 ms warm); the cold figure is the JIT, not the work.
      for (const step of c.prepare ?? []) await runStep(port, c, step, captured, "preparing");
      if (!c.once) {
        await send(port, resolveCase(c, captured, -1));
        if (c.undo) await runStep(port, c, c.undo, captured, "undoing");
      } else if (c.warmup) await send(port, { ...resolveCase(c, captured, -1), body: c.warmup });
      for (let run = 0; run < runs; run++) {
        const sent = resolveCase(c, captured, run);
        await ask(child, "reset");
        const ping = pinger(port, auth.main);
        const reply = await send(port, sent);
        // Let the loop settle so a block that ends with the reply is sampled.
        await new Promise((resolve) => setTimeout(resolve, 20));
        const pingMaxMs = await ping.stop();
        const loop = await ask<{ maxMs: number; cpuMs: number }>(child, "read");
        const next: Row = {
          route: c.route,
          label: c.label,
          requestBytes: sent.body.length,
          status: reply.status,
          responseBytes: reply.bytes,
          requestMs: reply.ms,
          loopMaxMs: loop.maxMs,
          pingMaxMs,
        };
        if (!row || next.loopMaxMs > row.loopMaxMs) row = next;
        log(
          `  run ${run + 1}: loop max ${fmt(next.loopMaxMs)} ms, request ${fmt(next.requestMs)} ms, server CPU ${fmt(loop.cpuMs)} ms`,
        );
        if (c.undo) await runStep(port, c, c.undo, captured, "undoing");
      }
      rows.push(row!);
      log(
        `${row!.route} — ${row!.label}: ${row!.status}, ${row!.responseBytes} B back, loop max ${fmt(row!.loopMaxMs)} ms, ping max ${fmt(row!.pingMaxMs)} ms`,
      );
    }
  } finally {
    stop();
  }

  const routes = ENDPOINTS.map((e) => `${e.method} ${e.path}`);
  const missing = routes.filter((r) => !rows.some((row) => row.route === r));
  // Routes without an input are listed as such, not ranked.
  const perRoute = routes.flatMap((r) => {
    const mine = rows.filter((row) => row.route === r);
    if (mine.length === 0) return [];
    return [{ route: r, worst: mine.reduce((a, b) => (b.loopMaxMs > a.loopMaxMs ? b : a)) }];
  });
  const over = rows.filter((r) => r.loopMaxMs > BUDGET_MS);
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(" ");
  const loadAtEnd = loadavg();
  const md = [
    `# Worst inputs per endpoint: ${choice.label} messages`,
    "",
    `\`npm run bench:worst -- --scale ${choice.label}\`. The server (a child process, same 2-core machine, shared with other work) measures its event-loop delay with \`monitorEventLoopDelay\` (1 ms resolution) while the bench sends one input and a cheap \`GET /users/me\` every 2 ms. Each input was sent once unmeasured (so the JIT has compiled its path), then ${runs} times; the run with the largest loop delay is shown. Inputs that change what a repeat would meet are undone after each send (a reaction removed, a deleted draft or queue recreated, a completed tus upload replaced by a new one); those that cannot be (channel creation, unsubscribing) are not sent unmeasured, and channel creation is warmed with 100 other names. Setup requests (creating the groups, filling an event queue with 10,000 events, uploading the files) are not measured. "loop max" is the longest the event loop was held; "ping max" the slowest concurrent cheap request (it includes the client's own loop and network time). Budget: ${BUDGET_MS} ms.`,
    "",
    `Load average (1, 5, 15 min) at the start: ${load(loadAtStart)}; at the end: ${load(loadAtEnd)} (the machine has 2 cores).`,
    "",
    `Inputs over budget: ${over.length === 0 ? "none" : over.map((r) => `${r.route} (${r.label}): ${fmt(r.loopMaxMs)} ms`).join("; ")}.`,
    ...(missing.length > 0 ? ["", `Routes without an input: ${missing.join(", ")}.`] : []),
    "",
    "## Per endpoint (its worst input)",
    "",
    "| endpoint | worst input | status | loop max ms | ping max ms |",
    "|---|---|---:|---:|---:|",
    ...perRoute.map(
      ({ route, worst }) =>
        `| ${route} | ${worst.label} | ${worst.status} | ${fmt(worst.loopMaxMs)} | ${fmt(worst.pingMaxMs)} |`,
    ),
    "",
    "## Every input",
    "",
    "| endpoint | input | request bytes | status | response bytes | request ms | loop max ms | ping max ms |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.route} | ${r.label} | ${r.requestBytes} | ${r.status} | ${r.responseBytes} | ${fmt(r.requestMs)} | ${fmt(r.loopMaxMs)} | ${fmt(r.pingMaxMs)} |`,
    ),
    "",
  ].join("\n");
  const outDir = values.out ?? (only === null ? join("bench", "results") : join("bench", "tmp"));
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `worst-inputs-${choice.label}.md`);
  writeFileSync(file, md);
  log(md);
  log(`wrote ${file}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench:worst: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
