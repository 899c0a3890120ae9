/**
 * Event queues of `parley serve --workers N` live in one worker at a time and move to
 * the worker their polls reach, whichever it is (src/http/queue-routing,
 * realtime/writer-stream): every event reaches every queue once, in order, whichever
 * worker the write, the registration or each poll went through, across moves; a worker
 * that handed a queue away forwards its polls to where it went (no move back and forth);
 * a reader killed with SIGKILL takes only its own queues with it; a reader's queues come
 * back after a clean stop, and live through a clean restart of the writer alone.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { killStartedProcesses, serveProcess, sleep, stopProcess } from "../support/serve-process.js";
import { workerCall, type WorkerAnswer } from "../support/worker-call.js";

const dirs: string[] = [];
afterAll(() => {
  killStartedProcesses();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newOrg(): { dir: string; auth: string } {
  const dir = mkdtempSync(join(tmpdir(), "parley-worker-queues-"));
  dirs.push(dir);
  const store = openStore(dir, { noSync: true });
  const { owner } = store.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
  store.subscribe(owner.id, { channels: [{ name: "general" }] });
  store.close();
  return { dir, auth: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}` };
}

const workers = (extra: readonly string[] = [], n = 2) => ["--workers", String(n), ...extra];

/** The worker processes by role ("writer", "reader-1"), from the role in their environment. */
function workerPids(pid: number): Record<string, number> {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ").filter(Boolean);
  return Object.fromEntries(
    children.map((child) => {
      const env = readFileSync(`/proc/${child}/environ`, "utf8").split("\0");
      return [env.find((v) => v.startsWith("PARLEY_WORKER="))?.slice("PARLEY_WORKER=".length) ?? "?", Number(child)];
    }),
  );
}

type Answer = WorkerAnswer;
/** A request on `agent` (a connection to one worker), or on a new connection (either worker) when null. */
const call = workerCall;

/**
 * A keep-alive connection the kernel gave to `worker` (new ones until it does). `maxSockets` 1: its requests
 * wait for that one connection (else a request sent as the last one ends may open another, to either worker).
 */
async function connectionTo(url: string, auth: string, worker: string, maxSockets = 4): Promise<Agent> {
  for (;;) {
    const agent = new Agent({ keepAlive: true, maxSockets });
    const answered = await call(agent, url, auth, "GET", "/users/me").catch(() => null);
    if (answered?.worker === worker) return agent;
    agent.destroy();
  }
}

interface Event {
  readonly id: number;
  readonly type: string;
  readonly message?: { id: number; content: string };
}

/** Polls `queue` (through `agent`) until `done` says its events so far are all; returns them. */
async function pollUntil(
  agent: Agent | null,
  url: string,
  auth: string,
  queue: string,
  done: (events: readonly Event[]) => boolean,
  after = "-1",
): Promise<{ events: Event[]; workers: Set<string> }> {
  const events: Event[] = [];
  const seen = new Set<string>();
  let last = Number(after);
  // At least one poll: one that expects nothing must see nothing.
  for (let i = 0; i < 400 && (i === 0 || !done(events)); i++) {
    const params = { queue_id: queue, last_event_id: String(last), dont_block: "true" };
    const answer = await call(agent, url, auth, "GET", "/events", params);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    seen.add(answer.worker);
    const got = answer.body["events"] as Event[];
    events.push(...got);
    if (got.length > 0) last = got.at(-1)!.id;
    else await sleep(25);
  }
  return { events, workers: seen };
}

const messagesOf = (events: readonly Event[]) => events.filter((e) => e.type === "message").map((e) => e.message!);
const send = (agent: Agent | null, url: string, auth: string, content: string) =>
  call(agent, url, auth, "POST", "/messages", { type: "stream", to: "general", topic: "t", content });
const register = (agent: Agent | null, url: string, auth: string, types = '["message"]') =>
  call(agent, url, auth, "POST", "/register", { event_types: types });

