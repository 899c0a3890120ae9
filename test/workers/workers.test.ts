/**
 * `parley serve --workers 2` as the operator runs it: one supervisor, a writer and a
 * reader on one port (src/workers). Requests reach both workers (each answer names
 * its worker in X-Parley-Worker; every request here opens its own connection, which
 * the kernel gives to either); what one acknowledged the next request sees whichever
 * worker answers; a queue registered through one is polled through either; a
 * reader or the writer killed with SIGKILL is replaced while the other keeps
 * answering, with every acknowledged write kept; SIGTERM stops every process and
 * saves the queues; the data directory stays closed to an unrelated server; the writer
 * writes the missed-message email chunks an edit left stored.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";
import { CLI, killStartedProcesses, serveProcess, sleep, stopProcess } from "../support/serve-process.js";
import { workerCall, type WorkerAnswer } from "../support/worker-call.js";

const dirs: string[] = [];
const supervisors: ChildProcess[] = [];
afterAll(() => {
  for (const child of supervisors) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  killStartedProcesses();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Org {
  readonly dir: string;
  readonly auth: string;
  readonly realmId: number;
}

function newOrg(): Org {
  const dir = mkdtempSync(join(tmpdir(), "parley-workers-test-"));
  dirs.push(dir);
  const store = openStore(dir, { noSync: true });
  const { realm, owner } = store.createRealm({
    subdomain: "",
    name: "R",
    owner: { email: "o@r.dev", fullName: "Owner" },
  });
  store.subscribe(owner.id, { channels: [{ name: "general" }] });
  store.close();
  const auth = `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}`;
  return { dir, auth, realmId: realm.id };
}

/**
 * Leaves an edit's missed-message email chunks stored, as a crash right after the edit's commit
 * would: @**all** added (one user per later write) in a channel of three away users, and the
 * store closed before any later write ran. Answers the users and the message.
 */
function leaveEditEmailChunks(dir: string, realmId: number): { users: number[]; messageId: number } {
  const store = openStore(dir, { noSync: true, editEmailChunkUsers: 1 });
  try {
    const owner = store.findUserByEmail(realmId, "o@r.dev")!;
    const users = ["a", "b", "c"].map(
      (n) => store.createUser({ realmId: owner.realmId, email: `${n}@r.dev`, fullName: `Away ${n}` }).id,
    );
    store.subscribe(owner.id, { channels: [{ name: "general" }], principals: users });
    const to = { type: "channel", channel: "general", topic: "news" } as const;
    const messageId = store.sendMessage({ senderId: owner.id, to, content: "news" }).id;
    store.updateMessage(owner.id, messageId, { content: "@**all** news" });
    return { users, messageId };
  } finally {
    store.close();
  }
}

interface Workers {
  readonly child: ChildProcess;
  readonly url: string;
}

