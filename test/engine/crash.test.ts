/**
 * Crash durability: a child Node process (running the compiled engine from dist/, so
 * `npm run build` must have run) writes with default durability and prints one line
 * per acknowledged write; the parent SIGKILLs it mid-burst, reopens the store and
 * checks that every acknowledged write survived and that the indexes verify clean.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type Message, type Store, type User } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";

// The package entry (the engine with Markdown), as an embedder opens it.
const ENGINE = fileURLToPath(new URL("../../dist/src/index.js", import.meta.url));

/** Shared by both child modes: open the store, create or find the realm. */
const CHILD_PRELUDE = `
const { openStore } = await import(process.env.ENGINE_URL);
const store = openStore(process.env.CRASH_DIR);
const round = Number(process.env.ROUND);
let realm = store.findRealmBySubdomain("");
let owner, reader;
if (!realm) {
  const created = store.createRealm({ subdomain: "", name: "Crash", owner: { email: "owner@crash.dev", fullName: "Owner" } });
  realm = created.realm;
  owner = created.owner;
  reader = store.createUser({ realmId: realm.id, email: "reader@crash.dev", fullName: "Reader" });
  store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [owner.id, reader.id] });
} else {
  owner = store.findUserByEmail(realm.id, "owner@crash.dev");
  reader = store.findUserByEmail(realm.id, "reader@crash.dev");
}
const out = (line) => process.stdout.write(line + "\\n");
out("ready");
`;

/** One action per acknowledged write: channel sends, DMs, and monotonic flag additions. */
const SINGLE_CHILD = `${CHILD_PRELUDE}
for (let i = 1; i < 200000; i++) {
  const content = "r" + round + "-m" + i;
  const { id } = store.sendMessage({ senderId: owner.id, to: { type: "channel", channel: "general", topic: "round " + round }, content });
  out("ack send " + id + " " + content);
  if (i % 3 === 0) { store.updateFlags(reader.id, [id], "starred", "add"); out("ack flag " + id + " starred"); }
  if (i % 5 === 0) { store.updateFlags(reader.id, [id], "read", "add"); out("ack flag " + id + " read"); }
  if (i % 4 === 0) {
    const dm = "r" + round + "-d" + i;
    const sent = store.sendMessage({ senderId: reader.id, to: { type: "direct", users: [owner.id] }, content: dm });
    out("ack send " + sent.id + " " + dm);
    store.updateFlags(owner.id, [sent.id], "collapsed", "add");
    out("ack flag " + sent.id + " collapsed");
  }
}
`;

/** Batches of sends + stars; every 9th batch throws on purpose after writing. */
const BATCH_CHILD = `${CHILD_PRELUDE}
for (let b = 1; b < 100000; b++) {
  const size = 1 + ((b * 7) % 13);
  try {
    const ids = store.batch(() => {
      const ids = [];
      for (let j = 0; j < size; j++) {
        const { id } = store.sendMessage({ senderId: owner.id, to: { type: "channel", channel: "general", topic: "batch" }, content: "b" + round + "." + b + "." + j + "/" + size });
        store.updateFlags(reader.id, [id], "starred", "add");
        ids.push(id);
      }
      if (b % 9 === 0) throw new Error("planned");
      return ids;
    });
    out("ack batch " + b + " " + ids.join(","));
  } catch (error) {
    if (error.message !== "planned") throw error;
    out("fail batch " + b);
  }
}
`;

/** Concurrent senders through the group commit: each prints its ack when its promise settles. */
const GROUPED_CHILD = `${CHILD_PRELUDE}
let sent = 0;
async function sender(k) {
  for (let i = 1; i < 200000; i++) {
    const dm = i % 4 === 0;
    const content = "r" + round + "-" + (dm ? "d" : "m") + (k * 1000000 + i);
    const to = dm ? { type: "direct", users: [owner.id] } : { type: "channel", channel: "general", topic: "sender " + k };
    const { id } = await store.sendMessageGrouped({ senderId: dm ? reader.id : owner.id, to, content });
    out("ack send " + id + " " + content);
  }
}
await Promise.all(Array.from({ length: 16 }, (_, k) => sender(k)));
`;

