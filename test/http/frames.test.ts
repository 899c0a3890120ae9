/**
 * The framed hop between the workers of `parley serve --workers`: http/frame-forward on a
 * uWS listener (as a worker's public port) sending to http/frame-listener (as another
 * worker's internal listener) over a Unix socket, through a byte-for-byte relay the test
 * can cut. The listener feeds a pipeline that answers by path, so what is checked is the
 * transport: requests multiplexed on one connection, a large body's flow control, a
 * client's leaving, a connection lost under requests in flight, malformed frames.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request, type IncomingHttpHeaders } from "node:http";
import { connect, createServer as createNetServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import uWS from "uWebSockets.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Admission, Pipeline } from "../../src/http/admission.js";
import type { BodySource } from "../../src/http/body-source.js";
import { FrameForwarder } from "../../src/http/frame-forward.js";
import { listenFrames, type FrameListener } from "../../src/http/frame-listener.js";
import { FRAME, FRAME_WINDOW, FrameDecoder, FrameError, writeFrame } from "../../src/http/frames.js";
import { BodyBudget } from "../../src/http/load-limits.js";
import { readHead } from "../../src/http/request.js";
import { RequestLog } from "../../src/http/request-log.js";

const dir = mkdtempSync(join(tmpdir(), "parley-frames-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let sockets = 0;
const socketPath = (): string => join(dir, `s${++sockets}.sock`);

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
};

/** What the pipeline behind the listener saw. */
interface Seen {
  /** Path and client address of each request handled, in order. */
  handled: string[];
  /** Held requests (/hold/NAME) by name: release answers them. */
  held: Map<string, { release: () => void; left: boolean }>;
  /** Requests whose answer went nowhere (finish with delivered false). */
  undelivered: string[];
  /** /stream: the most body bytes that had arrived but were not yet read. */
  maxAhead: number;
  errors: string[];
}

/**
 * A pipeline answering by path: /echo (path, address, body length), /hold/NAME (until the
 * test releases it or the client leaves), /stream (reads its streamed body late and slowly, answers
 * its length and SHA-256).
 */
function pipeline(seen: Seen): Pipeline {
  const log = new RequestLog({ level: "silent" });
  return {
    admit(head): Admission {
      const mode = head.url === "/stream" ? "stream" : "buffer";
      return {
        head,
        note: log.start(head.method, 0),
        counted: false,
        refusal: null,
        mode,
        maxBodyBytes: 1e9,
        caller: null,
      };
    },
    async handle(admission, body, signal) {
      const { head } = admission;
      seen.handled.push(`${head.method} ${head.url}${head.query ? `?${head.query}` : ""} from ${head.remoteAddress}`);
      if (head.url.startsWith("/hold/")) {
        const name = head.url.slice("/hold/".length);
        await new Promise<void>((resolve) => {
          const entry = { release: resolve, left: false };
          seen.held.set(name, entry);
          signal().addEventListener("abort", () => {
            entry.left = true;
            resolve();
          });
        });
        return { reply: { status: 200, body: JSON.stringify({ held: name }) }, headers: [] };
      }
      if (head.url === "/stream") {
        const source = body as BodySource;
        const hash = createHash("sha256");
        let read = 0;
        // Nothing read for a while: without flow control the whole body would pile up here meanwhile.
        await new Promise((r) => setTimeout(r, 300));
        for await (const chunk of source) {
          seen.maxAhead = Math.max(seen.maxAhead, source.received - read);
          read += chunk.length;
          hash.update(chunk);
          await new Promise((r) => setTimeout(r, 1));
        }
        return {
          reply: { status: 200, body: JSON.stringify({ bytes: read, sha256: hash.digest("hex") }) },
          headers: [],
        };
      }
      const bytes = Buffer.isBuffer(body) ? body.length : -1;
      const answer = { url: head.url, query: head.query, address: head.remoteAddress, bytes };
      return { reply: { status: 201, body: JSON.stringify(answer) }, headers: [["X-Echo", "yes"]] };
    },
    finish(admission, reply, headers, delivered) {
      if (!delivered) seen.undelivered.push(admission.head.url);
      return { reply, headers: [...headers, ["X-Parley-Worker", "writer"]] };
    },
    budget: new BodyBudget(64 * 1024 * 1024),
    maxConnections: 0,
    logError: (message) => seen.errors.push(message),
  };
}

