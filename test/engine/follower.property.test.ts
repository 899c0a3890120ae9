/**
 * Property: a follower store that catches up after each write answers and holds what a
 * follower freshly opened on the same directory does. Random action scripts are the
 * events oracle's (test/realtime/oracle-actions.ts: sends, flags, edits, moves,
 * deletions, subscriptions, users, bots, groups, settings, drafts, devices, emoji,
 * linkifiers, folders... through HTTP where parley has the endpoint), run against a
 * writer behind an in-process server; the follower is opened on its directory.
 *
 * After each action, the answers of every observer (narrow windows, first_unread,
 * unread counts, users, subscriptions, channels, groups, topic policies, settings...)
 * are compared, and with the writer's (but presence, which the writer holds ahead of
 * disk); at the end of each script (and every CHECK_MEMORY_EVERY actions), also
 * everything held in memory (test/support/follower-view.ts), which loads every bitmap
 * into the follower's cache: later actions must drop what they change from it.
 *
 * Seeded: PARLEY_FOLLOWER_SEED=<n> replays a run; PARLEY_FOLLOWER_SEED=random explores.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import { openFollower } from "../../src/index.js";
import type { Store } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";
import { answers, followerView } from "../support/follower-view.js";
import { actionArb, USERS, World, type Action } from "../realtime/oracle-actions.js";

const RUNS = Number(process.env["PARLEY_FOLLOWER_RUNS"] ?? 4);
const SEED_ENV = process.env["PARLEY_FOLLOWER_SEED"];
const SEED = SEED_ENV === undefined ? 20261128 : SEED_ENV === "random" ? Date.now() % 2 ** 31 : Number(SEED_ENV);
const CHECK_MEMORY_EVERY = 8;

/** The first differing path of two JSON values, for a readable failure. */
function firstDifference(a: unknown, b: unknown, path = "$"): string | null {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: follower ${JSON.stringify(a)?.slice(0, 400)}, fresh ${JSON.stringify(b)?.slice(0, 400)}`;
}

/**
 * Answers to compare with the writer's: without presence, and topic policies as a set (the
 * writer lists a user's policies in the order its cache got them, a fresh read in key order).
 */
function comparableWithWriter(store: Store, viewers: readonly number[]): unknown {
  const bySortedJson = (list: unknown[]) => list.map((x) => JSON.stringify(x)).sort();
  return JSON.parse(
    JSON.stringify(answers(store, viewers), (k: string, v: unknown) =>
      k === "presence" ? 0 : k === "topics" && Array.isArray(v) ? bySortedJson(v) : v,
    ),
  );
}

async function runScript(actions: readonly Action[]): Promise<string | null> {
  let server: TestServer | null = null;
  let follower: Store | null = null;
  try {
    server = await startServer({
      config: {
        ...DEFAULT_CONFIG,
        PUSH_NOTIFICATION_BOUNCER_URL: "http://127.0.0.1:9",
        ZULIP_ORG_ID: "follower",
        ZULIP_ORG_KEY: "follower",
      },
    });
    const world = new World(server);
    const { dir, store: writer } = server.t;
    follower = openFollower(dir, { noSync: true, lockToken: writer.lockToken });
    const viewers = USERS.map((name) => world.user(name).id);
    for (const [i, action] of actions.entries()) {
      await world.perform(action);
      follower.catchUp();
      const fresh = openFollower(dir, { noSync: true, lockToken: writer.lockToken });
      try {
        const memory = (i + 1) % CHECK_MEMORY_EVERY === 0 || i === actions.length - 1;
        const diff = memory
          ? firstDifference(followerView(follower, viewers), followerView(fresh, viewers))
          : firstDifference(answers(follower, viewers), answers(fresh, viewers));
        // And as the writer answers (presence aside: the writer's pings are ahead of disk until flushed).
        const writerDiff =
          diff ?? firstDifference(comparableWithWriter(follower, viewers), comparableWithWriter(writer, viewers));
        if (writerDiff)
          return `after action ${i} (${JSON.stringify(action)}): ${writerDiff}\noutcomes: ${world.outcomes.join(" | ")}`;
      } finally {
        fresh.close();
      }
    }
    return null;
  } finally {
    follower?.close();
    server?.close();
  }
}

describe("follower store (property)", () => {
  it(`after each write, answers and holds what a freshly opened follower does (seed ${SEED})`, async () => {
    console.log(`follower property seed: ${SEED} (replay with PARLEY_FOLLOWER_SEED=${SEED})`);
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 10, maxLength: 24 }), async (actions) => {
        const failure = await runScript(actions);
        if (failure !== null) throw new Error(`seed ${SEED}: ${failure}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 120_000);
});
