/**
 * HTTP/1.0 and malformed heads, spoken byte by byte over a socket: the compatibility
 * listener (src/http/compat-listener.ts) answers what the uWS listener leaves silent.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basicAuth, encodeParams, startServer, type TestServer } from "../support/http.js";

interface RawResponse {
  readonly statusLine: string;
  readonly headers: Map<string, string>;
  readonly body: Record<string, unknown>;
}

/** One client connection that reads responses delimited by Content-Length. */
class RawConnection {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private serverEnded = false;
  private readonly socket: Socket;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.on("data", (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake();
    });
    this.socket.on("end", () => {
      this.serverEnded = true;
      this.wake();
    });
    this.socket.on("error", () => this.wake());
  }

  /** True once the server has closed its side. */
  get ended(): boolean {
    return this.serverEnded;
  }

  send(text: string): void {
    this.socket.write(text);
  }

  async response(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.take();
      if (parsed) return parsed;
      if (this.serverEnded)
        throw new Error(`connection closed with ${JSON.stringify(this.buffered.toString("latin1"))}`);
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** Resolves when the server closes the connection; nothing more may arrive. */
  async closedByServer(): Promise<string> {
    while (!this.serverEnded) await new Promise<void>((resolve) => (this.waiting = resolve));
    return this.buffered.toString("latin1");
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  private take(): RawResponse | null {
    const end = this.buffered.indexOf("\r\n\r\n");
    if (end < 0) return null;
    const [statusLine = "", ...lines] = this.buffered.subarray(0, end).toString("latin1").split("\r\n");
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = Number(headers.get("content-length"));
    if (!Number.isInteger(length)) throw new Error(`response without Content-Length: ${statusLine}`);
    if (this.buffered.length < end + 4 + length) return null;
    const body = this.buffered.subarray(end + 4, end + 4 + length).toString("utf8");
    this.buffered = this.buffered.subarray(end + 4 + length);
    return { statusLine, headers, body: JSON.parse(body) as Record<string, unknown> };
  }
}

let s: TestServer;
let port: number;
beforeAll(async () => {
  s = await startServer();
  port = await s.server.listenCompat(0);
});
afterAll(() => s.close());

describe("HTTP/1.0 on the compatibility listener", () => {
  it("answers a bare HTTP/1.0 request (no Host) completely, then closes", async () => {
    const c = new RawConnection(port);
    try {
      c.send("GET /api/v1/server_settings HTTP/1.0\r\n\r\n");
      const r = await c.response();
      expect(r.statusLine).toBe("HTTP/1.1 200 OK");
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.headers.get("connection")).toBe("close");
      expect(r.body["result"]).toBe("success");
      expect(r.body["zulip_feature_level"]).toBe(496);
      // 1.0 without keep-alive: the end of the connection is the end of the exchange.
      expect(await c.closedByServer()).toBe("");
    } finally {
      c.destroy();
    }
  });

  it("keeps an HTTP/1.0 keep-alive connection open for the next request", async () => {
    const c = new RawConnection(port);
    try {
      const request = "GET /api/v1/server_settings HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
      c.send(request);
      const first = await c.response();
      expect(first.statusLine).toBe("HTTP/1.1 200 OK");
      expect(first.headers.get("connection")?.toLowerCase()).toBe("keep-alive");
      c.send(request);
      const second = await c.response();
      expect(second.body["result"]).toBe("success");
      expect(c.ended).toBe(false);
    } finally {
      c.destroy();
    }
  });

  it("reads an HTTP/1.0 body by Content-Length and runs the request", async () => {
    const { alice } = s.seed;
    const content = `sent over HTTP/1.0 ${Date.now()}`;
    const form = encodeParams({ type: "stream", to: "general", topic: "http10", content }).toString();
    const c = new RawConnection(port);
    try {
      c.send(
        `POST /api/v1/messages HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: ${basicAuth(s.t.store.getUser(alice.id))}\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(form)}\r\n\r\n${form}`,
      );
      const r = await c.response();
      expect(r.statusLine).toBe("HTTP/1.1 200 OK");
      expect(r.body["result"]).toBe("success");
      const id = r.body["id"];
      expect(typeof id).toBe("number");
      const read = await s.call(alice, "GET", `/messages/${String(id)}`, { apply_markdown: false });
      expect((read.body["message"] as Record<string, unknown>)["content"]).toBe(content);
      expect(await c.closedByServer()).toBe("");
    } finally {
      c.destroy();
    }
  });

  it("answers the same request identically on both listeners", async () => {
    const viaUws = await s.call(null, "GET", "/no/such/thing");
    const c = new RawConnection(port);
    try {
      c.send("GET /api/v1/no/such/thing HTTP/1.0\r\n\r\n");
      const r = await c.response();
      expect(r.statusLine).toBe("HTTP/1.1 404 Not Found");
      expect(r.body).toEqual(viaUws.body);
    } finally {
      c.destroy();
    }
  });
});

describe("heads the uWS listener would leave unanswered", () => {
  it("answers HTTP/1.1 without Host with a JSON 400", async () => {
    const c = new RawConnection(port);
    try {
      c.send("GET /api/v1/server_settings HTTP/1.1\r\n\r\n");
      const r = await c.response();
      expect(r.statusLine).toBe("HTTP/1.1 400 Bad Request");
      expect(r.body).toEqual({ result: "error", msg: "Missing Host header", code: "BAD_REQUEST" });
    } finally {
      c.destroy();
    }
  });

  it("answers an oversized head with a JSON 431 and closes", async () => {
    const c = new RawConnection(port);
    try {
      c.send(`GET /api/v1/server_settings HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${"a".repeat(20_000)}\r\n\r\n`);
      const r = await c.response();
      expect(r.statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
      expect(r.body).toEqual({ result: "error", msg: "Request header fields too large", code: "BAD_REQUEST" });
      expect(await c.closedByServer()).toBe("");
    } finally {
      c.destroy();
    }
  });

  it("answers a malformed request line with a JSON 400 and closes", async () => {
    const c = new RawConnection(port);
    try {
      c.send("NOT AN HTTP REQUEST\r\n\r\n");
      const r = await c.response();
      expect(r.statusLine).toBe("HTTP/1.1 400 Bad Request");
      expect(r.body).toEqual({ result: "error", msg: "Malformed request", code: "BAD_REQUEST" });
      expect(await c.closedByServer()).toBe("");
    } finally {
      c.destroy();
    }
  });

  it("refuses a body over the limit with 413 at once, and closes once the rest has arrived (issue 26)", async () => {
    const small = await startServer({ maxBodyBytes: 64 });
    const smallPort = await small.server.listenCompat(0);
    const c = new RawConnection(smallPort);
    try {
      c.send(`POST /api/v1/fetch_api_key HTTP/1.0\r\nContent-Length: 100000\r\n\r\n${"x".repeat(100)}`);
      const r = await c.response();
      expect(r.statusLine).toBe("HTTP/1.1 413 Payload Too Large");
      expect(r.body).toEqual({ result: "error", msg: "Request body too large", code: "BAD_REQUEST" });
      expect(r.headers.get("connection")).toBe("close");
      expect(c.ended).toBe(false);
      c.send("x".repeat(100000 - 100));
      expect(await c.closedByServer()).toBe("");
    } finally {
      c.destroy();
      small.close();
    }
  });
});
