/**
 * Grouping in a cluster (docs/cluster.md §2, §4): a follower applies the log messages it
 * reads together in one LMDB transaction (one fsync), not one each, and ends up holding
 * what the leader holds; writes sent to the leader concurrently are acknowledged, each
 * once, and replicated in order.
 */
import { afterAll, describe, expect, it } from "vitest";
import { stopProcess } from "../support/serve-process.js";
import { startNats, type NatsServer } from "../support/nats.js";
import { api, ClusterFixture, messagesOn, verify, type ClusterNodeProcess } from "../support/cluster-nodes.js";

const SEQUENTIAL_SENDS = 30;
const fixture = new ClusterFixture();
let nats: NatsServer | null = null;
afterAll(async () => {
  fixture.cleanUp();
  await nats?.stop();
});

/** A gauge of the node's /metrics. */
async function gauge(node: ClusterNodeProcess, name: string): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`${node.name}'s /metrics has no ${name}`);
  return Number(line.slice(name.length + 1));
}

function send(node: ClusterNodeProcess, auth: string, content: string): Promise<{ status: number }> {
  return api(node, auth, "POST", "/messages", { type: "stream", to: "general", topic: "g", content });
}

describe("parley serve --cluster, grouping", () => {
  it("a follower catching up applies many log messages per LMDB transaction", async () => {
    nats = await startNats();
    const seed = fixture.seed();
    const n1 = await fixture.start("n1", fixture.nodeDir("n1", seed.dir), nats.url);
    const leader = await fixture.leaderOf([n1]);
    const before = await fixture.allCaughtUp([n1]);
    // One at a time: each answered only once stored, so each is a log message of its own.
    for (let i = 0; i < SEQUENTIAL_SENDS; i++) expect((await send(leader, seed.auth, `s${i}`)).status).toBe(200);
    const written = await fixture.allCaughtUp([n1]);
    expect(written - before).toBeGreaterThanOrEqual(SEQUENTIAL_SENDS);

    // A node joining now reads them all at once from the stream.
    const n2 = await fixture.start("n2", fixture.nodeDir("n2", seed.dir), nats.url);
    const nodes = [n1, n2];
    expect(await fixture.allCaughtUp(nodes)).toBe(written);
    const commits = await gauge(n2, "parley_cluster_apply_commits");
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(written / 2);

    // Concurrent sends to the leader and through the follower: each acknowledged, every node alike.
    const concurrent = await Promise.all(Array.from({ length: 12 }, (_, i) => send(nodes[i % 2]!, seed.auth, `c${i}`)));
    expect(concurrent.map((r) => r.status)).toEqual(concurrent.map(() => 200));
    await fixture.allCaughtUp(nodes);
    const [onLeader, onFollower] = await Promise.all(nodes.map((n) => messagesOn(n, seed.auth)));
    expect(onFollower).toEqual(onLeader);
    const contents = onLeader!.map((m) => m.content);
    for (let i = 0; i < SEQUENTIAL_SENDS; i++) expect(contents.filter((c) => c === `s${i}`)).toHaveLength(1);
    for (let i = 0; i < 12; i++) expect(contents.filter((c) => c === `c${i}`)).toHaveLength(1);

    for (const node of nodes) await stopProcess(node.child, "SIGTERM");
    for (const node of nodes) {
      const checked = verify(node.dir);
      expect(checked.status, `${node.name}: ${checked.output}`).toBe(0);
    }
  }, 120_000);
});
