/**
 * @module bench/events/server-child
 * The parley server under test, in its own process so its CPU and RSS are measured
 * apart from the load generator. Builds a fresh realm in a temporary directory (one
 * sender plus N users, all subscribed to one channel, some history to page through),
 * listens on a free loopback port and answers the parent over IPC:
 * `ready` with credentials, then `gc` (collect, report RSS) and `stats` (hub counts).
 * Run with --expose-gc so RSS readings are taken after a full collection.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/index.js";
import { createServer } from "../../src/http/server.js";
import type { ChildReply, ParentRequest, ReadyMessage } from "./protocol.js";

const users = Number(process.argv[2] ?? 1000);
const history = Number(process.argv[3] ?? 200);
const dir = mkdtempSync(join(tmpdir(), "parley-bench-events-"));
const store = openStore(dir, { noSync: true });

const t0 = performance.now();
const { realm, owner } = store.createRealm({
  subdomain: "",
  name: "Bench",
  owner: { email: "sender@bench.test", fullName: "Sender" },
});
const created = store.batch(() => {
  const list: { email: string; apiKey: string; id: number }[] = [];
  for (let i = 0; i < users; i++) {
    const u = store.createUser({ realmId: realm.id, email: `u${i}@bench.test`, fullName: `User ${i}` });
    list.push({ email: u.email, apiKey: u.apiKey, id: u.id });
  }
  return list;
});
const sub = store.subscribe(owner.id, {
  channels: [{ name: "bench" }],
  principals: [owner.id, ...created.map((u) => u.id)],
});
const channelId = sub.createdChannelIds[0]!;
store.batch(() => {
  for (let i = 0; i < history; i++)
    store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: channelId, topic: "history" },
      content: `history ${i}`,
    });
});
const setupSecs = (performance.now() - t0) / 1000;

// Uncapped: the bench parks up to 10,000 long polls at once, the default cap in all.
const server = createServer(store, {
  rateLimit: false,
  loadLimits: { total: 0 },
  logError: (message, error) => process.stderr.write(`server error: ${message} ${String(error)}\n`),
});
const port = await server.listen(0, "127.0.0.1");

function send(message: ChildReply | ReadyMessage): void {
  process.send!(message);
}

process.on("message", (raw: unknown) => {
  const request = raw as ParentRequest;
  if (request.cmd === "gc") {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    send({ reply: "gc", rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed });
  } else if (request.cmd === "stats") {
    const s = server.events.stats;
    send({
      reply: "stats",
      queues: s.queues,
      polling: s.polling,
      queuedEvents: s.queuedEvents,
      eventsDelivered: s.eventsDelivered,
    });
  }
});
process.on("disconnect", () => {
  server.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});

send({
  type: "ready",
  port,
  setupSecs,
  channelId,
  sender: { email: owner.email, apiKey: owner.apiKey },
  users: created.map((u) => ({ email: u.email, apiKey: u.apiKey })),
});
