/**
 * The data directory's one-writer lock. Racers are real processes (the compiled engine
 * from dist/, so `npm run build` must have run): twelve of them, released together at
 * one instant, race for one fresh directory per round, over fresh, stale and
 * half-abandoned locks; every round must have exactly one winner.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataDirectoryLockedError } from "../../../src/engine/index.js";
import { openStore } from "../../../src/index.js";
import { LOCK_FILE, lockDataDir, parseHolder, takeoverMarker } from "../../../src/engine/storage/lock.js";

const DIST = fileURLToPath(new URL("../../../dist/src/engine/", import.meta.url));
const LOCK_URL = pathToFileURL(join(DIST, "storage/lock.js")).href;
const ENGINE_URL = pathToFileURL(join(DIST, "index.js")).href;

const BOOT_ID = existsSync("/proc/sys/kernel/random/boot_id")
  ? readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
  : null;

/**
 * A racer: on "go DIR AT" it sleeps until the wall-clock instant AT (spinning the last
 * milliseconds, so all racers start within a fraction of one), tries the lock and
 * answers "won PID" or "lost NAME MESSAGE". A winner keeps its lock until it exits.
 */
const RACER = `
const { lockDataDir } = await import(process.env.LOCK_URL);
const { createInterface } = await import("node:readline");
const now = () => performance.timeOrigin + performance.now();
const pause = new Int32Array(new SharedArrayBuffer(4));
createInterface({ input: process.stdin }).on("line", (line) => {
  const [cmd, dir, at] = line.split(" ");
  if (cmd !== "go") process.exit(0);
  const start = Number(at);
  if (start - now() > 3) Atomics.wait(pause, 0, 0, start - now() - 3);
  while (now() < start);
  try {
    lockDataDir(dir, { command: "racer", durable: false });
    process.stdout.write("won " + process.pid + "\\n");
  } catch (error) {
    process.stdout.write("lost " + error.name + " " + String(error.message).replace(/\\n/g, " ") + "\\n");
  }
});
process.stdout.write("ready\\n");
`;

interface Racer {
  readonly proc: ChildProcessWithoutNullStreams;
  next(): Promise<string>;
}

function startRacer(): Racer {
  const proc = spawn(process.execPath, ["--input-type=module", "-e", RACER], { env: { ...process.env, LOCK_URL } });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: proc.stdout }).on("line", (line) => {
    const w = waiting.shift();
    if (w) w(line);
    else lines.push(line);
  });
  let stderr = "";
  proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    proc,
    next: () =>
      new Promise((resolve, reject) => {
        const line = lines.shift();
        if (line !== undefined) return resolve(line);
        const timer = setTimeout(
          () => reject(new Error(`racer ${proc.pid} silent for 20 s; stderr: ${stderr}`)),
          20_000,
        );
        waiting.push((l) => {
          clearTimeout(timer);
          resolve(l);
        });
      }),
  };
}

