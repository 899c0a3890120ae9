/**
 * @module bench/events/floor-child
 * The trivial server the floor is measured against: the same transport as parley
 * (uWebSockets.js), no work per request. GET /api/v1/events parks the request;
 * POST /fire?seq=N&bytes=B answers every parked one at once with a canned event
 * answer carrying `bench-N`, padded to B bytes (the size of parley's real answers),
 * then answers the fire. What the clients then measure is the load generator's own
 * cost of reading one burst of N answers, plus the least any server must spend
 * writing them. `stats` over IPC reports how many requests are parked.
 */
import uWS from "uWebSockets.js";
import type { ChildReply, FloorReadyMessage, ParentRequest } from "./protocol.js";

interface Parked {
  readonly res: uWS.HttpResponse;
  aborted: boolean;
}

/** Every fired event (id = index): a poll behind on them is answered at once, like a queue with a backlog. */
const fired: string[] = [];
let parked: Parked[] = [];
let answerBytes = 0;
const app = uWS.App();

function answer(res: uWS.HttpResponse, from: number): void {
  const events = fired
    .slice(from)
    .map((seq, i) => ({ type: "message", id: from + i, message: { content: `<p>bench-${seq}</p>`, pad: "" } }));
  const base = JSON.stringify({ result: "success", msg: "", events, queue_id: "floor" });
  const body =
    answerBytes > base.length ? base.replace(`"pad":""`, `"pad":"${"x".repeat(answerBytes - base.length)}"`) : base;
  res.cork(() => {
    res.writeStatus("200 OK").writeHeader("Content-Type", "application/json").end(body);
  });
}

app.get("/api/v1/events", (res, req) => {
  const last = Number(new URLSearchParams(req.getQuery() ?? "").get("last_event_id") ?? -1);
  if (fired.length > last + 1) {
    answer(res, last + 1);
    return;
  }
  const entry: Parked = { res, aborted: false };
  res.onAborted(() => {
    entry.aborted = true;
  });
  parked.push(entry);
});

app.post("/fire", (res, req) => {
  const params = new URLSearchParams(req.getQuery() ?? "");
  const seq = params.get("seq") ?? "0";
  answerBytes = Number(params.get("bytes") ?? 0);
  res.onAborted(() => {});
  res.onData((_chunk, last) => {
    if (!last) return;
    fired.push(seq);
    const batch = parked;
    parked = [];
    // Every parked poll has seen all earlier events, so it gets just the new one.
    for (const p of batch) if (!p.aborted) answer(p.res, fired.length - 1);
    res.cork(() => {
      res.writeStatus("200 OK").end(JSON.stringify({ result: "success", answered: batch.length }));
    });
  });
});

process.on("message", (raw: unknown) => {
  const request = raw as ParentRequest;
  if (request.cmd === "stats") {
    const reply: ChildReply = {
      reply: "stats",
      queues: parked.length,
      polling: parked.filter((p) => !p.aborted).length,
      queuedEvents: 0,
      eventsDelivered: fired.length,
    };
    process.send!(reply);
  } else if (request.cmd === "gc") {
    const reply: ChildReply = { reply: "gc", rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed };
    process.send!(reply);
  }
});
process.on("disconnect", () => process.exit(0));

app.listen("127.0.0.1", 0, (socket) => {
  if (!socket) {
    process.stderr.write("floor server: listen failed\n");
    process.exit(1);
  }
  const ready: FloorReadyMessage = { type: "floor-ready", port: uWS.us_socket_local_port(socket) };
  process.send!(ready);
});