describe("event queues of parley serve --workers 2", () => {
  // One server for the first three (the last kills its reader): each start costs seconds.
  let server: { child: ChildProcess; url: string; auth: string };
  beforeAll(async () => {
    const { dir, auth } = newOrg();
    server = { ...(await serveProcess(dir, workers())), auth };
  });
  afterAll(() => stopProcess(server.child, "SIGTERM"));

  it("registered where asked, moved to the worker its polls reach: every event once and in order", async () => {
    const { url, auth } = server;
    const via = { writer: await connectionTo(url, auth, "writer"), reader: await connectionTo(url, auth, "reader-1") };
    const onReader = await register(via.reader, url, auth, '["message","typing"]');
    const onWriter = await register(via.writer, url, auth, '["message","typing"]');
    expect([onReader.worker, onWriter.worker]).toEqual(["reader-1", "writer"]);
    const readerQueue = String(onReader.body["queue_id"]);
    const writerQueue = String(onWriter.body["queue_id"]);

    // Sent through either worker (the reader forwards writes): both queues get each, once, in the writer's order.
    const sent: string[] = [];
    for (let i = 0; i < 10; i++) {
      const content = `m${i}`;
      expect((await send(i % 2 === 0 ? via.reader : via.writer, url, auth, content)).status).toBe(200);
      sent.push(content);
    }
    // Not a write: typing notifications reach a queue on the reader too.
    const me = (await call(via.reader, url, auth, "GET", "/users/me")).body["user_id"] as number;
    const dm = await call(via.reader, url, auth, "POST", "/typing", { op: "start", to: JSON.stringify([me]) });
    expect(dm.status).toBe(200);
    const complete = (events: readonly Event[]) =>
      messagesOf(events).length >= sent.length && events.some((e) => e.type === "typing");
    // Each queue polled through the other worker moves there at its first poll (no poll forwarded).
    for (const [queue, agent, answered] of [
      [readerQueue, via.writer, "writer"],
      [writerQueue, via.reader, "reader-1"],
    ] as const) {
      const { events, workers: answeredBy } = await pollUntil(agent, url, auth, queue, complete);
      expect(messagesOf(events).map((m) => m.content)).toEqual(sent);
      expect(events.filter((e) => e.type === "typing")).toHaveLength(1);
      expect([...answeredBy]).toEqual([answered]);
    }
    // A worker that handed a queue away sends its polls on to where it went, rather than taking it back.
    const moved = await call(via.writer, url, auth, "GET", "/events", { queue_id: writerQueue, dont_block: "true" });
    expect([moved.status, moved.worker]).toEqual([200, "writer>reader-1"]);
    const back = await call(via.reader, url, auth, "GET", "/events", { queue_id: readerQueue, dont_block: "true" });
    expect([back.status, back.worker]).toEqual([200, "reader-1>writer"]);

    // DELETE /events: queue_id in a form body (read to find where it goes), or in the query; sent on as polls are.
    const deleted = await call(via.writer, url, auth, "DELETE", "/events", { queue_id: writerQueue });
    expect([deleted.status, deleted.worker], JSON.stringify(deleted.body)).toEqual([200, "writer>reader-1"]);
    const gone = await call(via.reader, url, auth, "GET", "/events", { queue_id: writerQueue, dont_block: "true" });
    expect([gone.status, gone.body["code"]]).toEqual([400, "BAD_EVENT_QUEUE_ID"]);
    const goneThere = await call(via.writer, url, auth, "GET", "/events", {
      queue_id: writerQueue,
      dont_block: "true",
    });
    expect([goneThere.status, goneThere.body["code"]]).toEqual([400, "BAD_EVENT_QUEUE_ID"]);
    const byQuery = await call(via.reader, url, auth, "DELETE", "/events", { queue_id: readerQueue }, true);
    expect([byQuery.status, byQuery.worker]).toEqual([200, "reader-1>writer"]);
    const again = await call(via.reader, url, auth, "DELETE", "/events", { queue_id: readerQueue });
    expect([again.status, again.body["code"]]).toEqual([400, "BAD_EVENT_QUEUE_ID"]);
    // Nor anywhere else: a queue deleted on one worker moves nowhere.
    const againThere = await call(via.writer, url, auth, "DELETE", "/events", { queue_id: readerQueue });
    expect([againThere.status, againThere.body["code"]]).toEqual([400, "BAD_EVENT_QUEUE_ID"]);
    // An ID naming a worker the server does not run is nobody's queue.
    const stranger = await call(via.reader, url, auth, "GET", "/events", {
      queue_id: "reader-7.x",
      dont_block: "true",
    });
    expect([stranger.status, stranger.body["code"]]).toEqual([400, "BAD_EVENT_QUEUE_ID"]);

    for (const agent of Object.values(via)) agent.destroy();
  });

  it("a burst of sends racing registrations on both workers: no event lost or duplicated", async () => {
    const { url, auth } = server;
    // One connection to each worker for each loop: two requests at once on one agent could open another, anywhere.
    const connections = () => Promise.all(["writer", "reader-1"].map((w) => connectionTo(url, auth, w, 1)));
    const via = await connections();
    const registerVia = await connections();
    const queues: { id: string; after: number; worker: string }[] = [];
    const sent: number[] = [];
    const sending = (async () => {
      for (let i = 0; i < 40; i++) {
        const answer = await send(via[i % 2]!, url, auth, `burst ${i}`);
        expect(answer.status).toBe(200);
        sent.push(answer.body["id"] as number);
      }
    })();
    const registering = (async () => {
      for (let i = 0; i < 16; i++) {
        const answer = await register(registerVia[i % 2]!, url, auth);
        expect(answer.status).toBe(200);
        const after = answer.body["max_message_id"] as number;
        queues.push({ id: String(answer.body["queue_id"]), after, worker: answer.worker });
        await sleep(i * 3);
      }
    })();
    await Promise.all([sending, registering]);
    expect(new Set(queues.map((q) => q.worker))).toEqual(new Set(["writer", "reader-1"]));
    for (const queue of queues) {
      const expected = sent.filter((id) => id > queue.after);
      const { events } = await pollUntil(null, url, auth, queue.id, (got) => messagesOf(got).length >= expected.length);
      expect(
        messagesOf(events).map((m) => m.id),
        `${queue.worker} queue after ${queue.after}`,
      ).toEqual(expected);
      const last = String(events.at(-1)?.id ?? -1);
      const more = await call(null, url, auth, "GET", "/events", {
        queue_id: queue.id,
        last_event_id: last,
        dont_block: "true",
      });
      expect(more.body["events"]).toEqual([]);
    }
    for (const agent of [...via, ...registerVia]) agent.destroy();
  });

  it("a writer's queue moves to the reader its polls reach, mid-burst and with a poll waiting: each event once, in order", async () => {
    const { url, auth } = server;
    const via = {
      writer: await connectionTo(url, auth, "writer", 1),
      reader: await connectionTo(url, auth, "reader-1", 1),
    };
    const waiting = await connectionTo(url, auth, "writer", 1);
    const quiet = String((await register(via.writer, url, auth)).body["queue_id"]);
    const busy = String((await register(via.writer, url, auth)).body["queue_id"]);

    // A poll waiting on the writer when its queue moves is answered there (a heartbeat, kept until acknowledged).
    const held = call(waiting, url, auth, "GET", "/events", { queue_id: quiet, last_event_id: "-1" });
    await sleep(100);
    const moved = await call(via.reader, url, auth, "GET", "/events", { queue_id: quiet, dont_block: "true" });
    const released = await held;
    expect([released.status, released.worker]).toEqual([200, "writer"]);
    expect((released.body["events"] as Event[]).map((e) => e.type)).toEqual(["heartbeat"]);
    expect([moved.status, moved.worker]).toEqual([200, "reader-1"]);
    expect(moved.body["events"]).toEqual(released.body["events"]);

    // Sends through both workers, two at a time; the busy queue moves once some have been acknowledged.
    const sent: number[] = [];
    const sender = async (agent: Agent, tag: string) => {
      for (let i = 0; i < 20; i++) {
        const answer = await send(agent, url, auth, `${tag} ${i}`);
        expect(answer.status).toBe(200);
        sent.push(answer.body["id"] as number);
      }
    };
    const sending = Promise.all([sender(via.writer, "w"), sender(await connectionTo(url, auth, "reader-1", 1), "r")]);
    while (sent.length < 4) await sleep(2);
    const collect = async (queue: string, start: Event[]) => {
      const got = start.slice();
      const answeredBy = new Set<string>();
      for (let i = 0; i < 400 && (i < 3 || messagesOf(got).length < 40); i++) {
        const params = { queue_id: queue, last_event_id: String(got.at(-1)?.id ?? -1), dont_block: "true" };
        const answer = await call(i % 3 === 2 ? via.writer : via.reader, url, auth, "GET", "/events", params);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        answeredBy.add(answer.worker);
        for (const event of answer.body["events"] as Event[]) if (event.id > (got.at(-1)?.id ?? -1)) got.push(event);
        await sleep(5);
      }
      return { got, answeredBy };
    };
    const busyPolls = await collect(busy, []);
    await sending;
    const quietPolls = await collect(quiet, released.body["events"] as Event[]);
    // Two senders: their answers may come back out of commit order, whose order message IDs follow.
    const committed = [...sent].sort((a, b) => a - b);
    for (const { got, answeredBy } of [busyPolls, quietPolls]) {
      expect(messagesOf(got).map((m) => m.id)).toEqual(committed);
      expect(got.map((e) => e.id)).toEqual(got.map((_, i) => i));
      expect(answeredBy).toEqual(new Set(["reader-1", "writer>reader-1"]));
    }
    for (const agent of [...Object.values(via), waiting]) agent.destroy();
  });

  it("kill -9 of a reader: its queues answer BAD_EVENT_QUEUE_ID, the writer's keep working", async () => {
    const { child, url, auth } = server;
    const toReader = await connectionTo(url, auth, "reader-1");
    const onReader = String((await register(toReader, url, auth)).body["queue_id"]);
    // Polled there: it moves to the reader.
    const polled = await call(toReader, url, auth, "GET", "/events", { queue_id: onReader, dont_block: "true" });
    expect([polled.status, polled.worker]).toEqual([200, "reader-1"]);
    toReader.destroy();
    const writer = await connectionTo(url, auth, "writer");
    const onWriter = String((await register(writer, url, auth)).body["queue_id"]);
    process.kill(workerPids(child.pid!)["reader-1"]!, "SIGKILL");

    expect((await send(writer, url, auth, "after the kill")).status).toBe(200);
    const kept = await pollUntil(writer, url, auth, onWriter, (events) => messagesOf(events).length > 0);
    expect(messagesOf(kept.events).map((m) => m.content)).toEqual(["after the kill"]);
    // Through the writer: no worker holds it any more.
    const answer: Answer = await call(writer, url, auth, "GET", "/events", { queue_id: onReader, dont_block: "true" });
    expect([answer.status, answer.body["code"], answer.worker]).toEqual([400, "BAD_EVENT_QUEUE_ID", "writer"]);
    // The replacement takes queues, and gets the writer's events.
    const reader = await connectionTo(url, auth, "reader-1");
    const fresh = String((await register(reader, url, auth)).body["queue_id"]);
    await pollUntil(reader, url, auth, fresh, () => true);
    expect((await send(writer, url, auth, "to the new reader")).status).toBe(200);
    const got = await pollUntil(reader, url, auth, fresh, (events) => messagesOf(events).length > 0);
    expect(messagesOf(got.events).map((m) => m.content)).toEqual(["to the new reader"]);
    expect([...got.workers]).toEqual(["reader-1"]);
    for (const agent of [writer, reader]) agent.destroy();
  });

  it("a reader's queues are saved at a clean stop and come back; a clean restart of the writer costs them nothing", async () => {
    const { dir, auth } = newOrg();
    const first = await serveProcess(dir, workers());
    const reader = await connectionTo(first.url, auth, "reader-1");
    const queue = String((await register(reader, first.url, auth)).body["queue_id"]);
    expect((await send(null, first.url, auth, "before the stop")).status).toBe(200);
    // The reader got the message before the stop: it is saved with the queue.
    await pollUntil(reader, first.url, auth, queue, (events) => messagesOf(events).length > 0);
    reader.destroy();
    await stopProcess(first.child, "SIGTERM");

    const second = await serveProcess(dir, workers());
    const { events } = await pollUntil(null, second.url, auth, queue, (got) => got.some((e) => e.type === "restart"));
    expect(events.map((e) => e.type)).toEqual(["message", "restart"]);

    // The writer alone stopped cleanly and replaced: its stream ended after its last batch, and no write came
    // before the new one's stream (this realm has nothing due at a start), so the reader's queue missed nothing.
    const writerPid = workerPids(second.child.pid!)["writer"]!;
    process.kill(writerPid, "SIGTERM");
    // A writer stopping answers what reached it before it closed its port (on a loaded machine a send can
    // get there before its signal handler runs): send only once it has exited, so that the send below is
    // the replacement's.
    while (existsSync(`/proc/${writerPid}`)) await sleep(50);
    for (;;) {
      const sent = await send(null, second.url, auth, "after the writer's restart").catch(() => null);
      if (sent?.status === 200) break;
      await sleep(100);
    }
    expect(workerPids(second.child.pid!)["writer"]).not.toBe(writerPid);
    const last = String(events.at(-1)!.id);
    const after = await pollUntil(null, second.url, auth, queue, (got) => messagesOf(got).length > 0, last);
    expect(messagesOf(after.events).map((m) => m.content)).toEqual(["after the writer's restart"]);
    await stopProcess(second.child, "SIGTERM");
  });
});

