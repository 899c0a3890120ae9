/**
 * http/forward's Forwarder, the HTTP hop of a cluster follower to its leader (the workers
 * of one machine use frames: test/http/frames.test.ts): a uWS listener (as the follower's
 * public port) forwarding to a Node server, here on a Unix socket. Forwarded requests
 * share kept-alive connections, a client that leaves ends its forwarded long-poll on the
 * other side, a dead target is a 502 with Retry-After, and a GET sent on a kept-alive
 * connection that the other side closed as it went out is sent again instead of failing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import uWS from "uWebSockets.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Forwarder } from "../../src/http/forward.js";
import { CLIENT_ADDRESS_HEADER } from "../../src/http/worker-headers.js";

const dir = mkdtempSync(join(tmpdir(), "parley-forward-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Owner {
  readonly path: string;
  /** Connections accepted, requests seen, and long-polls whose client left before their answer. */
  readonly seen: { connections: number; requests: number; pollsLeft: number; addresses: string[] };
  readonly server: Server;
}

let owners = 0;
/**
 * A stand-in for a worker's internal listener: answers at once, but holds /poll until
 * its client leaves; `onRequest` may take a request over (return true).
 */
function owner(onRequest?: (req: IncomingMessage, res: ServerResponse, nth: number) => boolean): Promise<Owner> {
  const path = join(dir, `owner-${++owners}.sock`);
  const seen = { connections: 0, requests: 0, pollsLeft: 0, addresses: [] as string[] };
  const perConnection = new WeakMap<Socket, number>();
  const server = createServer((req, res) => {
    seen.requests++;
    seen.addresses.push(String(req.headers[CLIENT_ADDRESS_HEADER]));
    const nth = (perConnection.get(req.socket) ?? 0) + 1;
    perConnection.set(req.socket, nth);
    if (onRequest?.(req, res, nth)) return;
    if (req.url === "/poll") {
      res.on("close", () => {
        if (!res.writableFinished) seen.pollsLeft++;
      });
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" }).end(`{"url":${JSON.stringify(req.url)}}`);
  });
  server.keepAliveTimeout = 10 * 60 * 1000;
  server.on("connection", () => seen.connections++);
  return new Promise((resolve) => server.listen(path, () => resolve({ path, seen, server })));
}

interface Front {
  readonly port: number;
  close(): void;
}

/** A uWS listener forwarding every request with `forwarder`, as a worker does. */
function front(forwarder: Forwarder): Promise<Front> {
  const app = uWS.App().any("/*", (res, req) => forwarder.forward(res, req, "198.51.100.7"));
  return new Promise((resolve, reject) =>
    app.listen("127.0.0.1", 0, (socket) => {
      if (!socket) return reject(new Error("uWS did not listen"));
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: () => {
          uWS.us_listen_socket_close(socket);
          forwarder.close();
        },
      });
    }),
  );
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** One request on a connection of its own. */
function get(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((r) => setTimeout(r, 10));
};

describe("Forwarder (the hop between workers)", () => {
  const closing: (() => void)[] = [];
  afterEach(() => {
    for (const close of closing.splice(0)) close();
  });
  let target: Owner;
  beforeAll(async () => {
    target = await owner();
  });

  async function through(to: Owner | string, options = {}): Promise<{ forwarder: Forwarder; port: number }> {
    const forwarder = new Forwarder(typeof to === "string" ? to : to.path, "reader-1", options);
    const listening = await front(forwarder);
    closing.push(() => listening.close());
    return { forwarder, port: listening.port };
  }

  it("forwards requests over kept-alive connections, the client's address on each", async () => {
    const { port } = await through(target);
    const before = { ...target.seen };
    for (let i = 0; i < 20; i++) {
      const answer = await get(port, `/r/${i}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(`{"url":"/r/${i}"}`);
      expect(answer.headers["x-parley-worker"]).toBe("reader-1>writer");
    }
    expect(target.seen.requests - before.requests).toBe(20);
    expect(target.seen.connections - before.connections).toBe(1);
    expect(target.seen.addresses.slice(before.requests)).toEqual(Array(20).fill("198.51.100.7"));
  });

  it("a client leaving a forwarded long-poll ends it on the other side, and its connection is not reused", async () => {
    const { forwarder, port } = await through(target);
    const before = { ...target.seen };
    const req = request({ host: "127.0.0.1", port, path: "/poll", agent: false });
    req.on("error", () => {});
    req.end();
    await until(() => target.seen.requests > before.requests);
    req.destroy();
    await until(() => target.seen.pollsLeft > before.pollsLeft);
    await forwarder.drained();
    // The next request needs a connection of its own: the poll's was destroyed, not pooled.
    expect((await get(port, "/after")).status).toBe(200);
    expect(target.seen.connections - before.connections).toBe(2);
  });

  it("long-polls held open do not hold up other forwarded requests", async () => {
    const { port } = await through(target);
    const before = target.seen.requests;
    const polls = Array.from({ length: 8 }, () => {
      const req = request({ host: "127.0.0.1", port, path: "/poll", agent: false });
      req.on("error", () => {});
      req.end();
      return req;
    });
    await until(() => target.seen.requests >= before + polls.length);
    for (let i = 0; i < 5; i++) expect((await get(port, `/other/${i}`)).status).toBe(200);
    for (const poll of polls) poll.destroy();
  });

  it("a target that is gone answers 502 with Retry-After", async () => {
    const { port } = await through(join(dir, "nobody.sock"));
    const answer = await get(port, "/r");
    expect(answer.status).toBe(502);
    expect(answer.headers["retry-after"]).toBe("1");
    expect(answer.headers["x-parley-worker"]).toBe("reader-1");
  });

  it("a GET on a kept-alive connection the other side closed as it went out is sent again on a new one", async () => {
    // The second request of each connection meets a connection closed under it (no answer).
    const closer = await owner((req, _res, nth) => {
      if (nth < 2) return false;
      req.socket.destroy();
      return true;
    });
    closing.push(() => closer.server.close());
    const { port } = await through(closer);
    expect((await get(port, "/one")).status).toBe(200);
    const again = await get(port, "/two");
    expect(again.status).toBe(200);
    expect(again.body).toBe('{"url":"/two"}');
    expect(closer.seen.connections).toBe(2);
  });

  it("closes an idle kept-alive connection itself, before the other side does, and not one held by a long-poll", async () => {
    const { port } = await through(target, { idleConnectionMs: 150 });
    const before = { ...target.seen };
    expect((await get(port, "/a")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 400));
    expect((await get(port, "/b")).status).toBe(200);
    expect(target.seen.connections - before.connections).toBe(2);
    // A held request outlives the idle time: its answer still comes back.
    const held = await owner((req, res) => {
      setTimeout(() => res.writeHead(200).end(`{"url":${JSON.stringify(req.url)}}`), 400);
      return true;
    });
    closing.push(() => held.server.close());
    const slow = await through(held, { idleConnectionMs: 150 });
    const answer = await get(slow.port, "/slow");
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('{"url":"/slow"}');
  });
});
