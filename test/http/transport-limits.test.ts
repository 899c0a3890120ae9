/**
 * What a client may make the server hold before and while it reads a body (issue 26,
 * items 3 and 4), on both listeners: the compatibility listener applies the uWS
 * listener's per-endpoint body limits and streams uploads; Basic credentials are
 * checked before a body is read; requests in progress are capped per address and in
 * all; buffered bodies share one memory budget. Spoken over raw sockets so that a
 * body can be left half sent.
 */
import { connect, type Socket } from "node:net";
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import type { ServerOptions } from "../../src/http/server.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";

const MiB = 1024 * 1024;

interface RawResponse {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: Record<string, unknown>;
}

/** One connection whose request body can be sent in parts; reads Content-Length-delimited answers. */
class Conn {
  #buffered = Buffer.alloc(0);
  #ended = false;
  #wake: (() => void) | null = null;
  readonly socket: Socket;

  constructor(port: number, localAddress?: string) {
    this.socket = connect({ port, host: "127.0.0.1", ...(localAddress ? { localAddress } : {}) });
    this.socket.on("data", (chunk: Buffer) => {
      this.#buffered = Buffer.concat([this.#buffered, chunk]);
      this.#notify();
    });
    this.socket.on("end", () => {
      this.#ended = true;
      this.#notify();
    });
    this.socket.on("error", () => {
      this.#ended = true;
      this.#notify();
    });
  }