describe("event queues of parley serve --workers 3", () => {
  const names = ["writer", "reader-1", "reader-2"] as const;
  let server: { child: ChildProcess; url: string; auth: string };
  beforeAll(async () => {
    const { dir, auth } = newOrg();
    server = { ...(await serveProcess(dir, workers([], 3))), auth };
  });
  afterAll(() => stopProcess(server.child, "SIGTERM"));

  it("polls landing on each worker in turn, mid-burst of sends through every worker: each event once, in order", async () => {
    const { url, auth } = server;
    const via = await Promise.all(names.map((w) => connectionTo(url, auth, w, 1)));
    // A queue registered on each worker, first polled on the next one:
    // writer to reader, reader to reader, reader to writer.
    const queues: { id: string; first: number }[] = [];
    for (let i = 0; i < names.length; i++) {
      const answer = await register(via[i]!, url, auth);
      expect(answer.worker).toBe(names[i]);
      queues.push({ id: String(answer.body["queue_id"]), first: (i + 1) % names.length });
    }

    const sent: number[] = [];
    const sender = async (agent: Agent, tag: string) => {
      for (let i = 0; i < 15; i++) {
        const answer = await send(agent, url, auth, `${tag} ${i}`);
        expect(answer.status).toBe(200);
        sent.push(answer.body["id"] as number);
      }
    };
    const senders = await Promise.all(names.map((w) => connectionTo(url, auth, w, 1)));
    const sending = Promise.all(senders.map((agent, i) => sender(agent, names[i]!)));
    while (sent.length < 4) await sleep(2);
    // Each queue's first poll moves it to the worker polled, mid-burst: answered there, not sent on.
    for (const queue of queues) {
      const params = { queue_id: queue.id, dont_block: "true" };
      const answer = await call(via[queue.first]!, url, auth, "GET", "/events", params);
      expect([answer.status, answer.worker]).toEqual([200, names[queue.first]]);
    }
    let done = false;
    const collect = async (queue: { id: string; first: number }) => {
      const got: Event[] = [];
      const answeredBy = new Set<string>();
      for (let i = 0; i < 600 && (i < 6 || !done || messagesOf(got).length < sent.length); i++) {
        const params = { queue_id: queue.id, last_event_id: String(got.at(-1)?.id ?? -1), dont_block: "true" };
        const answer = await call(via[(queue.first + i) % names.length]!, url, auth, "GET", "/events", params);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        answeredBy.add(answer.worker);
        for (const event of answer.body["events"] as Event[]) if (event.id > (got.at(-1)?.id ?? -1)) got.push(event);
        await sleep(5);
      }
      return { got, answeredBy };
    };
    const polls = Promise.all(queues.map(collect));
    await sending;
    done = true;
    const committed = [...sent].sort((a, b) => a - b);
    for (const { got, answeredBy } of await polls) {
      expect(messagesOf(got).map((m) => m.id)).toEqual(committed);
      expect(got.map((e) => e.id)).toEqual(got.map((_, i) => i));
      // Polls reached all three workers; each was answered where the queue was.
      expect(new Set([...answeredBy].map((w) => w.split(">")[0]))).toEqual(new Set(names));
    }
    for (const agent of [...via, ...senders]) agent.destroy();
  });

  it("a poll waiting on a reader when its queue moves to another reader is answered; the moved queue keeps it", async () => {
    const { url, auth } = server;
    const [one, waiting, two] = await Promise.all([
      connectionTo(url, auth, "reader-1", 1),
      connectionTo(url, auth, "reader-1", 1),
      connectionTo(url, auth, "reader-2", 1),
    ]);
    const queue = String((await register(one!, url, auth)).body["queue_id"]);
    const held = call(waiting!, url, auth, "GET", "/events", { queue_id: queue, last_event_id: "-1" });
    await sleep(100);
    const moved = await call(two!, url, auth, "GET", "/events", { queue_id: queue, dont_block: "true" });
    const released = await held;
    expect([released.status, released.worker]).toEqual([200, "reader-1"]);
    expect((released.body["events"] as Event[]).map((e) => e.type)).toEqual(["heartbeat"]);
    expect([moved.status, moved.worker]).toEqual([200, "reader-2"]);
    expect(moved.body["events"]).toEqual(released.body["events"]);
    expect((await send(one!, url, auth, "after the move")).status).toBe(200);
    const { events, workers: answeredBy } = await pollUntil(
      two!,
      url,
      auth,
      queue,
      (got) => messagesOf(got).length > 0,
      "0",
    );
    expect(messagesOf(events).map((m) => m.content)).toEqual(["after the move"]);
    expect([...answeredBy]).toEqual(["reader-2"]);
    for (const agent of [one, waiting, two]) agent!.destroy();
  });

  it("a client alternating between two workers moves its queue once, then is sent on to it; DELETE anywhere", async () => {
    const { url, auth } = server;
    const [writer, one, two] = await Promise.all(names.map((w) => connectionTo(url, auth, w, 1)));
    const queue = String((await register(writer!, url, auth)).body["queue_id"]);
    const answeredBy: string[] = [];
    for (let i = 0; i < 8; i++) {
      const answer = await call(i % 2 === 0 ? one! : two!, url, auth, "GET", "/events", {
        queue_id: queue,
        dont_block: "true",
      });
      expect(answer.status).toBe(200);
      answeredBy.push(answer.worker);
    }
    // Taken by reader-1, then reader-2; reader-1, which handed it away, sends its polls on from then on.
    expect(answeredBy).toEqual(
      ["reader-1", "reader-2", ...Array<string[]>(3).fill(["reader-1>reader-2", "reader-2"])].flat(),
    );

    // Deleted through the writer, which sends it on to where it handed it (reader-1, which takes it back): then
    // it is nowhere.
    const deleted = await call(writer!, url, auth, "DELETE", "/events", { queue_id: queue });
    expect([deleted.status, deleted.worker]).toEqual([200, "writer>reader-1"]);
    for (const agent of [writer, one, two]) {
      const gone = await call(agent!, url, auth, "GET", "/events", { queue_id: queue, dont_block: "true" });
      expect([gone.status, gone.body["code"]]).toEqual([400, "BAD_EVENT_QUEUE_ID"]);
    }
    const stranger = await call(two!, url, auth, "GET", "/events", { queue_id: "reader-7.x", dont_block: "true" });
    expect([stranger.status, stranger.body["code"], stranger.worker]).toEqual([400, "BAD_EVENT_QUEUE_ID", "reader-2"]);
    for (const agent of [writer, one, two]) agent!.destroy();
  });
});
