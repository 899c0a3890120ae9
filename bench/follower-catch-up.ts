/**
 * @module bench/follower-catch-up
 * `node dist/bench/follower-catch-up.js --data DIR [--rounds 200]`: what a follower store
 * (src/engine/follower.ts) pays to catch up with its writer, per applied write, on a
 * private copy of a generated dataset (npm run bench generates them under bench/tmp).
 * The writer and the follower are opened in this process on the copy (one LMDB
 * environment; the follower reads through its own read transactions, as a worker would).
 *
 * Rows: the no-op check (nothing changed: one key read); then, for each kind of write,
 * the writer's time for the write and the follower's catchUp() applying it, and the
 * follower's first read after it (what it reloads lazily: the bitmaps the write named,
 * read again on demand) next to the writer's same read. Kinds: a send to a small
 * channel, a send to the channel of every user (10,000 at the 100k scale), a flag change,
 * a user's full-name change, and a move of a 2,000-message topic out of that channel.
 * Medians over --rounds rounds (the move: 5). Figures to stdout.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { openFollower, openStore } from "../src/index.js";
import type { Store } from "../src/engine/index.js";
import { readManifest } from "../tools/generate/manifest.js";

const { values } = parseArgs({ options: { data: { type: "string" }, rounds: { type: "string", default: "200" } } });
if (!values.data) throw new Error("usage: follower-catch-up --data DIR [--rounds 200] (a generated dataset)");
const ROUNDS = Number(values.rounds);
const manifest = readManifest(values.data);
const log = (line: string) => process.stdout.write(line + "\n");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const fmt = (ms: number) => (ms < 0.1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(3)} ms`);

function timed(fn: () => unknown): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

interface Row {
  write: number[];
  catchUp: number[];
  followerRead: number[];
  writerRead: number[];
}

const dir = mkdtempSync(join(tmpdir(), "parley-follower-bench-"));
try {
  for (const f of ["data.mdb", "dataset.json"]) cpSync(join(values.data, f), join(dir, f));
  const writer = openStore(dir, { noSync: true });
  const follower = openFollower(dir, { noSync: true, lockToken: writer.lockToken });
  const main = manifest.subjects.main;
  const sender = manifest.subjects.sender;
  const all = manifest.generalChannelId;
  const small = manifest.channelIds.find((id) => id !== all)!;
  const home = { narrow: [], anchor: "newest" as const, numBefore: 50, numAfter: 0 };
  const read = (store: Store) => {
    store.getMessages(main, home);
    store.unreadSummary(main);
  };
  read(writer);
  read(follower);

  const noop: number[] = [];
  for (let i = 0; i < 20_000; i++) noop.push(timed(() => follower.catchUp()));
  log(`no-op catchUp (nothing changed): median ${fmt(median(noop))} over ${noop.length}`);

  const rows = new Map<string, Row>();
  const measure = (name: string, write: () => unknown) => {
    const row = rows.get(name) ?? { write: [], catchUp: [], followerRead: [], writerRead: [] };
    rows.set(name, row);
    row.write.push(timed(write));
    let applied = 0;
    row.catchUp.push(timed(() => (applied = follower.catchUp().applied)));
    if (applied < 1) throw new Error(`${name}: the follower applied nothing`);
    row.followerRead.push(timed(() => read(follower)));
    row.writerRead.push(timed(() => read(writer)));
  };
  let last = 0;
  for (let i = 0; i < ROUNDS; i++) {
    measure("send to a small channel", () => {
      last = writer.sendMessage({
        senderId: sender,
        to: { type: "channel", channel: small, topic: "follower bench" },
        content: `A ${manifest.commonWord} message ${i}.`,
      }).id;
    });
    measure(`send to the channel of all (${manifest.scale.users} users)`, () =>
      writer.sendMessage({
        senderId: sender,
        to: { type: "channel", channel: all, topic: "follower bench" },
        content: `Everyone: ${manifest.commonWord} ${i}.`,
      }),
    );
    measure("flag change (one message read)", () => writer.updateFlags(main, [last], "read", "add"));
    if (i % 10 === 0)
      measure("user's full name changed", () => writer.updateUser(manifest.ownerId, main, { fullName: `Main ${i}` }));
  }
  for (let i = 0; i < 5; i++) {
    const topic = `big move ${i}`;
    const first = writer.batch(() => {
      let id = 0;
      for (let j = 0; j < 2000; j++) {
        const m = writer.sendMessage({
          senderId: sender,
          to: { type: "channel", channel: all, topic },
          content: `m${j}`,
        });
        if (j === 0) id = m.id;
      }
      return id;
    });
    follower.catchUp();
    read(follower);
    measure("move a 2,000-message topic out of the channel of all", () =>
      writer.updateMessage(manifest.ownerId, first, { channelId: small, propagateMode: "change_all" }),
    );
  }
  log(`rows: median of write (writer) | catchUp (follower) | next read: follower vs writer`);
  for (const [name, row] of rows)
    log(
      `${name}: ${fmt(median(row.write))} | ${fmt(median(row.catchUp))} | ${fmt(median(row.followerRead))} vs ${fmt(median(row.writerRead))} (${row.write.length} rounds)`,
    );
  follower.close();
  writer.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
