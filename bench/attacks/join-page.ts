/**
 * @module bench/attacks/join-page
 * Hardening item 6: the owner makes a reusable invitation link over the API, then 300
 * complete join forms (distinct addresses, strong passwords) are posted to it at once,
 * each asking for an scrypt hash. Before the fix every post hashed on libuv's thread
 * pool and file downloads stalled 20.9 s; now the client address's limit refuses most
 * of them before anything is looked at, and the hashes that do run go through the
 * bounded hash pool.
 */
import { Agent, request } from "node:http";
import type { Attack, AttackTarget, Credentials } from "./types.js";

const POSTS = 300;

interface Answer {
  readonly status: number;
  readonly body: string;
}

function basic(who: Credentials): string {
  return `Basic ${Buffer.from(`${who.email}:${who.apiKey}`).toString("base64")}`;
}

/** One request on `agent` (no keep-alive: every socket is closed when its answer is read). */
function send(agent: Agent, url: URL, method: string, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length = String(Buffer.byteLength(body));
    const options = { agent, method, headers: { ...headers, "Content-Length": length, Connection: "close" } };
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The path of a new reusable link (the link itself names the realm's public URL, not the listener). */
async function createLink(agent: Agent, target: AttackTarget): Promise<string> {
  const url = new URL("/api/v1/invites/multiuse", target.baseUrl);
  const headers = { Authorization: basic(target.owner), "Content-Type": "application/x-www-form-urlencoded" };
  const answer = await send(agent, url, "POST", headers, "invite_expires_in_minutes=60");
  const parsed: unknown = JSON.parse(answer.body);
  const fields = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const link = fields["invite_link"];
  if (answer.status !== 200 || typeof link !== "string") {
    const said = answer.body.slice(0, 200);
    throw new Error(`POST /invites/multiuse answered ${answer.status}: ${said} (needs an owner's credentials)`);
  }
  return new URL(link).pathname;
}

function summary(counts: ReadonlyMap<string, number>): string {
  const label = (k: string) => (k === "200" ? "accounts created" : k === "error" ? "failed" : `answered ${k}`);
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${n.toLocaleString("en")} ${label(k)}`)
    .join(", ");
}

export const attack: Attack = {
  item: 6,
  name: "join page: 300 concurrent complete forms on one reusable link",
  async run(target, signal) {
    const agent = new Agent({ keepAlive: false, maxSockets: POSTS });
    try {
      const path = await createLink(agent, target);
      const url = new URL(path, target.baseUrl);
      const run = Date.now().toString(36);
      const counts = new Map<string, number>();
      const posts = Array.from({ length: POSTS }, async (_, i) => {
        if (signal.aborted) return;
        const email = `flood-${run}-${i}@example.net`;
        const form = new URLSearchParams({ email, full_name: `Flood ${i}`, password: `violet harbour ${run} ${i}` });
        const headers = { "Content-Type": "application/x-www-form-urlencoded" };
        const answer = send(agent, url, "POST", headers, form.toString());
        const key = await answer.then(
          (a) => String(a.status),
          () => "error",
        );
        counts.set(key, (counts.get(key) ?? 0) + 1);
      });
      await Promise.all(posts);
      return `${POSTS} join posts: ${summary(counts)}`;
    } finally {
      agent.destroy();
    }
  },
};
