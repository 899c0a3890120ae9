/**
 * `parley serve`'s write warm-up (engine/warm-up-writes): it runs its moves on a scratch
 * store of its own, removes it, and leaves the real store exactly as it was. Its
 * temporary directory is looked for in a TMPDIR of this test's own.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { warmUpWrites, type MessageRenderer } from "../../src/engine/index.js";
import { MOVE_STAGING } from "../../src/engine/actions/move-staging.js";
import { WARM_UP_MENTION_EDITS } from "../../src/engine/warm-up-writes.js";
import { internals } from "../../src/engine/internal.js";
import { renderMarkdown } from "../../src/markdown/index.js";
import { fingerprint } from "../support/snapshot.js";
import { CLI, sleep, stopProcess } from "../support/serve-process.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

const STAGING = { ...MOVE_STAGING };
const TMPDIR = process.env["TMPDIR"];
let scratchParent: string;
let t: TempStore | undefined;

beforeEach(() => {
  // Small moves staged in several turns, as the default warm-up's 600-message moves are.
  Object.assign(MOVE_STAGING, { minMessages: 4, chunkMessages: 5 });
  scratchParent = mkdtempSync(join(tmpdir(), "parley-warm-up-test-"));
});
afterEach(() => {
  Object.assign(MOVE_STAGING, STAGING);
  rmSync(scratchParent, { recursive: true, force: true });
  t?.cleanup();
  t = undefined;
});

/** A small warm-up, its temporary directory made in `scratchParent`. */
async function warmUp(renderer: MessageRenderer) {
  process.env["TMPDIR"] = scratchParent;
  try {
    return await warmUpWrites({ renderer, rounds: 2, users: 6, topicMessages: 12, emailChunkUsers: 2 });
  } finally {
    if (TMPDIR === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = TMPDIR;
  }
}

/** A real store with a realm and some messages, and what a reader can tell of it. */
function realStore() {
  t = tempStore();
  const r = seedRealm(t.store);
  for (let i = 0; i < 5; i++)
    t.store.sendMessage({
      senderId: r.alice.id,
      to: { type: "channel", channel: r.general.id, topic: "t" },
      content: "x",
    });
  const store = t.store;
  const state = internals(store);
  const seen = () => ({
    fingerprint: fingerprint(store),
    messages: store.countMessages(),
    lastMessageId: store.lastMessageId,
    changeLogEnd: [...state.tables.changeLog.getKeys({ reverse: true, limit: 1 })],
    realms: store.listRealms().map((realm) => realm.id),
  });
  return { store, seen };
}

describe("warmUpWrites", () => {
  it("moves, edits, resolves, deletes and sends wide mentions on a scratch store, then removes it, changing nothing real", async () => {
    const { store, seen } = realStore();
    const before = seen();
    const changes: unknown[] = [];
    const stop = internals(store).onChanges((change) => changes.push(change));
    const rendered: string[] = [];
    const renderer: MessageRenderer = (content, context) => {
      rendered.push(content);
      return renderMarkdown(content, context);
    };
    const result = await warmUp(renderer);
    stop();
    expect(result.error).toBeNull();
    expect(result.rounds).toBe(2);
    // It did send, edit and move (Notification Bot's notices of the channel moves and the resolve).
    expect(rendered.some((content) => content.startsWith("Edited 1"))).toBe(true);
    // And edited fresh messages, one mention replaced by another, as often as it says.
    const mentionEdits = rendered.filter((content) => /^Edit \d+ for @\*\*[^*]+\*\* about the plan\.$/.test(content));
    expect(mentionEdits).toHaveLength(2 * WARM_UP_MENTION_EDITS);
    expect(rendered.some((content) => content.includes("This topic was moved"))).toBe(true);
    expect(rendered.some((content) => content.includes("has marked this topic as"))).toBe(true);
    // And sent the wide mentions each round, each leaving email chunks (5-6 candidates, 2 a chunk).
    for (const mention of ["@**all**", "@*warm-up everyone*", "@**topic**"])
      expect(rendered.filter((content) => content.startsWith(`${mention} round`))).toHaveLength(2);
    expect(result.chunkedSends).toBe(2 * 3);
    expect(readdirSync(scratchParent)).toEqual([]);
    expect(changes).toEqual([]);
    expect(seen()).toEqual(before);
    expect(store.verify().differences).toEqual([]);
  });

  it("a failure ends it, is reported, and leaves no directory", async () => {
    const { store, seen } = realStore();
    const before = seen();
    const renderer: MessageRenderer = (content, context) => {
      if (content.startsWith("Edited")) throw new Error("broken renderer");
      return renderMarkdown(content, context);
    };
    const result = await warmUp(renderer);
    expect(result.error).toBeInstanceOf(Error);
    expect(result.rounds).toBe(0);
    expect(readdirSync(scratchParent)).toEqual([]);
    expect(seen()).toEqual(before);
    expect(store.verify().differences).toEqual([]);
  });
});

describe("parley serve", () => {
  it("warms up the writes at start (the test suite's servers skip it), leaving no directory", async () => {
    const data = mkdtempSync(join(scratchParent, "data-"));
    const child = spawn(process.execPath, [CLI, "serve", "--data", data, "--port", "0", "--json", "--no-sync"], {
      env: { ...process.env, PARLEY_WRITE_WARM_UP_ROUNDS: "1", TMPDIR: join(scratchParent) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await new Promise<void>((listening, failed) => {
        child.once("exit", (code) => failed(new Error(`serve exited with ${code}: ${stderr}`)));
        child.stdout.once("data", () => listening());
      });
      // Logged before the port opened; its pipe may be read after stdout's.
      for (let waited = 0; !stderr.includes("warmed up") && waited < 5000; waited += 50) await sleep(50);
      expect(stderr).toMatch(/warmed up message writes: 1 rounds in \d+ ms/);
      expect(readdirSync(scratchParent)).toEqual([data.slice(scratchParent.length + 1)]);
    } finally {
      await stopProcess(child, "SIGTERM");
    }
  });
});
