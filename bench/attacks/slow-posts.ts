/**
 * @module bench/attacks/slow-posts
 * Hardening item 4: 8,000 unauthenticated slow POSTs on the uWS listener, each on its
 * own connection, dribbling 1 KiB a second for 30 s, from one address (127.0.0.3, as
 * the prober) and again from 127.0.0.1, which the server does not cap per
 * address (a reverse proxy on the host connects from it): that run stands for as many
 * attacking addresses as connections. Half go to POST /api/v1/messages
 * (credentials required) declaring 256 KiB, half to POST /api/v1/fetch_api_key (no
 * credentials needed, 16 KiB limit) declaring 16,000 bytes. Before the fix every body
 * was buffered before authentication (RSS 2.4 GB, others stalled 6.8 s); now the
 * first half is answered 401 from its head, and the second holds at most its bytes
 * under the server's body budget (503 past it) and its open-request caps.
 */
import { connect, type Socket } from "node:net";
import type { Attack } from "./types.js";

const CONNECTIONS = 8_000;
const DRIBBLE_BYTES = 1024;
const DRIBBLE_MS = 1_000;
const DURATION_MS = 30_000;
/** Connections opened per tick while ramping up (the kernel's accept queue is finite). */
const OPEN_BATCH = 200;

interface Slow {
  readonly socket: Socket;
  status: string | null;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal.addEventListener("abort", stop, { once: true });
  });

function slowPosts(name: string, localAddress: string): Attack {
  return { item: 4, name, run: (target, signal) => run(target.baseUrl, localAddress, signal) };
}

export const attack = slowPosts("8,000 unauthenticated slow POSTs from one address", "127.0.0.3");
export const fromManyAddresses = slowPosts(
  "8,000 unauthenticated slow POSTs from 127.0.0.1 (not capped per address)",
  "127.0.0.1",
);

async function run(baseUrl: string, localAddress: string, signal: AbortSignal): Promise<string> {
  const url = new URL(baseUrl);
  const slow: Slow[] = [];
  const started = performance.now();
  let refusedConnects = 0;
  for (let i = 0; i < CONNECTIONS && !signal.aborted; i++) {
    const toMessages = i % 2 === 0;
    const socket = connect({ port: Number(url.port), host: url.hostname, localAddress });
    const entry: Slow = { socket, status: null };
    socket.on("data", (chunk: Buffer) => {
      entry.status ??= /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString("latin1", 0, 16))?.[1] ?? "garbled";
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (entry.status === null && error.code === "ECONNREFUSED") refusedConnects++;
    });
    const [path, length] = toMessages ? ["/api/v1/messages", 256 * 1024] : ["/api/v1/fetch_api_key", 16_000];
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${length}\r\n\r\n`,
    );
    slow.push(entry);
    if (i % OPEN_BATCH === OPEN_BATCH - 1) await sleep(20, signal);
  }
  const chunk = "x".repeat(DRIBBLE_BYTES);
  while (!signal.aborted && performance.now() - started < DURATION_MS) {
    for (const s of slow) if (s.socket.writable) s.socket.write(chunk);
    await sleep(DRIBBLE_MS, signal);
  }
  const counts = new Map<string, number>();
  for (const s of slow) {
    const key = s.status ?? (s.socket.destroyed ? "closed unanswered" : "unanswered");
    counts.set(key, (counts.get(key) ?? 0) + 1);
    s.socket.destroy();
  }
  const parts = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n.toLocaleString("en-US")}× ${k}`);
  if (refusedConnects > 0) parts.push(`${refusedConnects} connects refused`);
  return `${slow.length.toLocaleString("en-US")} connections over ${((performance.now() - started) / 1000).toFixed(0)} s: ${parts.join(", ")}`;
}
