import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DayHttp, dechunk, parseHead } from "../../bench/day/http.js";

/** A real HTTP server answering as the tests ask, noting which connection each request came on. */
let server: http.Server;
let port: number;
const connectionOf: string[] = [];
let connections = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const socket = req.socket as typeof req.socket & { tag?: string };
    socket.tag ??= `c${++connections}`;
    connectionOf.push(socket.tag);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const sent = Buffer.concat(chunks).toString("utf8");
      if (url.pathname === "/chunked") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"part":');
        setTimeout(() => res.end('"ünïcode"}'), 5);
      } else if (url.pathname === "/close") {
        res.writeHead(200, { connection: "close", "content-length": "2" });
        res.end("{}");
      } else if (url.pathname === "/drop") {
        req.socket.destroy();
      } else {
        const body = JSON.stringify({
          method: req.method,
          auth: req.headers.authorization,
          type: req.headers["content-type"] ?? null,
          sent,
          big: "x".repeat(Number(url.searchParams.get("size") ?? 0)),
        });
        res.writeHead(Number(url.searchParams.get("status") ?? 200), {
          "content-length": Buffer.byteLength(body),
          "x-parley-worker": "reader-2>writer",
        });
        res.end(body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("bench:day's HTTP client", () => {
  it("sends a request with its credentials and form body, and reads status, body and worker", async () => {
    const client = new DayHttp(port);
    const answer = await client.request("POST", "/echo?status=400", "Basic abc", "a=1&b=%C3%A9");
    expect(answer.status).toBe(400);
    expect(answer.worker).toBe("reader-2>writer");
    expect(JSON.parse(answer.body)).toMatchObject({
      method: "POST",
      auth: "Basic abc",
      type: "application/x-www-form-urlencoded",
      sent: "a=1&b=%C3%A9",
    });
    client.close();
  });

  it("keeps a connection alive for the next request, one request at a time on each", async () => {
    const client = new DayHttp(port);
    connectionOf.length = 0;
    await client.request("GET", "/a", "x");
    await client.request("GET", "/b", "x");
    expect(connectionOf[0]).toBe(connectionOf[1]);
    await Promise.all([client.request("GET", "/c", "x"), client.request("GET", "/d", "x")]);
    expect(new Set(connectionOf.slice(2)).size).toBe(2);
    expect(client.connections).toBe(2);
    client.close();
  });

  it("reads a body that arrives in many packets, and a chunked one", async () => {
    const client = new DayHttp(port);
    const big = await client.request("GET", "/echo?size=300000", "x");
    expect((JSON.parse(big.body) as { big: string }).big.length).toBe(300_000);
    const chunked = await client.request("GET", "/chunked", "x");
    expect(JSON.parse(chunked.body)).toEqual({ part: "ünïcode" });
    // The connection is still usable after a chunked answer.
    expect((await client.request("GET", "/echo", "x")).status).toBe(200);
    client.close();
  });

  it("opens a new connection after the server closed one (Connection: close, or an idle one)", async () => {
    const client = new DayHttp(port);
    connectionOf.length = 0;
    await client.request("GET", "/close", "x");
    await client.request("GET", "/echo", "x");
    expect(connectionOf[0]).not.toBe(connectionOf[1]);
    server.closeIdleConnections(); // as uWS does with a connection idle for 10 s
    await new Promise((r) => setTimeout(r, 50));
    expect((await client.request("GET", "/echo", "x")).status).toBe(200);
    expect(connectionOf[2]).not.toBe(connectionOf[1]);
    client.close();
  });

  it("fails a request whose connection drops before the answer, and goes on", async () => {
    const client = new DayHttp(port);
    await expect(client.request("GET", "/drop", "x")).rejects.toThrow(/closed before the answer/);
    expect((await client.request("GET", "/echo", "x")).status).toBe(200);
    client.close();
  });

  it("reads an answer whose head and body come in pieces, and two answers on one connection", async () => {
    // A server writing its answers by hand, in pieces with pauses between them.
    const pieces = ["HTTP/1.1 200 OK\r\nContent-Le", "ngth: 12\r\nX-Parley-Worker: w\r\n\r\n", '{"a":', '"ü.."}'];
    const raw = net.createServer((socket) => {
      socket.setNoDelay(true);
      socket.on("data", () => {
        let i = 0;
        const next = () => {
          socket.write(pieces[i++]!);
          if (i < pieces.length) setTimeout(next, 5);
        };
        next();
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    const client = new DayHttp((raw.address() as AddressInfo).port);
    for (let round = 0; round < 2; round++) {
      const answer = await client.request("GET", "/x", "x");
      expect(answer).toEqual({ status: 200, body: '{"a":"ü.."}', worker: "w" });
    }
    expect(client.connections).toBe(1);
    client.close();
    await new Promise((resolve) => raw.close(resolve));
  });

  it("frames answers by Content-Length or chunks and refuses one it cannot frame", () => {
    expect(parseHead("HTTP/1.1 200 OK\r\nContent-Length: 12\r\nX-Parley-Worker: writer")).toEqual({
      status: 200,
      length: 12,
      close: false,
      worker: "writer",
    });
    expect(parseHead("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close").length).toBeNull();
    expect(parseHead("HTTP/1.1 204 No Content").length).toBe(0);
    expect(() => parseHead("HTTP/1.1 200 OK\r\nContent-Type: text/plain")).toThrow(/Content-Length/);
    const data = Buffer.from("HEAD3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
    expect(dechunk(data, 4)).toEqual({ body: Buffer.from("abcde"), end: data.length });
    expect(dechunk(data.subarray(0, data.length - 1), 4)).toBeNull();
  });
});