const base = mkdtempSync(join(tmpdir(), "parley-lock-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let dirCount = 0;
function freshDir(): string {
  return mkdtempSync(join(base, `d${++dirCount}-`));
}

/** A pid that belonged to a process that has exited (and been reaped); found once, as spawning is slow. */
let dead = 0;
function deadPid(): number {
  if (dead === 0) dead = spawnSync(process.execPath, ["-e", ""]).pid;
  expect(dead).toBeGreaterThan(0);
  return dead;
}

/** A complete holder record as the engine writes it. */
function record(fields: {
  pid: number;
  startTime?: string | null;
  bootId?: string | null;
  host?: string;
  command?: string;
}): string {
  return JSON.stringify({
    pid: fields.pid,
    token: Math.random().toString(16).slice(2),
    host: fields.host ?? hostname(),
    bootId: fields.bootId === undefined ? BOOT_ID : fields.bootId,
    startTime: fields.startTime ?? null,
    command: fields.command ?? "parley serve",
    since: Date.now(),
  });
}

/** How a round's directory is prepared before the racers are released. */
type Setup = "fresh" | "dead pid" | "reused pid" | "other boot" | "stale marker" | "empty file";

function prepare(dir: string, setup: Setup): void {
  const path = join(dir, LOCK_FILE);
  switch (setup) {
    case "fresh":
      return;
    case "dead pid":
      return writeFileSync(path, record({ pid: deadPid() }));
    case "reused pid":
      // This (live) test process's pid, but a holder that started at another time.
      return writeFileSync(path, record({ pid: process.pid, startTime: "1" }));
    case "other boot":
      return writeFileSync(path, record({ pid: process.pid, bootId: "a-boot-before-this-one" }));
    case "stale marker": {
      // A stale lock, and a taker that died holding its takeover marker.
      const stale = record({ pid: deadPid() });
      writeFileSync(path, stale);
      writeFileSync(takeoverMarker(path, stale), record({ pid: deadPid() }));
      return;
    }
    case "empty file":
      // What the old CLI lock left if it died between creating the file and writing the pid.
      return writeFileSync(path, "");
  }
}

describe("the data directory lock under racing processes", () => {
  const racers: Racer[] = [];
  const RACERS = 12;

  beforeAll(async () => {
    expect(existsSync(join(DIST, "storage/lock.js")), "dist/ is missing: run `npm run build` before the tests").toBe(
      true,
    );
    for (let i = 0; i < RACERS; i++) racers.push(startRacer());
    for (const r of racers) expect(await r.next()).toBe("ready");
  }, 30_000);
  afterAll(() => {
    for (const r of racers) r.proc.stdin.end("exit\n");
  });

  it("has exactly one winner in every round: fresh directories and every kind of stale lock", async () => {
    const setups: Setup[] = [
      "fresh",
      "dead pid",
      "fresh",
      "reused pid",
      "fresh",
      "other boot",
      "fresh",
      "stale marker",
    ];
    for (let round = 0; round < 32; round++) {
      const setup = setups[round % setups.length]!;
      const dir = freshDir();
      prepare(dir, setup);
      const at = Date.now() + 40;
      for (const r of racers) r.proc.stdin.write(`go ${dir} ${at}\n`);
      const answers = await Promise.all(racers.map((r) => r.next()));
      const winners = answers.filter((a) => a.startsWith("won "));
      expect(winners, `round ${round} (${setup}): ${answers.join(" | ")}`).toHaveLength(1);
      for (const a of answers)
        if (!a.startsWith("won "))
          expect(a, `round ${round} (${setup})`).toMatch(
            /^lost DataDirectoryLockedError .* is in use by racer \(pid \d+/,
          );
      // The lock now holds the winner's record, and no temporary file or marker is left.
      expect(parseHolder(readFileSync(join(dir, LOCK_FILE), "utf8"))?.pid).toBe(Number(winners[0]!.slice(4)));
      expect(readdirSync(dir).filter((f) => f.startsWith(LOCK_FILE))).toEqual([LOCK_FILE]);
    }
  }, 60_000);

  it("never takes over a lock file without a complete record: all refuse and say what to do", async () => {
    for (let round = 0; round < 3; round++) {
      const dir = freshDir();
      prepare(dir, "empty file");
      const at = Date.now() + 40;
      for (const r of racers) r.proc.stdin.write(`go ${dir} ${at}\n`);
      const answers = await Promise.all(racers.map((r) => r.next()));
      for (const a of answers)
        expect(a).toMatch(
          /^lost DataDirectoryLockedError .*holds no complete holder record.*delete .*parley\.lock and try again/,
        );
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe("");
    }
  }, 30_000);
});

/** A child holding `dir` open through the engine, as `parley serve` would. */
async function holdInChild(dir: string, closeAtExit: boolean): Promise<ChildProcessWithoutNullStreams> {
  const script = `
const { openStore } = await import(process.env.ENGINE_URL);
const store = openStore(process.env.DIR, { holder: "parley serve", noSync: true });
process.stdout.write("ready\\n");
process.stdin.on("data", () => { if (process.env.CLOSE === "1") store.close(); process.exit(0); });
`;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, ENGINE_URL, DIR: dir, CLOSE: closeAtExit ? "1" : "0" },
  });
  let stderr = "";
  proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const first = await new Promise<string>((resolve) =>
    createInterface({ input: proc.stdout })
      .once("line", resolve)
      .once("close", () => resolve(`closed: ${stderr}`)),
  );
  expect(first).toBe("ready");
  return proc;
}

