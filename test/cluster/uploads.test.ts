/**
 * Uploaded files in a cluster (docs/cluster.md section 8): the leader puts each upload's bytes in JetStream's object
 * store before its record is committed, and a node lacking a file gets it from there. Two nodes over Debian's
 * nats-server: a file uploaded through the follower (forwarded) is served by the follower; one uploaded on the
 * leader is served by the follower after the leader is killed with SIGKILL and the follower took over. And a realm
 * move's export from a node lacking a file gets it from the object store.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { exportFromSnapshot, refuseClusterTarget } from "../../tools/shard/realm-move.js";
import { connectSourceCluster } from "../../tools/shard/source-cluster.js";
import { health } from "../support/cluster-nodes.js";
import { startNats, type NatsServer } from "../support/nats.js";
import { CLI, sleep, stopProcess } from "../support/serve-process.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
let logs = "";
let nats: NatsServer | null = null;
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await nats?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Node {
  readonly name: string;
  readonly dir: string;
  readonly child: ChildProcess;
  readonly url: string;
}

function seedDirectory(): { dir: string; auth: string } {
  const dir = mkdtempSync(join(tmpdir(), "parley-cluster-uploads-"));
  dirs.push(dir);
  const store = openStore(dir, { noSync: true });
  const { owner } = store.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
  store.close();
  return { dir, auth: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}` };
}

function startNode(name: string, dir: string, natsUrl: string): Promise<Node> {
  const args = [CLI, "serve", "--data", dir, "--port", "0", "--json", "--no-rate-limit", "--no-sync"];
  const child = spawn(process.execPath, [...args, "--log-level", "silent", "--cluster", natsUrl, "--node", name], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  child.stderr!.on("data", (chunk: Buffer) => (logs += chunk.toString()));
  return new Promise((ok, reject) => {
    child.once("exit", (code) => reject(new Error(`node ${name} exited with ${code}: ${logs}`)));
    createInterface({ input: child.stdout! }).once("line", (line) =>
      ok({ name, dir, child, url: (JSON.parse(line) as { url: string }).url }),
    );
  });
}

async function role(node: Node): Promise<string | null> {
  const h = await health(node);
  return h?.status === 200 ? h.role : null;
}

/** The leader, once every other node serving knows it (else a write there answers "No leader is known yet"). */
async function leaderOf(nodes: readonly Node[]): Promise<Node> {
  const until = Date.now() + 30_000;
  for (;;) {
    const all = await Promise.all(nodes.map(health));
    const leader = nodes.find((_, i) => all[i]?.status === 200 && all[i]?.role === "leader");
    if (leader && all.every((h) => h === null || h.status !== 200 || h.leader === leader.name)) return leader;
    if (Date.now() > until) throw new Error(`no leader; the nodes said:\n${logs}`);
    await sleep(100);
  }
}

async function upload(node: Node, auth: string, bytes: Buffer, name: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type: "application/octet-stream" }), name);
  const res = await fetch(`${node.url}/api/v1/user_uploads`, {
    method: "POST",
    headers: { authorization: auth },
    body: form,
    signal: AbortSignal.timeout(15_000),
  });
  const body = (await res.json()) as { url?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.url!;
}

async function download(node: Node, auth: string, url: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(`${node.url}${url}`, {
    headers: { authorization: auth },
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe("uploads in a cluster", () => {
  it("are served by every node, and after the leader that stored them is killed", async () => {
    nats = await startNats();
    const seed = seedDirectory();
    const nodes: Node[] = [];
    for (const name of ["u1", "u2"]) {
      const dir = mkdtempSync(join(tmpdir(), `parley-cluster-${name}-`));
      dirs.push(dir);
      cpSync(seed.dir, dir, { recursive: true });
      nodes.push(await startNode(name, dir, nats.url));
    }
    const leader = await leaderOf(nodes);
    const follower = nodes.find((n) => n !== leader)!;
    expect(await role(follower)).toBe("follower");

    // Several chunks of the object store's 128 KiB, and not a multiple of it.
    const forwarded = randomBytes(300_000 + 17);
    const forwardedUrl = await upload(follower, seed.auth, forwarded, "through-follower.bin");
    const onFollower = await download(follower, seed.auth, forwardedUrl);
    expect(onFollower.status).toBe(200);
    expect(onFollower.bytes.equals(forwarded)).toBe(true);

    const direct = randomBytes(5_000);
    const directUrl = await upload(leader, seed.auth, direct, "on-leader.txt");
    leader.child.kill("SIGKILL");
    expect(await leaderOf([follower])).toBe(follower);
    const afterFailover = await download(follower, seed.auth, directUrl);
    expect(afterFailover.status).toBe(200);
    expect(afterFailover.bytes.equals(direct)).toBe(true);
    expect((await download(follower, seed.auth, forwardedUrl)).bytes.equals(forwarded)).toBe(true);

    // parley realm move out of this cluster, from the old leader's directory once it rejoined: it never had the
    // upload stored after its death, and the export takes it from the object store.
    const late = randomBytes(2_000);
    const lateUrl = await upload(follower, seed.auth, late, "after-failover.txt");
    const rejoined = await startNode(leader.name, leader.dir, nats.url);
    const work = mkdtempSync(join(tmpdir(), "parley-cluster-move-"));
    dirs.push(work);
    const source = await connectSourceCluster(nats.url);
    const warnings: string[] = [];
    try {
      await exportFromSnapshot(rejoined.dir, "", work, {
        sourceCluster: source.cluster,
        warn: (w) => warnings.push(w),
      });
    } finally {
      await source.close();
    }
    expect(warnings).toEqual([]);
    const unpacked = join(work, "unpacked");
    mkdirSync(unpacked);
    execFileSync("tar", ["-xzf", join(work, "realm.tar.gz"), "-C", unpacked]);
    const exported = (url: string) =>
      readFileSync(join(unpacked, "zulip-export-move", "uploads", url.slice("/user_uploads/".length)));
    expect(exported(lateUrl).equals(late)).toBe(true);
    expect(exported(directUrl).equals(direct)).toBe(true);
    expect(exported(forwardedUrl).equals(forwarded)).toBe(true);

    // A move never imports into a cluster node's directory: the import would bypass the log.
    await stopProcess(rejoined.child);
    expect(() => refuseClusterTarget(rejoined.dir)).toThrow(/is a node of a cluster \(log sequence \d+\)/);
  });
});