/** Relays bytes between the forwarder and the listener, one relayed pair per connection, so a test can cut one. */
function relay(to: string): Promise<{ path: string; connections: Socket[]; server: Server }> {
  const path = socketPath();
  const connections: Socket[] = [];
  const server = createNetServer((client) => {
    const upstream = connect(to);
    connections.push(client);
    client.pipe(upstream).pipe(client);
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", cut);
    upstream.on("close", cut);
    client.on("error", cut);
    upstream.on("error", cut);
  });
  return new Promise((resolve) => server.listen(path, () => resolve({ path, connections, server })));
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function call(port: number, method: string, path: string, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("framed forwarding between workers", () => {
  const closing: (() => void)[] = [];
  afterEach(() => {
    for (const close of closing.splice(0).reverse()) close();
  });

  async function setup(connections = 1) {
    const seen: Seen = { handled: [], held: new Map(), undelivered: [], maxAhead: 0, errors: [] };
    const listenerPath = socketPath();
    const listener: FrameListener = await listenFrames(pipeline(seen), listenerPath);
    closing.push(() => listener.close());
    const hop = await relay(listenerPath);
    closing.push(() => {
      hop.server.close();
      for (const c of hop.connections) c.destroy();
    });
    const logs: string[] = [];
    const forwarder = new FrameForwarder(hop.path, "reader-1", { connections, log: (l) => logs.push(l) });
    const app = uWS.App().any("/*", (res, req) => forwarder.forward(res, req, readHead(req, res)));
    const port = await new Promise<number>((resolve, reject) =>
      app.listen("127.0.0.1", 0, (socket) => {
        if (!socket) return reject(new Error("uWS did not listen"));
        closing.push(() => {
          uWS.us_listen_socket_close(socket);
          forwarder.close();
        });
        resolve(uWS.us_socket_local_port(socket));
      }),
    );
    return { seen, hop, forwarder, port, logs };
  }

  it("multiplexes requests on one connection: answers reach their own clients while another is held", async () => {
    const { seen, hop, port } = await setup(1);
    const held = call(port, "GET", "/hold/a");
    await until(() => seen.held.has("a"));
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0 ? call(port, "GET", `/echo/${i}?n=${i}`) : call(port, "POST", `/echo/${i}`, "x".repeat(i * 1000)),
      ),
    );
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(201);
      expect(answer.headers["x-echo"]).toBe("yes");
      expect(answer.headers["x-parley-worker"]).toBe("reader-1>writer");
      const body = JSON.parse(answer.body) as { url: string; query: string; address: string; bytes: number };
      expect(body).toEqual({
        url: `/echo/${i}`,
        query: i % 2 === 0 ? `n=${i}` : "",
        address: "127.0.0.1",
        bytes: i % 2 === 0 ? 0 : i * 1000,
      });
    });
    seen.held.get("a")!.release();
    expect(JSON.parse((await held).body)).toEqual({ held: "a" });
    expect(hop.connections).toHaveLength(1);
  });

  it("streams a large body with flow control: the other side never holds much more than a window unread", async () => {
    const { seen, port } = await setup(1);
    const body = Buffer.alloc(12 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE(i, i);
    const answer = await call(port, "POST", "/stream", body);
    expect(answer.status).toBe(200);
    const expected = { bytes: body.length, sha256: createHash("sha256").update(body).digest("hex") };
    expect(JSON.parse(answer.body)).toEqual(expected);
    // The window plus what one client read may add (uWS hands over up to 512 KiB at a time); not the whole body.
    expect(seen.maxAhead).toBeGreaterThan(0);
    expect(seen.maxAhead).toBeLessThanOrEqual(FRAME_WINDOW + 1024 * 1024);
  });

  it("a client leaving a forwarded long-poll ends it on the other side, and the connection serves on", async () => {
    const { seen, hop, forwarder, port } = await setup(1);
    const req = request({ host: "127.0.0.1", port, path: "/hold/poll", agent: false });
    req.on("error", () => undefined);
    req.end();
    await until(() => seen.held.has("poll"));
    req.destroy();
    await until(() => seen.held.get("poll")!.left);
    await until(() => seen.undelivered.includes("/hold/poll"));
    await forwarder.drained();
    expect((await call(port, "GET", "/echo/after")).status).toBe(201);
    expect(hop.connections).toHaveLength(1);
  });

  it("a connection lost under requests fails only those in flight on it; a GET is sent again once", async () => {
    const { seen, hop, port } = await setup(2);
    // Round robin: the first request opens connection 0, the second connection 1, the third goes on connection 0.
    const posted = call(port, "POST", "/hold/post", "a=1");
    await until(() => seen.held.has("post"));
    const other = call(port, "POST", "/hold/other", "b=2");
    await until(() => seen.held.has("other"));
    const got = call(port, "GET", "/hold/get");
    await until(() => seen.held.has("get"));
    seen.held.delete("get");
    hop.connections[0]!.destroy();
    const failed = await posted;
    expect(failed.status).toBe(502);
    expect(failed.headers["retry-after"]).toBe("1");
    expect(failed.headers["x-parley-worker"]).toBe("reader-1");
    // The GET went again, on a new connection, and is answered there.
    await until(() => seen.held.has("get"));
    seen.held.get("get")!.release();
    expect((await got).status).toBe(200);
    expect(seen.handled.filter((h) => h.startsWith("GET /hold/get"))).toHaveLength(2);
    // The other connection's request was not touched.
    expect(seen.held.get("other")!.left).toBe(false);
    seen.held.get("other")!.release();
    expect(JSON.parse((await other).body)).toEqual({ held: "other" });
  });

  it("a listener that is gone answers 502 with Retry-After", async () => {
    const forwarder = new FrameForwarder(join(dir, "nobody.sock"), "reader-1");
    const app = uWS.App().any("/*", (res, req) => forwarder.forward(res, req, readHead(req, res)));
    const port = await new Promise<number>((resolve, reject) =>
      app.listen("127.0.0.1", 0, (socket) => {
        if (!socket) return reject(new Error("uWS did not listen"));
        closing.push(() => uWS.us_listen_socket_close(socket));
        resolve(uWS.us_socket_local_port(socket));
      }),
    );
    for (const method of ["GET", "POST"]) {
      const answer = await call(port, method, "/echo");
      expect(answer.status).toBe(502);
      expect(answer.headers["retry-after"]).toBe("1");
    }
  });

  it("the listener closes a connection that sends a malformed frame, with a clear log line, and serves others", async () => {
    const { seen, port } = await setup(1);
    const listenerPath = socketPath();
    const listener = await listenFrames(pipeline(seen), listenerPath);
    closing.push(() => listener.close());
    const raw = connect(listenerPath);
    const closed = new Promise<void>((resolve) => raw.on("close", () => resolve()));
    raw.on("error", () => undefined);
    // A frame of unknown type 99.
    raw.write(Buffer.from([0, 0, 0, 5, 99, 0, 0, 0, 1]));
    await closed;
    expect(seen.errors).toEqual([expect.stringMatching(/malformed frame .*unknown type 99.*connection closed/)]);
    expect((await call(port, "GET", "/echo/still")).status).toBe(201);
  });

  it("the forwarder drops a connection whose listener sends a malformed frame: its requests get 502, logged", async () => {
    const path = socketPath();
    // A listener that answers every HEAD with a frame too short to be one.
    const bad = createNetServer((socket) => {
      const decoder = new FrameDecoder((type) => {
        if (type === FRAME.head) socket.write(Buffer.from([0, 0, 0, 2, 6, 0]));
      });
      socket.on("data", (chunk: Buffer) => decoder.push(chunk));
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => bad.listen(path, resolve));
    closing.push(() => bad.close());
    const logs: string[] = [];
    const forwarder = new FrameForwarder(path, "reader-1", { log: (l) => logs.push(l) });
    const app = uWS.App().any("/*", (res, req) => forwarder.forward(res, req, readHead(req, res)));
    const port = await new Promise<number>((resolve, reject) =>
      app.listen("127.0.0.1", 0, (socket) => {
        if (!socket) return reject(new Error("uWS did not listen"));
        closing.push(() => {
          uWS.us_listen_socket_close(socket);
          forwarder.close();
        });
        resolve(uWS.us_socket_local_port(socket));
      }),
    );
    const answer = await call(port, "POST", "/echo", "a=1");
    expect(answer.status).toBe(502);
    expect(logs).toEqual([expect.stringMatching(/malformed frame \(a frame of 2 bytes\); connection closed/)]);
  });
});

