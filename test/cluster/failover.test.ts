/**
 * `parley serve --cluster` as an operator runs it (docs/cluster.md): Debian's
 * nats-server with JetStream and three nodes on loopback, created from one data
 * directory copied into the others. Writers send through every node at once (a
 * follower forwards to the leader); the leader is killed with SIGKILL mid-burst, twice,
 * and restarted (it rejoins as a follower, undoing what never reached the log). Then
 * every acknowledged message is on every node, every node answers GET /messages
 * alike, `parley verify` is clean on each; a follower's event queue sees each message
 * event once; and with NATS gone a follower refuses writes and says why.
 */
import { afterAll, describe, expect, it } from "vitest";
import { sleep, stopProcess } from "../support/serve-process.js";
import { startNats, type NatsServer } from "../support/nats.js";
import {
  api,
  ClusterFixture,
  health,
  messagesOn,
  verify,
  type ClusterNodeProcess as Node,
} from "../support/cluster-nodes.js";

const fixture = new ClusterFixture();
let nats: NatsServer | null = null;
afterAll(async () => {
  fixture.cleanUp();
  await nats?.stop();
});

/** One send; true only when the server acknowledged it. */
async function send(node: Node, auth: string, content: string): Promise<boolean> {
  try {
    const res = await api(node, auth, "POST", "/messages", { type: "stream", to: "general", topic: "burst", content });
    return res.status === 200 && res.body["result"] === "success";
  } catch {
    return false;
  }
}

describe("parley serve --cluster", () => {
  it("loses no acknowledged write when the leader is killed mid-burst, and every node ends up alike", async () => {
    nats = await startNats();
    const seed = fixture.seed();
    const nodes: Node[] = [];
    for (const name of ["n1", "n2", "n3"])
      nodes.push(await fixture.start(name, fixture.nodeDir(name, seed.dir), nats.url));
    await fixture.leaderOf(nodes);

    const acked: string[] = [];
    let writing = true;
    const writers = [0, 1, 2].map(async (w) => {
      for (let i = 0; writing; i++) {
        const content = `w${w}-${i}`;
        if (await send(nodes[w]!, seed.auth, content)) acked.push(content);
        else await sleep(50);
      }
    });

    for (let kill = 0; kill < 2; kill++) {
      const leader = await fixture.leaderOf(nodes);
      const before = acked.length;
      await fixture.waitFor("writes under way", async () => (acked.length >= before + 20 ? true : null));
      await stopProcess(leader.child, "SIGKILL");
      const others = nodes.filter((n) => n !== leader);
      const next = await fixture.leaderOf(others);
      expect(next).not.toBe(leader);
      // The killed leader comes back on its directory and rejoins as a follower.
      const restarted = await fixture.start(leader.name, leader.dir, nats.url);
      leader.child = restarted.child;
      leader.url = restarted.url;
      const afterKill = acked.length;
      await fixture.waitFor("writes on the new leader", async () => (acked.length >= afterKill + 20 ? true : null));
    }
    writing = false;
    await Promise.all(writers);
    expect(acked.length).toBeGreaterThan(80);

    // Every node serving, and at the same place in the log.
    await fixture.allCaughtUp(nodes);
    const answers = await Promise.all(nodes.map((n) => messagesOn(n, seed.auth)));
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    const contents = new Set(answers[0]!.map((m) => m.content));
    const lost = acked.filter((c) => !contents.has(c));
    expect(lost).toEqual([]);

    // A follower's event queue sees each message event once, sent through any node.
    const leader = await fixture.leaderOf(nodes);
    const follower = nodes.find((n) => n !== leader)!;
    const other = nodes.find((n) => n !== leader && n !== follower)!;
    const queue = await api(follower, seed.auth, "POST", "/register", { event_types: '["message"]' });
    expect(queue.status).toBe(200);
    const sent = ["e0", "e1", "e2", "e3", "e4", "e5"];
    for (const [i, content] of sent.entries())
      expect(await send([leader, other, follower][i % 3]!, seed.auth, content)).toBe(true);
    const seen: string[] = [];
    let lastEventId = queue.body["last_event_id"] as number;
    while (seen.length < sent.length) {
      const query = new URLSearchParams({
        queue_id: String(queue.body["queue_id"]),
        last_event_id: String(lastEventId),
      });
      const polled = await api(follower, seed.auth, "GET", `/events?${query}`);
      expect(polled.status).toBe(200);
      for (const event of polled.body["events"] as { id: number; type: string; message?: { content: string } }[]) {
        lastEventId = Math.max(lastEventId, event.id);
        if (event.type === "message") seen.push(event.message!.content.replace(/<\/?p>/g, ""));
      }
    }
    expect(seen).toEqual(sent);

    // Cut off from NATS, a follower keeps reading but refuses writes, saying why.
    await nats.stop();
    const cutOff = await fixture.waitFor("a follower noticing NATS is gone", async () => {
      const h = await health(follower);
      return h !== null && h.status === 503 ? h : null;
    });
    expect(cutOff.reason).toMatch(/NATS/);
    const refused = await api(follower, seed.auth, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "x",
    });
    expect(refused.status).toBe(503);
    expect(String(refused.body["msg"])).toMatch(/NATS/);
    expect((await messagesOn(follower, seed.auth)).length).toBe(answers[0]!.length + sent.length);

    for (const node of nodes) await stopProcess(node.child, "SIGTERM");
    for (const node of nodes) {
      const checked = verify(node.dir);
      expect(checked.status, `${node.name}: ${checked.output}`).toBe(0);
    }
  }, 180_000);
});
