/**
 * A write whose log entry exceeds the NATS server's max_payload (docs/cluster.md §7):
 * a topic move of 600 messages (staged before its one write, engine actions/move-staging;
 * change_later from the oldest, which rewrites every record: a change_all rename within the
 * channel goes by reference, actions/topic-registry, and its entry is small)
 * against a server whose max_payload is 16 KiB
 * (1 MiB by default: the same write at a few thousand messages). The leader stores the
 * entry's bytes in parts and appends one small entry naming them; the write is
 * acknowledged, every node applies it whole, and the leader keeps leading.
 */
import { connect } from "nats";
import { afterAll, describe, expect, it } from "vitest";
import { PARTS_STREAM } from "../../src/cluster/log.js";
import { stopProcess } from "../support/serve-process.js";
import { startNats, type NatsServer } from "../support/nats.js";
import { api, ClusterFixture, health, messagesOn, verify } from "../support/cluster-nodes.js";

const MESSAGES = 600;
const fixture = new ClusterFixture();
let nats: NatsServer | null = null;
afterAll(async () => {
  fixture.cleanUp();
  await nats?.stop();
});

/** How many parts of large entries the NATS server holds. */
async function storedParts(url: string): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    return (await (await nc.jetstreamManager()).streams.info(PARTS_STREAM)).state.messages;
  } finally {
    await nc.close();
  }
}

describe("parley serve --cluster, a log entry over max_payload", () => {
  it("replicates a topic move larger than one NATS message", async () => {
    nats = await startNats({ maxPayload: 16 * 1024 });
    const seed = fixture.seed((store, ownerId) => {
      for (let i = 0; i < MESSAGES; i++)
        store.sendMessage({
          senderId: ownerId,
          to: { type: "channel", channel: "general", topic: "big" },
          content: `message ${i} of a topic that moves as one write: ${"lorem ipsum ".repeat(8)}`,
        });
    });
    const n1 = await fixture.start("n1", fixture.nodeDir("n1", seed.dir), nats.url);
    const leader = await fixture.leaderOf([n1]);
    const n2 = await fixture.start("n2", fixture.nodeDir("n2", seed.dir), nats.url);
    const nodes = [n1, n2];
    const before = await fixture.allCaughtUp(nodes);

    // Through the follower, which forwards it to the leader. The oldest first (GET /messages lists oldest first).
    const first = (await messagesOn(n2, seed.auth)).find((m) => m.subject === "big")!;
    const moved = await api(n2, seed.auth, "PATCH", `/messages/${first.id}`, {
      topic: "moved",
      propagate_mode: "change_later",
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);

    const after = await fixture.allCaughtUp(nodes);
    expect(after).toBeGreaterThan(before);
    expect((await health(leader))?.role).toBe("leader");
    const answers = await Promise.all(nodes.map((n) => messagesOn(n, seed.auth)));
    expect(answers[1]).toEqual(answers[0]);
    // The move's notification joins the moved messages.
    expect(answers[0]!.filter((m) => m.subject === "moved").length).toBeGreaterThanOrEqual(MESSAGES);
    expect(answers[0]!.filter((m) => m.subject === "big")).toEqual([]);
    expect(await storedParts(nats.url)).toBeGreaterThan(1);

    // A small write after it is appended in turn.
    const sent = await api(n2, seed.auth, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "after",
      content: "after the move",
    });
    expect(sent.status).toBe(200);
    await fixture.allCaughtUp(nodes);

    // A resolve of the whole topic goes by reference (topic registry rows, no record rewritten): a small entry that
    // every node must apply to the same names and edit history (a follower's cached row is forgotten when it applies).
    const parts = await storedParts(nats.url);
    const resolved = await api(n2, seed.auth, "PATCH", `/messages/${first.id}`, {
      topic: "✔ moved",
      propagate_mode: "change_all",
    });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    await fixture.allCaughtUp(nodes);
    expect(await storedParts(nats.url)).toBe(parts);
    const afterResolve = await Promise.all(nodes.map((n) => messagesOn(n, seed.auth)));
    expect(afterResolve[1]).toEqual(afterResolve[0]);
    expect(afterResolve[0]!.filter((m) => m.subject === "✔ moved").length).toBeGreaterThanOrEqual(MESSAGES);
    expect(afterResolve[0]!.filter((m) => m.subject === "moved")).toEqual([]);
    const histories = await Promise.all(nodes.map((n) => api(n, seed.auth, "GET", `/messages/${first.id}/history`)));
    expect(histories[1]!.body).toEqual(histories[0]!.body);
    expect(JSON.stringify(histories[0]!.body)).toContain("✔ moved");

    for (const node of nodes) await stopProcess(node.child, "SIGTERM");
    for (const node of nodes) {
      const checked = verify(node.dir);
      expect(checked.status, `${node.name}: ${checked.output}`).toBe(0);
    }
  }, 120_000);
});