interface ChildRun {
  readonly lines: string[];
  readonly signal: NodeJS.Signals | null;
  readonly code: number | null;
}

/** Runs a child, SIGKILLs it once `acks` lines starting with "ack " have been read. */
function runChild(script: string, dir: string, round: number, acks: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, ENGINE_URL: pathToFileURL(ENGINE).href, CRASH_DIR: dir, ROUND: String(round) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines: string[] = [];
    let stderr = "";
    let seen = 0;
    let killed = false;
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const rl = createInterface({ input: child.stdout });
    rl.on("line", (line) => {
      if (killed) return;
      lines.push(line);
      if (line.startsWith("ack ") && ++seen >= acks) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`child timed out after ${seen} acks; stderr: ${stderr}`));
    }, 40_000);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (signal !== "SIGKILL" || !killed)
        reject(
          new Error(`child ended on its own (code ${code}, signal ${signal}) after ${seen} acks; stderr: ${stderr}`),
        );
      else resolve({ lines, signal, code });
    });
  });
}

function users(store: Store): { owner: User; reader: User } {
  const realm = store.findRealmBySubdomain("")!;
  return {
    owner: store.findUserByEmail(realm.id, "owner@crash.dev")!,
    reader: store.findUserByEmail(realm.id, "reader@crash.dev")!,
  };
}

/** Every stored message, by ID, and a check that IDs are contiguous up to the counter. */
function allMessages(store: Store): Map<number, Message> {
  const out = new Map<number, Message>();
  for (const { key, value } of internals(store).tables.messages.getRange({ start: 1 })) out.set(key, value as Message);
  const last = internals(store).lastMessageId;
  expect([...out.keys()]).toEqual(Array.from({ length: last }, (_, i) => i + 1));
  return out;
}

function expectClean(store: Store): void {
  const report = store.verify();
  expect(report.differences).toEqual([]);
  expect(report.problems).toEqual([]);
}

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-crash-"));
  dirs.push(dir);
  return dir;
}

