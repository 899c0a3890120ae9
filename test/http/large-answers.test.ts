/**
 * Large answers to a client that reads slowly. A window of ~5.3 MB is more than the
 * loopback socket buffers take while the client does not read (send buffer at most
 * tcp_wmem's 4 MB, receive window ~128 KB; a single write that ignores uWS's
 * backpressure was cut at ~3.9 MB even for a reading client), so uWS must keep the
 * rest itself. The
 * paused client must still get every byte, and the bytes of the answer it asked for:
 * meanwhile another answer is built in the shared reply buffer (answers the window
 * cache does not keep) or served from the cache.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basicAuth, encodeParams, startServer, type TestServer } from "../support/http.js";
import type { User } from "../../src/engine/types.js";

const MESSAGES = 520;
/** One long unformatted word: cheap to render and to index. */
const CONTENT = "x".repeat(9_900);

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
  const { owner } = s.seed;
  s.t.store.batch(() => {
    for (let i = 0; i < MESSAGES; i++)
      s.t.store.sendMessage({
        senderId: owner.id,
        to: { type: "channel", channel: "general", topic: `t${i % 7}` },
        content: `${i} ${CONTENT}`,
      });
  });
}, 60_000);
afterAll(() => s.close());

const path = (numBefore: number, applyMarkdown: boolean) =>
  `/api/v1/messages?${encodeParams({ anchor: "newest", num_before: numBefore, num_after: 0, apply_markdown: applyMarkdown })}`;

/** A raw HTTP/1.1 GET whose response is not read until `resume` is called; resolves with the body. */
function pausedGet(base: string, user: User, target: string): { resume(): void; body: Promise<Buffer> } {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  socket.pause();
  socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${basicAuth(user)}\r\n\r\n`);
  const body = new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      const all = Buffer.concat(chunks, size);
      const end = all.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = /content-length: (\d+)/i.exec(all.subarray(0, end).toString("latin1"));
      if (!length) return reject(new Error(`no Content-Length in ${all.subarray(0, end).toString("latin1")}`));
      if (all.length >= end + 4 + Number(length[1])) {
        socket.destroy();
        resolve(all.subarray(end + 4, end + 4 + Number(length[1])));
      }
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`connection closed after ${size} bytes`)));
  });
  return { resume: () => socket.resume(), body };
}

async function text(base: string, user: User, target: string): Promise<string> {
  const response = await fetch(`${base}${target}`, { headers: { Authorization: basicAuth(user) } });
  expect(response.status).toBe(200);
  return response.text();
}

describe("a large answer to a slow reader", () => {
  // A first request is not kept: its answer is joined in the shared reply buffer.
  for (const [name, kept, numBefore] of [
    ["built in the shared reply buffer", false, MESSAGES],
    ["kept by the window cache", true, MESSAGES + 1],
  ] as const) {
    it(`arrives whole and unchanged (${name})`, async () => {
      const { alice } = s.seed;
      const slowTarget = path(numBefore, true);
      const otherTarget = path(numBefore + 2, false);
      if (kept) for (let i = 0; i < 2; i++) await text(s.base, alice, slowTarget);
      const hits = s.server.windows.hits;
      const slow = pausedGet(s.base, alice, slowTarget);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Another large answer goes through the server while the first waits.
      const other = await text(s.base, alice, otherTarget);
      expect(other.length).toBeGreaterThan(5_000_000);
      slow.resume();
      const received = await slow.body;
      const expected = await text(s.base, alice, slowTarget);
      expect(received.length).toBeGreaterThan(5_000_000);
      expect(received.toString("utf8") === expected).toBe(true);
      const parsed = JSON.parse(expected) as { messages: { id: number }[] };
      expect(parsed.messages.length).toBe(MESSAGES);
      // The slow answer and the check after it came from the cache, or neither did.
      expect(s.server.windows.hits - hits).toBe(kept ? 2 : 0);
    }, 60_000);
  }
});
