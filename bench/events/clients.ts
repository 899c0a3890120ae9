/**
 * @module bench/events/clients
 * The load generator's side: a small HTTP helper on node:http, queue registration,
 * a fleet of long-polling clients that time each message from its send to the
 * arrival of the poll answer carrying it, and a sender at a steady rate.
 */
import http from "node:http";
import type { Credentials } from "./protocol.js";

export interface Answer {
  readonly status: number;
  readonly body: string;
}

export function basicAuth(c: Credentials): string {
  return "Basic " + Buffer.from(`${c.email}:${c.apiKey}`).toString("base64");
}

export function request(
  agent: http.Agent,
  port: number,
  method: string,
  path: string,
  auth: string | null,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = auth;
    if (body !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    const req = http.request({ host: "127.0.0.1", port, method, path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Runs fn over items with at most `limit` in flight. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  onProgress?: (done: number) => void,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let done = 0;
  async function worker(): Promise<void> {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
      done++;
      if (onProgress && done % 1000 === 0) onProgress(done);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export interface Queue {
  readonly auth: string;
  readonly queueId: string;
  lastEventId: number;
}

export async function register(agent: http.Agent, port: number, user: Credentials): Promise<Queue> {
  const auth = basicAuth(user);
  const answer = await request(
    agent,
    port,
    "POST",
    "/api/v1/register",
    auth,
    new URLSearchParams({ event_types: JSON.stringify(["message"]) }).toString(),
  );
  if (answer.status !== 200)
    throw new Error(`register ${user.email}: HTTP ${answer.status} ${answer.body.slice(0, 200)}`);
  const parsed = JSON.parse(answer.body) as { queue_id?: unknown; last_event_id?: unknown };
  if (typeof parsed.queue_id !== "string" || typeof parsed.last_event_id !== "number")
    throw new Error(`register ${user.email}: unexpected answer ${answer.body.slice(0, 200)}`);
  return { auth, queueId: parsed.queue_id, lastEventId: parsed.last_event_id };
}

const SEQ = /bench-(\d+)/;

/**
 * N clients, each keeping one GET /events open; on an answer it records, for every
 * message event, arrival − send time of that message, and polls again at once.
 */
export class PollFleet {
  readonly sendTimes = new Map<number, number>();
  readonly latencies: number[] = [];
  /** seq → [first, last] answer arrival. */
  readonly arrivals = new Map<number, [number, number]>();
  readonly answerBytes: number[] = [];
  messageEvents = 0;
  heartbeats = 0;
  errors = 0;
  lastError = "";
  #stopped = false;

  constructor(
    private readonly agent: http.Agent,
    private readonly port: number,
    private readonly queues: readonly Queue[],
  ) {}

  start(): void {
    for (const q of this.queues) this.#poll(q);
  }

  stop(): void {
    this.#stopped = true;
  }

  #poll(q: Queue): void {
    if (this.#stopped) return;
    const path = `/api/v1/events?queue_id=${encodeURIComponent(q.queueId)}&last_event_id=${q.lastEventId}`;
    const req = http.request(
      {
        host: "127.0.0.1",
        port: this.port,
        method: "GET",
        path,
        agent: this.agent,
        headers: { authorization: q.auth },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const arrival = performance.now();
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode !== 200) {
            this.#fail(`HTTP ${res.statusCode} ${text.slice(0, 200)}`);
            setTimeout(() => this.#poll(q), 100);
            return;
          }
          this.#record(q, text, arrival);
          this.#poll(q);
        });
      },
    );
    req.on("error", (e: Error) => {
      if (this.#stopped) return;
      this.#fail(e.message);
      setTimeout(() => this.#poll(q), 100);
    });
    req.end();
  }

  #fail(message: string): void {
    this.errors++;
    this.lastError = message;
  }

  #record(q: Queue, text: string, arrival: number): void {
    const parsed = JSON.parse(text) as { events?: { type: string; id: number; message?: { content?: string } }[] };
    let sawMessage = false;
    for (const event of parsed.events ?? []) {
      if (event.id > q.lastEventId) q.lastEventId = event.id;
      if (event.type === "heartbeat") this.heartbeats++;
      if (event.type !== "message") continue;
      const seq = Number(SEQ.exec(event.message?.content ?? "")?.[1] ?? NaN);
      const sent = this.sendTimes.get(seq);
      if (sent === undefined) continue;
      sawMessage = true;
      this.messageEvents++;
      this.latencies.push(arrival - sent);
      const span = this.arrivals.get(seq);
      if (!span) this.arrivals.set(seq, [arrival, arrival]);
      else span[1] = arrival;
    }
    if (sawMessage && this.answerBytes.length < 10_000) this.answerBytes.push(Buffer.byteLength(text));
  }
}

/**
 * Sends `count` messages at `rate` per second without waiting for answers (so a slow
 * server does not slow the rate), noting each send time in the fleet. Resolves when
 * every send has been answered.
 */
export async function sendSteadily(
  fleet: PollFleet,
  count: number,
  rate: number,
  post: (seq: number) => Promise<Answer>,
  onProgress: (seq: number) => void,
): Promise<{ failures: number; lastFailure: string }> {
  const start = performance.now();
  const pending: Promise<void>[] = [];
  let failures = 0;
  let lastFailure = "";
  for (let seq = 0; seq < count; seq++) {
    const due = start + (seq * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    fleet.sendTimes.set(seq, performance.now());
    pending.push(
      post(seq).then(
        (a) => {
          if (a.status !== 200) {
            failures++;
            lastFailure = `HTTP ${a.status} ${a.body.slice(0, 200)}`;
          }
        },
        (e: unknown) => {
          failures++;
          lastFailure = String(e);
        },
      ),
    );
    onProgress(seq);
  }
  await Promise.all(pending);
  return { failures, lastFailure };
}