function exited(proc: ChildProcessWithoutNullStreams): Promise<void> {
  return new Promise((resolve) =>
    proc.exitCode !== null || proc.signalCode !== null ? resolve() : proc.once("exit", () => resolve()),
  );
}

function refusal(dir: string): DataDirectoryLockedError {
  try {
    openStore(dir, { noSync: true }).close();
  } catch (error) {
    expect(error).toBeInstanceOf(DataDirectoryLockedError);
    return error as DataDirectoryLockedError;
  }
  throw new Error(`${dir} opened although it should be locked`);
}

describe("openStore takes the lock", () => {
  it("refuses a second store in this process until the first is closed", () => {
    const dir = freshDir();
    const first = openStore(dir, { noSync: true, holder: "embedder" });
    const error = refusal(dir);
    expect(error.code).toBe("DATA_DIRECTORY_LOCKED");
    expect(error.message).toContain(`${dir} is already open in this process (by embedder (pid ${process.pid}`);
    expect(error.message).toContain("close that store first");
    first.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    openStore(dir, { noSync: true }).close();
  });

  it("refuses while another live process holds it, naming it; takes over once that process is killed -9", async () => {
    const dir = freshDir();
    const child = await holdInChild(dir, true);
    try {
      const error = refusal(dir);
      expect(error.message).toMatch(
        new RegExp(
          `is in use by parley serve \\(pid ${child.pid}, since \\d{4}-.*\\): stop it first, or use another data directory`,
        ),
      );
      expect(error.data).toMatchObject({ pid: child.pid, command: "parley serve" });
    } finally {
      child.kill("SIGKILL");
      await exited(child);
    }
    // The killed holder's record is still there; the next opener takes it over.
    expect(parseHolder(readFileSync(join(dir, LOCK_FILE), "utf8"))?.pid).toBe(child.pid);
    const store = openStore(dir, { noSync: true });
    expect(parseHolder(readFileSync(join(dir, LOCK_FILE), "utf8"))?.pid).toBe(process.pid);
    store.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it("is released when the holder closes its store, and when it exits without closing", async () => {
    for (const closeAtExit of [true, false]) {
      const dir = freshDir();
      const child = await holdInChild(dir, closeAtExit);
      child.stdin.end("bye\n");
      await exited(child);
      expect(child.exitCode).toBe(0);
      expect(existsSync(join(dir, LOCK_FILE)), `close at exit: ${closeAtExit}`).toBe(false);
    }
  });

  it("takes a record from another host as alive (its pid cannot be checked here)", () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), record({ pid: deadPid(), host: "elsewhere.example" }));
    expect(refusal(dir).message).toContain("on host elsewhere.example");
  });

  it("leaves a half-written lock file alone until the operator deletes it", () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), '{"pid":');
    expect(refusal(dir).message).toContain(`delete ${join(dir, LOCK_FILE)} and try again`);
    rmSync(join(dir, LOCK_FILE));
    const lock = lockDataDir(dir, { durable: false });
    lock.release();
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it("waits for a live process that is mid-takeover, and reports it if it never finishes", () => {
    const dir = freshDir();
    const stale = record({ pid: deadPid() });
    writeFileSync(join(dir, LOCK_FILE), stale);
    // A live taker (this process's pid, so alive) holds the stale record's marker.
    const taker = record({ pid: process.pid, command: "parley start" });
    writeFileSync(takeoverMarker(join(dir, LOCK_FILE), stale), taker);
    expect(() => lockDataDir(dir, { durable: false, waitMs: 100 })).toThrow(
      /is being taken over by parley start .* which did not finish within 100 ms: try again/,
    );
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(stale);
    // Once the taker is gone (its marker with it), the stale lock is taken over.
    rmSync(takeoverMarker(join(dir, LOCK_FILE), stale));
    lockDataDir(dir, { durable: false }).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("release leaves alone a lock that is no longer ours", () => {
    const dir = freshDir();
    const lock = lockDataDir(dir, { durable: false });
    const someoneElse = record({ pid: process.pid });
    writeFileSync(join(dir, LOCK_FILE), someoneElse);
    lock.release();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(someoneElse);
  });
});
