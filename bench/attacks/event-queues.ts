/**
 * @module bench/attacks/event-queues
 * Hardening issue, item 2: a member registers 20,000 event queues (16 requests in
 * flight), then the owner sends them 1,000 direct messages. Before the caps the
 * queues all lived and every DM was pushed into each of them (RSS 212 -> 1,387 MB,
 * sends up to 2.6 s). The line reports how many registrations the server took, how
 * many of the first and last queues still answer, how long the sends took, and the
 * backlog of a surviving queue.
 */
import { Agent, request } from "node:http";
import type { Attack, AttackTarget, Credentials } from "./types.js";

const QUEUES = 20_000;
const DMS = 1_000;
const REGISTER_CONCURRENCY = 16;
const SEND_CONCURRENCY = 4;
/** Queues probed at each end of the registration order. */
const PROBES = 20;

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function caller(target: AttackTarget, agent: Agent) {
  const base = new URL(target.baseUrl);
  return (who: Credentials, method: string, path: string, params: Record<string, string>): Promise<Answer> => {
    const form = new URLSearchParams(params).toString();
    const query = method === "GET" ? `?${form}` : "";
    const body = method === "GET" ? "" : form;
    const headers = {
      Authorization: `Basic ${Buffer.from(`${who.email}:${who.apiKey}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
      "Content-Length": String(Buffer.byteLength(body)),
    };
    const options = { agent, host: base.hostname, port: base.port, method, path: `/api/v1${path}${query}`, headers };
    return new Promise((resolve, reject) => {
      const req = request(options, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
          } catch {
            // A non-JSON answer is reported by its status alone.
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  };
}

/** Runs `task(0..count-1)` with at most `width` in flight; stops starting new ones once `signal` aborts. */
async function pool(count: number, width: number, signal: AbortSignal, task: (i: number) => Promise<void>) {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count && !signal.aborted) await task(next++);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

const thousands = (n: number): string => n.toLocaleString("en-US");

export const attack: Attack = {
  item: 2,
  name: "event queues: 20,000 registers by one member, then 1,000 DMs to them",
  async run(target, signal) {
    const agent = new Agent({ keepAlive: true, maxSockets: REGISTER_CONCURRENCY });
    // An abort ends the requests in flight (they reject) and no new ones start (pool).
    const abort = (): void => agent.destroy();
    signal.addEventListener("abort", abort, { once: true });
    const call = caller(target, agent);
    try {
      const member = (await call(target.member, "GET", "/users/me", {})).body;
      const memberId = member["user_id"];
      if (typeof memberId !== "number") throw new Error("GET /users/me as the member did not answer a user_id");

      const queueIds: (string | null)[] = new Array<string | null>(QUEUES).fill(null);
      const statuses = new Map<number, number>();
      await pool(QUEUES, REGISTER_CONCURRENCY, signal, async (i) => {
        const r = await call(target.member, "POST", "/register", { event_types: '["message"]' });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 200 && typeof r.body["queue_id"] === "string") queueIds[i] = r.body["queue_id"];
      });
      const registered = queueIds.filter((q) => q !== null);

      let worstSendMs = 0;
      const sendStarted = performance.now();
      let sent = 0;
      await pool(DMS, SEND_CONCURRENCY, signal, async (i) => {
        const t0 = performance.now();
        const dm = { type: "direct", to: `[${memberId}]`, content: `queue flood ${i}` };
        const r = await call(target.owner, "POST", "/messages", dm);
        worstSendMs = Math.max(worstSendMs, performance.now() - t0);
        if (r.status === 200) sent++;
      });
      const sendSecs = (performance.now() - sendStarted) / 1000;

      /** Polls each queue once: alive, collected (BAD_EVENT_QUEUE_ID) or refused otherwise (429). */
      const probe = async (ids: readonly string[]): Promise<string> => {
        let alive = 0;
        let collected = 0;
        let backlog = 0;
        for (const id of ids) {
          const r = await call(target.member, "GET", "/events", { queue_id: id, dont_block: "true" });
          if (r.body["code"] === "BAD_EVENT_QUEUE_ID") collected++;
          if (r.status !== 200) continue;
          alive++;
          backlog = Math.max(backlog, Array.isArray(r.body["events"]) ? r.body["events"].length : 0);
        }
        const refused = ids.length - alive - collected;
        const held = alive > 0 ? ` (backlog <= ${backlog})` : "";
        return `${alive} alive${held}, ${collected} collected${refused > 0 ? `, ${refused} refused` : ""}`;
      };
      const first = await probe(registered.slice(0, PROBES));
      const last = await probe(registered.slice(-PROBES));
      const answered = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${thousands(n)}x${status}`);
      return (
        `${thousands(QUEUES)} registers (${answered.join(" ")}); first ${PROBES} queues: ${first}; ` +
        `last ${PROBES}: ${last}; ${thousands(sent)}/${thousands(DMS)} DMs sent in ${sendSecs.toFixed(1)} s, ` +
        `slowest ${Math.round(worstSendMs)} ms`
      );
    } finally {
      signal.removeEventListener("abort", abort);
      agent.destroy();
    }
  },
};