describe("FrameDecoder", () => {
  it("reads frames however the bytes are cut, and refuses a malformed one", () => {
    const bytes: Buffer[] = [];
    const sink = { write: (b: Buffer) => (bytes.push(Buffer.from(b)), true) };
    writeFrame(sink, FRAME.head, 7, Buffer.from("head"));
    writeFrame(sink, FRAME.data, 7, Buffer.alloc(40_000, 1));
    writeFrame(sink, FRAME.end, 7);
    writeFrame(sink, FRAME.cancel, 0xffffffff);
    const all = Buffer.concat(bytes);
    for (const step of [1, 3, 1000, all.length]) {
      const frames: string[] = [];
      const decoder = new FrameDecoder((type, id, payload) => frames.push(`${type}:${id}:${payload.length}`));
      for (let at = 0; at < all.length; at += step) decoder.push(all.subarray(at, at + step));
      expect(frames).toEqual([
        `${FRAME.head}:7:4`,
        `${FRAME.data}:7:40000`,
        `${FRAME.end}:7:0`,
        `${FRAME.cancel}:4294967295:0`,
      ]);
    }
    const decoder = new FrameDecoder(() => undefined);
    expect(() => decoder.push(Buffer.from([0, 0, 0, 5, 0, 0, 0, 0, 1]))).toThrow(FrameError);
    expect(() => new FrameDecoder(() => undefined).push(Buffer.from([0xff, 0, 0, 0]))).toThrow(/a frame of/);
  });
});
