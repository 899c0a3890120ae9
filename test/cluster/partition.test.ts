/**
 * Nodes cut off from NATS while nats-server keeps running (docs/cluster.md §5), each
 * node reaching it through its own TCP proxy that the test severs:
 * - the leader's connection is cut in the middle of storing a large entry's parts: the
 *   write is not acknowledged, the leader stops serving at once (503 saying why, in
 *   /health too), another node takes the lease and serves writes; when the connection
 *   returns the old leader rejoins as a follower, having undone the write the log never
 *   got, and no node ever applied part of it;
 * - a follower cut off keeps answering reads, refuses writes saying why, and catches
 *   up once the connection returns.
 * Then every node answers GET /messages alike and `parley verify` is clean on each.
 */
import { afterAll, describe, expect, it } from "vitest";
import { stopProcess } from "../support/serve-process.js";
import { startNats, type NatsServer } from "../support/nats.js";
import { startProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { api, ClusterFixture, health, messagesOn, verify, type ClusterNodeProcess } from "../support/cluster-nodes.js";

const MESSAGES = 300;
const fixture = new ClusterFixture();
let nats: NatsServer | null = null;
const proxies: TcpProxy[] = [];
afterAll(async () => {
  fixture.cleanUp();
  for (const proxy of proxies) await proxy.close();
  await nats?.stop();
});

const send = (node: ClusterNodeProcess, auth: string, content: string) =>
  api(node, auth, "POST", "/messages", { type: "stream", to: "general", topic: "small", content });

describe("parley serve --cluster, nodes cut off from NATS", () => {
  it("a cut-off leader stops serving and rejoins as a follower; a cut-off follower refuses writes", async () => {
    nats = await startNats({ maxPayload: 16 * 1024 });
    const seed = fixture.seed((store, ownerId) => {
      for (let i = 0; i < MESSAGES; i++)
        store.sendMessage({
          senderId: ownerId,
          to: { type: "channel", channel: "general", topic: "big" },
          content: `message ${i} of a topic that moves as one write: ${"lorem ipsum ".repeat(8)}`,
        });
    });
    const natsPort = Number(new URL(nats.url.replace("nats:", "http:")).port);
    const nodes: ClusterNodeProcess[] = [];
    const proxyOf = new Map<ClusterNodeProcess, TcpProxy>();
    for (const name of ["n1", "n2", "n3"]) {
      const proxy = await startProxy({ host: "127.0.0.1", port: natsPort });
      proxies.push(proxy);
      const node = await fixture.start(name, fixture.nodeDir(name, seed.dir), proxy.url);
      proxyOf.set(node, proxy);
      nodes.push(node);
      // n1 alone first: it leads.
      if (name === "n1") await fixture.leaderOf([node]);
    }
    const [n1, n2, n3] = nodes as [ClusterNodeProcess, ClusterNodeProcess, ClusterNodeProcess];
    await fixture.allCaughtUp(nodes);

    // The leader's connection goes in the middle of the move's parts (each under 16 KiB). change_later from the
    // oldest rewrites every record (a change_all rename within the channel goes by reference: a small entry).
    const first = (await messagesOn(n1, seed.auth)).find((m) => m.subject === "big")!;
    const severed = proxyOf.get(n1)!.cutAfter(20_000);
    const move = await api(n1, seed.auth, "PATCH", `/messages/${first.id}`, {
      topic: "moved",
      propagate_mode: "change_later",
    });
    await severed;
    expect(move.status).toBe(503);
    const cutOff = await fixture.waitFor("the old leader saying it is cut off", async () => {
      const h = await health(n1);
      return h?.status === 503 && /NATS/.test(h.reason ?? "") ? h : null;
    });
    expect(cutOff.reason).toMatch(/NATS/);
    const refused = await send(n1, seed.auth, "to the cut-off leader");
    expect(refused.status).toBe(503);
    expect(String(refused.body["msg"])).toMatch(/NATS/);

    const next = await fixture.leaderOf([n2, n3]);
    expect((await send(n2, seed.auth, "while n1 is cut off")).status).toBe(200);

    proxyOf.get(n1)!.restore();
    await fixture.waitFor("n1 following again", async () => {
      const h = await health(n1);
      return h?.status === 200 && h.role === "follower" ? true : null;
    });
    await fixture.allCaughtUp(nodes);
    const afterMove = await messagesOn(n1, seed.auth);
    expect(afterMove.filter((m) => m.subject === "moved")).toEqual([]);
    expect(afterMove.filter((m) => m.subject === "big")).toHaveLength(MESSAGES);
    expect(afterMove.some((m) => m.content === "while n1 is cut off")).toBe(true);
    expect(fixture.logs).toMatch(/n1: undid transaction/);

    // A follower cut off: reads yes, writes refused saying why; back, it catches up.
    const follower = nodes.find((n) => n !== next && n !== n1)!;
    proxyOf.get(follower)!.cut();
    const followerCut = await fixture.waitFor("a follower saying it is cut off", async () => {
      const h = await health(follower);
      return h?.status === 503 ? h : null;
    });
    expect(followerCut.reason).toMatch(/NATS/);
    const refusedHere = await send(follower, seed.auth, "to the cut-off follower");
    expect(refusedHere.status).toBe(503);
    expect(String(refusedHere.body["msg"])).toMatch(/NATS/);
    expect((await messagesOn(follower, seed.auth)).length).toBe(afterMove.length);
    expect((await send(next, seed.auth, "while a follower is cut off")).status).toBe(200);
    proxyOf.get(follower)!.restore();
    await fixture.allCaughtUp(nodes);

    const answers = await Promise.all(nodes.map((n) => messagesOn(n, seed.auth)));
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.some((m) => m.content === "while a follower is cut off")).toBe(true);
    for (const node of nodes) await stopProcess(node.child, "SIGTERM");
    for (const node of nodes) {
      const checked = verify(node.dir);
      expect(checked.status, `${node.name}: ${checked.output}`).toBe(0);
    }
  }, 150_000);
});