function startWorkers(dir: string, rateLimit = false): Promise<Workers> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      "serve",
      ...["--data", dir, "--port", "0", "--json", "--no-sync", "--workers", "2"],
      ...(rateLimit ? [] : ["--no-rate-limit"]),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  supervisors.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((ok, reject) => {
    child.once("exit", (code) => reject(new Error(`serve --workers exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).once("line", (line) =>
      ok({ child, url: (JSON.parse(line) as { url: string }).url }),
    );
  });
}

/** The worker processes the supervisor runs now. */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  return text === "" ? [] : text.split(" ").map(Number);
}

/** The worker processes by role ("writer", "reader-1"), from the role in their environment. */
function workerPids(pid: number): Record<string, number> {
  const named = childrenOf(pid).map((child) => {
    const env = readFileSync(`/proc/${child}/environ`, "utf8").split("\0");
    return [env.find((v) => v.startsWith("PARLEY_WORKER="))?.slice("PARLEY_WORKER=".length) ?? "?", child] as const;
  });
  return Object.fromEntries(named);
}

/**
 * Exited and reaped by the supervisor: only then are all its threads gone, and with
 * them its listening socket (a killed process's main thread is a zombie while its
 * other threads still hold its files).
 */
function gone(pid: number): boolean {
  return !existsSync(`/proc/${pid}`);
}

type Answer = WorkerAnswer;

/** One request on a connection of its own (so the kernel may hand it to either worker). */
const call = (url: string, auth: string, method: string, path: string, params: Record<string, string> = {}) =>
  workerCall(null, url, auth, method, path, params);

/** A keep-alive connection the kernel gave to `worker` (new ones until it does). */
async function connectionTo(url: string, worker: string): Promise<Agent> {
  for (;;) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const answered = await new Promise<string>((resolve, reject) => {
      const req = request(`${url}/api/v1/server_settings`, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.headers["x-parley-worker"])));
      });
      req.on("error", reject);
      req.end();
    });
    if (answered === worker) return agent;
    agent.destroy();
  }
}

/** A GET on a given connection: status, the worker that answered, body text. */
function getVia(agent: Agent, target: string, auth: string | null) {
  return new Promise<{ status: number; worker: string; body: string }>((resolve, reject) => {
    const headers = auth === null ? {} : { Authorization: auth };
    const req = request(target, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          worker: String(res.headers["x-parley-worker"] ?? ""),
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** Any request on a given connection: status, the worker that answered, Set-Cookie headers, body text. */
function sendVia(agent: Agent, method: string, target: string, headers: Record<string, string>, body = "") {
  return new Promise<{ status: number; worker: string; cookies: string[]; body: string }>((resolve, reject) => {
    const all = body === "" ? headers : { "Content-Type": "application/x-www-form-urlencoded", ...headers };
    const req = request(target, { method, agent, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          worker: String(res.headers["x-parley-worker"] ?? ""),
          cookies: res.headers["set-cookie"] ?? [],
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A tus request (uploads in progress): status and headers. */
function tus(url: string, auth: string, method: string, path: string, headers: Record<string, string>, body = "") {
  return new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const all = { Authorization: auth, "Tus-Resumable": "1.0.0", "Content-Length": String(body.length), ...headers };
    const req = request(`${url}${path}`, { method, agent: false, headers: all }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const contents = (answer: Answer): string[] =>
  ((answer.body["messages"] ?? []) as { content: string }[]).map((m) => m.content);
const newest = { anchor: "newest", num_before: "5", num_after: "0", apply_markdown: "false" };

async function until<T>(what: string, attempt: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const got = await attempt().catch(() => null);
    if (got !== null) return got;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("parley serve --workers 2", () => {
  it("serves from both workers, read-your-writes, queues across workers, shared limits and metrics, kill -9", async () => {
    const { dir, auth, realmId } = newOrg();
    const { child, url } = await startWorkers(dir, true);
    const { writer: writerPid, "reader-1": readerPid } = workerPids(child.pid!);
    expect(childrenOf(child.pid!)).toHaveLength(2);

    // Both workers answer on the one port, and every send is visible to the very next read.
    const seen = new Set<string>();
    let readers = 0;
    for (let i = 0; i < 12; i++) {
      const content = `message ${i}`;
      const sent = await call(url, auth, "POST", "/messages", { type: "stream", to: "general", topic: "t", content });
      expect(sent.status).toBe(200);
      const read = await call(url, auth, "GET", "/messages", newest);
      expect(contents(read).at(-1)).toBe(content);
      seen.add(sent.worker.split(">")[0]!).add(read.worker.split(">")[0]!);
      if (read.worker === "reader-1") readers++;
    }
    expect([...seen].sort()).toEqual(["reader-1", "writer"]);
    // The reader answered reads itself ("reader-1>writer" would be forwarded).
    expect(readers).toBeGreaterThan(0);

    // A queue registered through one worker is long-polled through whichever gets the poll.
    const pollers = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const registered = await call(url, auth, "POST", "/register", { event_types: '["message"]' });
      const queue = registered.body["queue_id"] as string;
      const poll = call(url, auth, "GET", "/events", { queue_id: queue, last_event_id: "-1" });
      await sleep(100);
      await call(url, auth, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: `poll ${i}` });
      const polled = await poll;
      expect(polled.status).toBe(200);
      expect((polled.body["events"] as { message: { content: string } }[])[0]!.message.content).toBe(`poll ${i}`);
      pollers.add(polled.worker.split(">")[0]!);
    }

    // Reads a reader answers carry the limit the writer keeps (test/workers/shared-limits covers the sharing).
    const answers: Answer[] = [];
    for (let i = 0; i < 16; i++) answers.push(await call(url, auth, "GET", "/messages", newest));
    expect(new Set(answers.map((a) => a.worker))).toEqual(new Set(["writer", "reader-1"]));
    for (const answer of answers) expect(answer.remaining).toBeLessThan(200);

    // Bad credentials are answered (and counted) by the writer, also when a reader gets them.
    const bad = `Basic ${Buffer.from("o@r.dev:wrong").toString("base64")}`;
    for (let i = 0; i < 8; i++) {
      const refused = await call(url, bad, "GET", "/messages", newest);
      expect(refused.status).toBe(401);
      expect(refused.worker).toMatch(/^(writer|reader-1>writer)$/);
    }

    // /metrics sums both workers: every GET /messages so far is counted once (12 above, 16 here).
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text
      .split("\n")
      .filter((l) => l.startsWith("parley_http_requests_total{") && l.includes('path="/api/v1/messages"'))
      .filter((l) => l.includes('method="GET"') && l.includes('status="200"'));
    expect(line.map((l) => Number(l.split(" ").at(-1)))).toEqual([28]);
    // What the writer committed is counted by the writer alone (a reader sees the same events on its stream).
    const sentLine = text.split("\n").filter((l) => l.startsWith("parley_messages_sent_total "));
    expect(sentLine.map((l) => Number(l.split(" ").at(-1)))).toEqual([18]);

    // Uploads in progress, which a reader starting must leave alone: they are the writer's. One streams
    // (its temporary file exists) while the reader is replaced, on a connection to the writer (one to the
    // reader would die with it); a tus one waits for its second half.
    // The streaming one keeps sending while it waits, as a client uploading a file does: uWS closes a
    // connection whose body brings less than 16 KB/s over 10 s ("socket hang up"), and replacing the reader
    // took longer than that on a loaded machine.
    const toWriter = await connectionTo(url, "writer");
    const boundary = "b0undary";
    const padding = "-".repeat(32 * 1024);
    let padded = 0;
    let streaming: NodeJS.Timeout | undefined;
    let uploading = (): void => undefined;
    const streamed = new Promise<Answer>((resolve, reject) => {
      const type = `multipart/form-data; boundary=${boundary}`;
      const headers = { Authorization: auth, "Content-Type": type, "Transfer-Encoding": "chunked" };
      const req = request(`${url}/api/v1/user_uploads`, { method: "POST", agent: toWriter, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
          resolve({ status: res.statusCode ?? 0, worker: "", remaining: NaN, body });
        });
      });
      req.on("error", (error) => {
        clearInterval(streaming);
        reject(error);
      });
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n`);
      req.write("Content-Type: text/plain\r\n\r\nfirst half, ");
      streaming = setInterval(() => {
        req.write(padding);
        padded++;
      }, 500);
      uploading = () => {
        clearInterval(streaming);
        req.end(`second half\r\n--${boundary}--\r\n`);
      };
    });
    const tmp = join(dir, "uploads", String(realmId), "tmp");
    await until("the upload's temporary file", () =>
      Promise.resolve(existsSync(tmp) && readdirSync(tmp).length > 0 ? true : null),
    );
    const created = await tus(url, auth, "POST", "/api/v1/tus", { "Upload-Length": "10" });
    expect(created.status).toBe(201);
    const location = String(created.headers["location"]);
    const octets = { "Content-Type": "application/offset+octet-stream" };
    expect((await tus(url, auth, "PATCH", location, { ...octets, "Upload-Offset": "0" }, "12345")).status).toBe(204);

    // kill -9 of the reader: once it is gone (with its listening socket), every request succeeds; it is replaced.
    process.kill(readerPid!, "SIGKILL");
    await until("the reader gone", () => Promise.resolve(gone(readerPid!) ? true : null));
    for (let i = 0; i < 10; i++) expect((await call(url, auth, "GET", "/messages", newest)).status).toBe(200);
    await until("a new reader", async () => {
      const now = childrenOf(child.pid!);
      return now.length === 2 && !now.includes(readerPid!) ? now : null;
    });
    await until("the new reader answering", async () => {
      const answer = await call(url, auth, "GET", "/messages", newest);
      return answer.worker === "reader-1" ? answer : null;
    });
    uploading();
    const uploaded = await streamed;
    toWriter.destroy();
    expect(uploaded.status).toBe(200);
    const file = await fetch(`${url}${String(uploaded.body["url"])}`, { headers: { Authorization: auth } });
    const content = `first half, ${padding.repeat(padded)}second half`;
    expect(await file.text()).toBe(content);
    // A temporary download URL one worker hands out opens on the other (the replaced reader included).
    const via = { writer: await connectionTo(url, "writer"), "reader-1": await connectionTo(url, "reader-1") };
    for (const [from, to] of [
      ["writer", "reader-1"],
      ["reader-1", "writer"],
    ] as const) {
      const handed = await getVia(via[from], `${url}/api/v1${String(uploaded.body["url"])}`, auth);
      expect(handed.worker).toBe(from);
      const temporary = (JSON.parse(handed.body) as { url: string }).url;
      expect(await getVia(via[to], `${url}${temporary}`, null)).toEqual({
        status: 200,
        worker: to,
        body: content,
      });
    }
    for (const agent of Object.values(via)) agent.destroy();
    const head = await tus(url, auth, "HEAD", location, {});
    expect([head.status, head.headers["upload-offset"]]).toEqual([200, "5"]);
    expect((await tus(url, auth, "PATCH", location, { ...octets, "Upload-Offset": "5" }, "67890")).status).toBe(200);

    // kill -9 of the writer: restarted; what it acknowledged is there.
    const last = await call(url, auth, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "ack",
    });
    expect(last.status).toBe(200);
    process.kill(writerPid!, "SIGKILL");
    await until("the writer back", async () => {
      const sent = await call(url, auth, "POST", "/messages", {
        type: "stream",
        to: "general",
        topic: "t",
        content: "after",
      });
      return sent.status === 200 ? sent : null;
    });
    expect(childrenOf(child.pid!)).not.toContain(writerPid);
    const read = await call(url, auth, "GET", "/messages", newest);
    expect(contents(read).slice(-2)).toEqual(["ack", "after"]);

    await stopProcess(child, "SIGTERM");
    expect(child.exitCode).toBe(0);
    expect(pollers.size).toBeGreaterThan(0);
  });

  it("a web session made through one worker is accepted by the other; logout through either ends it on both", async () => {
    const { dir, auth } = newOrg();
    const [email, apiKey] = Buffer.from(auth.slice("Basic ".length), "base64").toString().split(":") as [
      string,
      string,
    ];
    const { child, url } = await startWorkers(dir);
    const via = { writer: await connectionTo(url, "writer"), "reader-1": await connectionTo(url, "reader-1") };
    const origin = { Origin: url };
    for (const [loginAt, logoutAt] of [
      ["reader-1", "writer"],
      ["writer", "reader-1"],
    ] as const) {
      // The login form's POST: a reader forwards it to the writer, which makes the session.
      const login = await sendVia(
        via[loginAt],
        "POST",
        `${url}/accounts/login/`,
        origin,
        `username=${email}&api_key=${apiKey}`,
      );
      expect([login.status, login.worker]).toEqual([200, loginAt === "writer" ? "writer" : "reader-1>writer"]);
      const cookie = login.cookies.map((c) => c.split(";")[0]).join("; ");
      const csrf = /csrftoken=([^;]+)/u.exec(cookie)?.[1] ?? "";
      expect(cookie).toMatch(/sessionid=.+; csrftoken=.+/u);
      const me = `${url}/api/v1/users/me`;
      for (const worker of ["writer", "reader-1"] as const) {
        // Each worker answers the session's reads itself: the reader's store has the session at once.
        const read = await sendVia(via[worker], "GET", me, { Cookie: cookie });
        expect([read.status, read.worker, (JSON.parse(read.body) as { email: string }).email]).toEqual([
          200,
          worker,
          email,
        ]);
        // A write from the page: the CSRF token is checked wherever it arrives.
        const send = (headers: Record<string, string>) =>
          sendVia(
            via[worker],
            "POST",
            `${url}/api/v1/messages`,
            { Cookie: cookie, ...origin, ...headers },
            `type=stream&to=general&topic=web&content=from+${worker}`,
          );
        expect((await send({})).status).toBe(403);
        expect((await send({ "X-CSRFToken": csrf })).status).toBe(200);
      }
      const logout = await sendVia(
        via[logoutAt],
        "POST",
        `${url}/accounts/logout/`,
        { Cookie: cookie, ...origin, "X-CSRFToken": csrf },
        "x=1",
      );
      expect(logout.status).toBe(200);
      for (const worker of ["writer", "reader-1"] as const)
        expect((await sendVia(via[worker], "GET", me, { Cookie: cookie })).status).toBe(401);
    }
    for (const agent of Object.values(via)) agent.destroy();
    await stopProcess(child, "SIGTERM");
  });

  it("SIGTERM stops every worker and saves the event queues; an unrelated server is refused", async () => {
    const { dir, auth, realmId } = newOrg();
    // The writer alone writes what an edit left for later writes (a reader's store refuses writes).
    const edit = leaveEditEmailChunks(dir, realmId);
    const { child, url } = await startWorkers(dir);
    const workers = childrenOf(child.pid!);

    // A second server on the same directory, alone or with workers, is refused while this one runs.
    const alone = spawnSync(process.execPath, [CLI, "serve", "--data", dir, "--port", "0", "--no-sync"], {
      encoding: "utf8",
    });
    expect(alone.status).not.toBe(0);
    expect(alone.stderr).toMatch(/in use by/);

    // Registered on the writer: a reader's queues are its own, saved in its own file (test/workers/queues.test.ts).
    const toWriter = await connectionTo(url, "writer");
    const registered = await sendVia(
      toWriter,
      "POST",
      `${url}/api/v1/register`,
      { Authorization: auth },
      "event_types=%5B%22message%22%5D",
    );
    toWriter.destroy();
    const queue = (JSON.parse(registered.body) as { queue_id: string }).queue_id;
    await call(url, auth, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "kept" });
    await stopProcess(child, "SIGTERM");
    expect(child.exitCode).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    // Read at once, before the loop this open starts could write anything.
    const stopped = openStore(dir, { noSync: true });
    try {
      expect([...internals(stopped).tables.editEmailChunks.getKeys()]).toEqual([]);
      const holders = stopped.missedEmailBatches().filter((b) => b.items.some((i) => i.messageId === edit.messageId));
      expect(holders.map((b) => b.userId).sort((a, b) => a - b)).toEqual(edit.users);
    } finally {
      stopped.close();
    }

    // The writer saved its queue: a plain server restores it.
    const single = await serveProcess(dir);
    const polled = await call(single.url, auth, "GET", "/events", {
      queue_id: String(queue),
      last_event_id: "-1",
      dont_block: "true",
    });
    const events = polled.body["events"] as { type: string }[];
    expect(events.map((e) => e.type)).toEqual(["message", "restart"]);

    // And a server with workers is refused while that one runs.
    await expect(startWorkers(dir)).rejects.toThrow(/in use by/);
    await stopProcess(single.child, "SIGTERM");
  });
});
