/**
 * @module bench/http/run
 * `npm run bench:http [-- --scale 100k|N] [--data DIR] [--duration S] [--connections 1,4,16,64] [--only TEXT]`
 * (--only: just the scenarios whose name contains TEXT, e.g. "presence";
 * --server-node-args "--cpu-prof --cpu-prof-dir=DIR": extra Node options for the server, e.g. to profile it;
 * --client wrk: drive the cells with wrk (bench/http/wrk.ts) instead of autocannon)
 *
 * Loopback HTTP throughput of the real server: `dist/tools/parley.js serve` runs as a
 * child process on a generated dataset; autocannon drives GET /messages (windows of
 * 100 and 1000), POST /messages and POST /users/me/presence (ping_only, a poll with
 * nothing new, and a full fetch of every user's presence, with every human user of
 * the realm seen beforehand: 10,000 at 100k; each request as another user) at several
 * concurrencies, reporting req/s, p50,
 * p99 and the server's CPU (from /proc, in cores) and RSS. Results go to
 * bench/results/http-<scale>.{json,md}. The server is stopped at the end, on error
 * and on Ctrl-C. Before the server starts, the cost of building a full presence answer
 * (query, wire shape, JSON) is also timed in process.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { type Store, type User } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { presencesToWire } from "../../src/wire/presence.js";
import { bodyByteLength, success } from "../../src/http/respond.js";
import { chooseDataset, ensureDataset, workingCopy } from "../dataset.js";
import { runWrk } from "./wrk.js";
import { cpuSeconds, rssMB, startServer } from "../server-process.js";

const log = (line: string) => process.stderr.write(line + "\n");

interface Scenario {
  readonly name: string;
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: string;
  /** Authorization headers to rotate through, one per request (default: the main subject's). */
  readonly rotateAuth?: readonly string[];
}

const basic = (user: User) => "Basic " + Buffer.from(`${user.email}:${user.apiKey}`).toString("base64");

/**
 * Every active human user of the realm pings once (so presence lists them all), then
 * the store closes (which writes them). Returns their credentials, the largest
 * presence_last_update_id, and the in-process cost of a full presence answer.
 */
function seedPresence(
  store: Store,
  realmId: number,
): { auths: string[]; lastUpdateId: number; fullFetchMs: { p50: number; p99: number; users: number; bytes: number } } {
  const humans = store.realmUsers(realmId).filter((u) => u.isActive && !u.isBot);
  for (const u of humans) store.updatePresence(u.id, "active");
  const viewer = humans[0]!;
  const times: number[] = [];
  let bytes = 0;
  let listing = store.realmPresence(viewer.id, { lastUpdateId: -1 });
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now();
    listing = store.realmPresence(viewer.id, { lastUpdateId: -1 });
    bytes = bodyByteLength(
      success(
        {
          presences: presencesToWire(listing, true),
          server_timestamp: Date.now() / 1000,
          presence_last_update_id: listing.lastUpdateId,
        },
        [],
      ).body,
    );
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 100) / 100;
  return {
    auths: humans.map(basic),
    lastUpdateId: listing.lastUpdateId,
    fullFetchMs: { p50: at(0.5), p99: at(0.99), users: listing.rows.length, bytes },
  };
}

interface Row {
  readonly scenario: string;
  readonly connections: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly serverCpuCores: number;
  readonly serverRssMB: number;
}