  send(data: string | Buffer): void {
    this.socket.write(data);
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async response(): Promise<RawResponse> {
    for (;;) {
      const end = this.#buffered.indexOf("\r\n\r\n");
      if (end >= 0) {
        const [statusLine = "", ...lines] = this.#buffered.subarray(0, end).toString("latin1").split("\r\n");
        const headers = new Map(
          lines.map(
            (l) => [l.slice(0, l.indexOf(":")).trim().toLowerCase(), l.slice(l.indexOf(":") + 1).trim()] as const,
          ),
        );
        const length = Number(headers.get("content-length"));
        if (this.#buffered.length >= end + 4 + length) {
          const body = JSON.parse(this.#buffered.subarray(end + 4, end + 4 + length).toString("utf8")) as Record<
            string,
            unknown
          >;
          this.#buffered = this.#buffered.subarray(end + 4 + length);
          return { status: Number(statusLine.split(" ")[1]), headers, body };
        }
      }
      if (this.#ended)
        throw new Error(`closed with ${JSON.stringify(this.#buffered.toString("latin1").slice(0, 200))}`);
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

const open: { s: TestServer; conns: Conn[] }[] = [];
async function server(
  options: ServerOptions = {},
): Promise<{ s: TestServer; uws: number; compat: number; conn: (port: number, from?: string) => Conn }> {
  const s = await startServer(options);
  const compat = await s.server.listenCompat(0);
  const entry = { s, conns: [] as Conn[] };
  open.push(entry);
  const conn = (port: number, from?: string) => {
    const c = new Conn(port, from);
    entry.conns.push(c);
    return c;
  };
  return { s, uws: Number(new URL(s.base).port), compat, conn };
}
afterEach(() => {
  for (const { s, conns } of open.splice(0)) {
    for (const c of conns) c.close();
    s.close();
  }
});

/** Polls `check` on the event loop until it holds (state the server reaches asynchronously). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const head = (method: string, path: string, headers: Record<string, string | number> = {}) =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

describe("the compatibility listener applies the endpoints' body limits", () => {
  it("refuses a 10 MiB body to fetch_api_key with 413 before it has arrived, declared or not", async () => {
    const { s, compat, conn } = await server();
    const declared = conn(compat);
    declared.send(
      head("POST", "/api/v1/fetch_api_key", {
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Length": 10 * MiB,
      }),
    );
    declared.send(Buffer.alloc(MiB, 120));
    const r1 = await declared.response();
    expect(r1.status).toBe(413);
    expect(r1.body).toEqual({ result: "error", msg: "Request body too large", code: "BAD_REQUEST" });

    const chunked = conn(compat);
    chunked.send(
      head("POST", "/api/v1/fetch_api_key", {
        "Content-Type": "application/x-www-form-urlencoded",
        "Transfer-Encoding": "chunked",
      }),
    );
    for (let i = 0; i < 16; i++) chunked.send(`10000\r\n${"x".repeat(0x10000)}\r\n`);
    const r2 = await chunked.response();
    expect(r2.status).toBe(413);
    // Refused at the limit: nothing of either body is held.
    expect(s.server.load.bodyBytes).toBe(0);
  });

  it("streams an upload to its endpoint (accepted, and refused over MAX_FILE_UPLOAD_SIZE without buffering it)", async () => {
    const { s, compat } = await server({ config: { ...DEFAULT_CONFIG, MAX_FILE_UPLOAD_SIZE: 1 } });
    const post = (size: number) =>
      new Promise<number>((resolve, reject) => {
        const pre = `--XX\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
        const req = httpRequest(
          {
            host: "127.0.0.1",
            port: compat,
            method: "POST",
            path: "/api/v1/user_uploads",
            headers: { Authorization: basicAuth(s.seed.alice), "Content-Type": "multipart/form-data; boundary=XX" },
          },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.write(pre);
        req.end(Buffer.concat([Buffer.alloc(size, 1), Buffer.from("\r\n--XX--\r\n")]));
      });
    expect(await post(MiB / 2)).toBe(200);
    expect(await post(3 * MiB)).toBe(400);
    expect(s.server.load.bodyBytes).toBe(0);
  });
});

describe("credentials before bodies", () => {
  for (const listener of ["uws", "compat"] as const) {
    it(`${listener}: wrong or missing Basic credentials are answered 401 before the body has arrived`, async () => {
      const srv = await server();
      const port = listener === "uws" ? srv.uws : srv.compat;
      const bad = `Basic ${Buffer.from(`alice@test.dev:${"x".repeat(32)}`).toString("base64")}`;
      for (const auth of [bad, null]) {
        const c = srv.conn(port);
        c.send(
          head("POST", "/api/v1/messages", {
            "Content-Type": "application/x-www-form-urlencoded",
            "Content-Length": 200 * 1024,
            ...(auth ? { Authorization: auth } : {}),
          }),
        );
        c.send("type=stream&to=general&topic=t&content=");
        const r = await c.response();
        expect(r.status).toBe(401);
        expect(r.body["code"]).toBe("UNAUTHORIZED");
        expect(srv.s.server.load.bodyBytes).toBe(0);
      }
    });
  }
});

describe("requests in progress are capped", () => {
  /** A POST whose body never completes: it stays in progress. */
  const held = (c: Conn) => {
    c.send(
      head("POST", "/api/v1/fetch_api_key", {
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Length": 100,
      }),
    );
    c.send("username=a");
  };

  it("per client address, on both listeners together: the next one is 503 with Retry-After until one ends", async () => {
    const { s, uws, compat, conn } = await server({ loadLimits: { perAddress: 2, capLoopback: true } });
    const first = conn(uws);
    held(first);
    held(conn(compat));
    await until(() => s.server.load.openRequests === 2);
    for (const port of [uws, compat]) {
      const c = conn(port);
      c.send(head("GET", "/api/v1/server_settings"));
      const r = await c.response();
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.body).toEqual({
        result: "error",
        msg: "Too many requests in progress from this address; try again shortly",
        code: "BAD_REQUEST",
      });
    }
    first.send("x".repeat(90));
    expect((await first.response()).status).toBe(400);
    const after = conn(uws);
    after.send(head("GET", "/api/v1/server_settings"));
    expect((await after.response()).status).toBe(200);
  });

  it("127.0.0.1 is not capped per address unless asked (a reverse proxy on the host is that one address)", async () => {
    const { s, uws, conn } = await server({ loadLimits: { perAddress: 1 } });
    held(conn(uws));
    held(conn(uws, "127.0.0.3"));
    await until(() => s.server.load.openRequests === 2);
    const c = conn(uws);
    c.send(head("GET", "/api/v1/server_settings"));
    expect((await c.response()).status).toBe(200);
    // Other loopback addresses are clients like any other.
    const other = conn(uws, "127.0.0.3");
    other.send(head("GET", "/api/v1/server_settings"));
    expect((await other.response()).status).toBe(503);
  });

  it("in all", async () => {
    const { s, uws, conn } = await server({ loadLimits: { total: 2 } });
    held(conn(uws));
    held(conn(uws));
    await until(() => s.server.load.openRequests === 2);
    const c = conn(uws);
    c.send(head("GET", "/api/v1/server_settings"));
    const r = await c.response();
    expect(r.status).toBe(503);
    expect(r.body["msg"]).toBe("Too many requests in progress; try again shortly");
  });
});

describe("buffered bodies share one memory budget", () => {
  it("a body that would pass it is refused with 503 and Retry-After; the budget comes back when requests end", async () => {
    const { s, uws, compat, conn } = await server({ loadLimits: { bodyBudgetBytes: 20_000 } });
    const first = conn(uws);
    first.send(
      head("POST", "/api/v1/fetch_api_key", {
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Length": 16_000,
      }),
    );
    first.send("x".repeat(15_000));
    await until(() => s.server.load.bodyBytes === 15_000);
    const second = conn(compat);
    second.send(
      head("POST", "/api/v1/fetch_api_key", {
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Length": 16_000,
      }),
    );
    second.send("x".repeat(16_000));
    const r = await second.response();
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.body["msg"]).toBe("The server is receiving too much data; try again shortly");
    first.send("x".repeat(1_000));
    expect((await first.response()).status).toBe(400);
    expect(s.server.load.bodyBytes).toBe(0);
  });
});

describe("uploads refused while streaming", () => {
  it("a chunked upload over MAX_FILE_UPLOAD_SIZE is a 400, and the server lives on (busboy's error is heard)", async () => {
    const { s, uws, conn } = await server({ config: { ...DEFAULT_CONFIG, MAX_FILE_UPLOAD_SIZE: 1 } });
    const c = conn(uws);
    c.send(
      head("POST", "/api/v1/user_uploads", {
        Authorization: basicAuth(s.seed.alice),
        "Content-Type": "multipart/form-data; boundary=XX",
        "Transfer-Encoding": "chunked",
      }),
    );
    const part = `--XX\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\n\r\n`;
    c.send(`${part.length.toString(16)}\r\n${part}\r\n`);
    for (let i = 0; i < 40; i++) c.send(`10000\r\n${"x".repeat(0x10000)}\r\n`);
    c.send("0\r\n\r\n");
    const r = await c.response();
    expect(r.status).toBe(400);
    expect(r.body["msg"]).toBe("File is larger than this server's configured maximum upload size (1 MiB).");
    const after = await s.call(s.seed.alice, "GET", "/users/me");
    expect(after.status).toBe(200);
  });
});