describe("crash durability (SIGKILL mid-burst, default durability)", () => {
  it("needs the compiled engine", () => {
    expect(existsSync(ENGINE), `${ENGINE} is missing: run \`npm run build\` before the tests`).toBe(true);
  });

  it("every acknowledged send and flag change survives, across three kill/reopen rounds", async () => {
    const dir = freshDir();
    const ackedSends = new Map<number, string>();
    const ackedFlags: [number, string][] = [];
    for (const [round, acks] of [
      [1, 300],
      [2, 400],
      [3, 500],
    ] as const) {
      const run = await runChild(SINGLE_CHILD, dir, round, acks);
      expect(run.lines[0]).toBe("ready");
      for (const line of run.lines) {
        const [tag, kind, id, rest] = line.split(" ");
        if (tag !== "ack") continue;
        if (kind === "send") ackedSends.set(Number(id), rest!);
        else ackedFlags.push([Number(id), rest!]);
      }
      const store = openStore(dir);
      try {
        const { owner, reader } = users(store);
        const messages = allMessages(store);
        // Everything acknowledged, this round and before, is there with its content.
        for (const [id, content] of ackedSends) {
          expect(messages.get(id)?.content, `message ${id}`).toBe(content);
          expect(store.getMessage(owner.id, id).message.content).toBe(content);
        }
        for (const [id, flag] of ackedFlags) {
          const who = flag === "collapsed" ? owner : reader;
          expect(store.getMessage(who.id, id).flags, `flag ${flag} on ${id}`).toContain(flag);
        }
        // Writes committed after the last ack the parent read are whole too.
        for (const m of messages.values()) expect(m.content).toMatch(/^r[1-3]-[md]\d+$/);
        expect(messages.size).toBeGreaterThanOrEqual(ackedSends.size);
        expectClean(store);
        // The store is usable after the crash.
        const channelMessages = store.getMessages(owner.id, {
          anchor: "newest",
          numBefore: 5000,
          numAfter: 0,
          narrow: [["stream", "general"]],
        });
        expect(channelMessages.messages.length).toBe(
          [...messages.values()].filter((m) => m.recipient.type === "channel").length,
        );
      } finally {
        store.close();
      }
    }
    expect(ackedSends.size).toBeGreaterThan(600);
  });

  it("concurrent senders through the group commit: every acknowledged send survives", async () => {
    const dir = freshDir();
    const ackedSends = new Map<number, string>();
    for (const [round, acks] of [
      [1, 400],
      [2, 600],
    ] as const) {
      const run = await runChild(GROUPED_CHILD, dir, round, acks);
      expect(run.lines[0]).toBe("ready");
      for (const line of run.lines) {
        const [tag, kind, id, rest] = line.split(" ");
        if (tag === "ack" && kind === "send") ackedSends.set(Number(id), rest!);
      }
      const store = openStore(dir);
      try {
        const { owner } = users(store);
        const messages = allMessages(store);
        for (const [id, content] of ackedSends) {
          expect(messages.get(id)?.content, `message ${id}`).toBe(content);
          expect(store.getMessage(owner.id, id).message.content).toBe(content);
        }
        for (const m of messages.values()) expect(m.content).toMatch(/^r[12]-[md]\d+$/);
        expectClean(store);
      } finally {
        store.close();
      }
    }
    expect(ackedSends.size).toBe(1000);
  });

  it("batches are all or nothing, under SIGKILL and under exceptions", async () => {
    const dir = freshDir();
    const run = await runChild(BATCH_CHILD, dir, 1, 80);
    const acked = new Map<number, number[]>();
    const failed = new Set<number>();
    for (const line of run.lines) {
      const parts = line.split(" ");
      if (parts[0] === "ack" && parts[1] === "batch") acked.set(Number(parts[2]), parts[3]!.split(",").map(Number));
      if (parts[0] === "fail") failed.add(Number(parts[2]));
    }
    expect(acked.size).toBe(80);
    expect(failed.size).toBeGreaterThan(0);
    const store = openStore(dir);
    try {
      const { reader } = users(store);
      const byBatch = new Map<number, { ids: number[]; size: number }>();
      for (const m of allMessages(store).values()) {
        const match = /^b1\.(\d+)\.(\d+)\/(\d+)$/.exec(m.content);
        expect(match, m.content).not.toBeNull();
        const [b, j, size] = [Number(match![1]), Number(match![2]), Number(match![3])];
        const entry = byBatch.get(b) ?? { ids: [], size };
        expect(entry.ids.length).toBe(j);
        entry.ids.push(m.id);
        byBatch.set(b, entry);
        expect(store.getMessage(reader.id, m.id).flags).toContain("starred");
      }
      // Every batch on disk is complete; acknowledged ones are exactly as acknowledged.
      for (const [b, { ids, size }] of byBatch) {
        expect(ids.length, `batch ${b}`).toBe(size);
        expect(ids).toEqual(Array.from({ length: size }, (_, i) => ids[0]! + i));
      }
      for (const [b, ids] of acked) expect(byBatch.get(b)?.ids, `batch ${b}`).toEqual(ids);
      for (const b of failed) expect(byBatch.has(b), `failed batch ${b}`).toBe(false);
      // Batches present without an ack were committed after the last ack the parent read.
      const lastAcked = Math.max(...acked.keys());
      for (const b of byBatch.keys()) if (!acked.has(b)) expect(b).toBeGreaterThan(lastAcked);
      expectClean(store);
    } finally {
      store.close();
    }
  });
});