function fromAutocannon(result: autocannon.Result): {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
} {
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** An autocannon setupRequest that sends each request with the next credentials of the list. */
function rotating(auths: readonly string[]): (request: autocannon.Request) => autocannon.Request {
  let next = 0;
  return (request) => {
    request.headers = { ...request.headers, authorization: auths[next++ % auths.length]! };
    return request;
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scale: { type: "string" },
      data: { type: "string" },
      duration: { type: "string" },
      connections: { type: "string" },
      out: { type: "string" },
      only: { type: "string" },
      "server-node-args": { type: "string" },
      client: { type: "string" },
    },
    strict: true,
  });
  const client = values.client ?? "autocannon";
  if (client !== "autocannon" && client !== "wrk") throw new Error(`--client takes autocannon or wrk, not ${client}`);
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, log);
  const duration = Number(values.duration ?? 5);
  const concurrencies = (values.connections ?? "1,4,16,64").split(",").map(Number);

  // The server sends messages: serve a private copy so the dataset stays as generated.
  const work = workingCopy(choice.dir);
  // Credentials straight from the store (the server is not running yet: one process per data dir).
  const store = openStore(work.dir);
  const user = store.getUser(manifest.subjects.main);
  const auth = basic(user);
  const presence = seedPresence(store, user.realmId);
  log(
    `full presence answer in process (${presence.fullFetchMs.users} users, ${Math.round(presence.fullFetchMs.bytes / 1024)} KB): p50 ${presence.fullFetchMs.p50} ms, p99 ${presence.fullFetchMs.p99} ms`,
  );
  store.close();

  const { child, port } = await startServer(
    work.dir,
    (values["server-node-args"] ?? "").split(" ").filter((a) => a !== ""),
  );
  const stop = () => {
    if (child.exitCode === null) child.kill("SIGTERM");
  };
  process.once("exit", stop);
  process.once("SIGINT", () => {
    stop();
    process.exit(130);
  });
  try {
    const narrow = encodeURIComponent(JSON.stringify([{ operator: "channel", operand: manifest.generalChannelId }]));
    const scenarios: Scenario[] = [
      {
        name: "GET /messages 100",
        method: "GET",
        path: `/api/v1/messages?anchor=newest&num_before=100&num_after=0&narrow=${narrow}`,
      },
      {
        name: "GET /messages 1000",
        method: "GET",
        path: `/api/v1/messages?anchor=newest&num_before=1000&num_after=0&narrow=${narrow}`,
      },
      {
        name: "POST /messages",
        method: "POST",
        path: "/api/v1/messages",
        body: new URLSearchParams({
          type: "stream",
          to: String(manifest.generalChannelId),
          topic: "http bench",
          content: "Load test message.",
        }).toString(),
      },
      {
        name: "POST /users/me/presence ping_only",
        method: "POST",
        path: "/api/v1/users/me/presence",
        body: "status=active&ping_only=true",
        rotateAuth: presence.auths,
      },
      {
        name: "POST /users/me/presence poll (nothing new)",
        method: "POST",
        path: "/api/v1/users/me/presence",
        body: `status=active&last_update_id=${presence.lastUpdateId + 1_000_000}`,
        rotateAuth: presence.auths,
      },
      {
        name: `POST /users/me/presence full (${presence.fullFetchMs.users} users)`,
        method: "POST",
        path: "/api/v1/users/me/presence",
        body: "status=active&last_update_id=-1",
        rotateAuth: presence.auths,
      },
    ];
    const rows: Row[] = [];
    for (const scenario of scenarios.filter((sc) => values.only === undefined || sc.name.includes(values.only))) {
      for (const connections of concurrencies) {
        log(`${scenario.name}, ${connections} connection(s), ${duration} s…`);
        const cpu0 = cpuSeconds(child.pid!);
        const t0 = performance.now();
        const headers = {
          authorization: auth,
          ...(scenario.body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        };
        const url = `http://127.0.0.1:${port}${scenario.path}`;
        const result =
          client === "wrk"
            ? await runWrk({
                url,
                method: scenario.method,
                headers,
                connections,
                durationSeconds: duration,
                ...(scenario.body ? { body: scenario.body } : {}),
                ...(scenario.rotateAuth ? { rotateAuth: scenario.rotateAuth } : {}),
              })
            : fromAutocannon(
                await autocannon({
                  url,
                  method: scenario.method,
                  connections,
                  duration,
                  headers,
                  ...(scenario.body ? { body: scenario.body } : {}),
                  ...(scenario.rotateAuth ? { requests: [{ setupRequest: rotating(scenario.rotateAuth) }] } : {}),
                }),
              );
        const wall = (performance.now() - t0) / 1000;
        const row: Row = {
          scenario: scenario.name,
          connections,
          ...result,
          serverCpuCores: Math.round(((cpuSeconds(child.pid!) - cpu0) / wall) * 100) / 100,
          serverRssMB: rssMB(child.pid!),
        };
        rows.push(row);
        log(
          `  ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, server CPU ${row.serverCpuCores} cores, RSS ${row.serverRssMB} MB${row.non2xx || row.errors ? `, ${row.non2xx} non-2xx, ${row.errors} errors` : ""}`,
        );
      }
    }
    const outDir = values.out ?? join("bench", "results");
    mkdirSync(outDir, { recursive: true });
    // A partial run (--only) gets its own file rather than replacing the full table.
    const prefix = join(
      outDir,
      `http-${choice.label}${client === "wrk" ? "-wrk" : ""}${values.only === undefined ? "" : `-${values.only.replace(/[^a-zA-Z0-9]+/g, "-")}`}`,
    );
    writeFileSync(
      `${prefix}.json`,
      JSON.stringify(
        {
          scale: choice.label,
          messages: manifest.scale.messages,
          duration,
          client,
          presenceFullFetchInProcessMs: presence.fullFetchMs,
          rows,
        },
        null,
        2,
      ) + "\n",
    );
    const md = [
      `# HTTP throughput over loopback: ${choice.label} messages`,
      "",
      `${client === "wrk" ? "wrk (one thread)" : "autocannon"} → \`parley serve\` (separate process, same 2-core machine, so the load generator competes for CPU), ${duration} s per cell, authenticated as an active member. GET narrows to the 10,000-subscriber channel.`,
      "",
      "| scenario | connections | req/s | p50 ms | p99 ms | server CPU (cores) | server RSS MB | non-2xx / errors |",
      "|---|---:|---:|---:|---:|---:|---:|---|",
      ...rows.map(
        (r) =>
          `| ${r.scenario} | ${r.connections} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.serverCpuCores} | ${r.serverRssMB} | ${r.non2xx} / ${r.errors} |`,
      ),
      "",
      `Presence: every one of the realm's ${presence.fullFetchMs.users} active human users was seen before the run; each presence request is sent as the next of them. "poll (nothing new)" passes a last_update_id above every one handed out. A full presence answer built in process (query, wire shape, response body; ${Math.round(presence.fullFetchMs.bytes / 1024)} KB): p50 ${presence.fullFetchMs.p50} ms, p99 ${presence.fullFetchMs.p99} ms.`,
      "",
    ].join("\n");
    writeFileSync(`${prefix}.md`, md);
    log(md);
    return rows.some((r) => r.non2xx > 0 || r.errors > 0) ? 1 : 0;
  } finally {
    stop();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench:http: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
