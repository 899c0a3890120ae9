/**
 * Sharding realms across servers (docs/cluster.md sections 11-12), as an operator runs it: Debian's nginx routing by
 * Host from `parley shard nginx-config`, two `parley serve` processes each owning some realms. Each Host reaches
 * its server; then `parley realm move` takes a realm to the other server: while it moves, writes are refused and
 * reads served; after it, the realm's messages and credentials are on the target and its Host routes there.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { hashNewPassword } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { renderNginxConfig } from "../../tools/shard/nginx-config.js";
import { nginxByPidFile } from "../../tools/shard/nginx-control.js";
import { moveRealm } from "../../tools/shard/realm-move.js";
import { readShardMap, type ShardMap } from "../../tools/shard/shard-map.js";
import { CLI, stopProcess } from "../support/serve-process.js";
import { freePort } from "../support/nats.js";
import { startNginx, type Nginx } from "../support/nginx.js";

const DOMAIN = "parley.test";
const dirs: string[] = [];
const children: ChildProcess[] = [];
let nginx: Nginx | null = null;
/** The servers' stderr, and nginx's error log, printed when the test fails. */
let logs = "";
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await nginx?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Seeded {
  readonly dir: string;
  readonly auth: Record<string, string>;
}

const MEMBER_PASSWORD = "a long and unusual passphrase 42";

/**
 * A data directory with these realms, each with an owner subscribed to #general and a member with a password, who
 * got a direct message from the owner.
 */
async function seed(realms: readonly string[]): Promise<Seeded> {
  const dir = mkdtempSync(join(tmpdir(), "parley-shard-"));
  dirs.push(dir);
  const store = openStore(dir, { noSync: true });
  const auth: Record<string, string> = {};
  for (const subdomain of realms) {
    const { owner } = store.createRealm({
      subdomain,
      name: `Realm ${subdomain}`,
      owner: { email: `owner@${subdomain}.dev`, fullName: "Owner" },
    });
    store.subscribe(owner.id, { channels: [{ name: "general" }] });
    auth[subdomain] = `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}`;
    const email = `member@${subdomain}.dev`;
    const member = store.createUser({ realmId: owner.realmId, email, fullName: "Member" });
    store.setPassword(member.id, await hashNewPassword(MEMBER_PASSWORD, { email, fullName: "Member" }));
    store.sendMessage({ senderId: owner.id, to: { type: "direct", users: [member.id] }, content: "psst" });
    auth[`member:${subdomain}`] = `Basic ${Buffer.from(`${email}:${member.apiKey}`).toString("base64")}`;
  }
  store.close();
  return { dir, auth };
}

function serve(dir: string, port: number): Promise<ChildProcess> {
  const args = [CLI, "serve", "--data", dir, "--port", String(port), "--host", "127.0.0.1", "--json"];
  const child = spawn(
    process.execPath,
    [...args, "--external-host", DOMAIN, "--no-rate-limit", "--no-sync", "--log-level", "silent"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    logs += chunk.toString();
  });
  return new Promise((ok, reject) => {
    child.once("exit", (code) => reject(new Error(`parley serve exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).once("line", () => ok(child));
  });
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** One request to 127.0.0.1:port with this Host (fetch cannot set Host). */
function call(port: number, host: string, auth: string, method: string, path: string, form?: Record<string, string>) {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  return new Promise<Answer>((ok, fail) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: `/api/v1${path}`,
        headers: {
          host,
          ...(auth !== "" ? { authorization: auth } : {}),
          ...(body !== undefined
            ? { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) }
            : {}),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => {
          try {
            ok({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> });
          } catch {
            fail(new Error(`${method} ${path} for ${host}: ${res.statusCode} ${text}`));
          }
        });
      },
    );
    req.once("error", fail);
    req.end(body);
  });
}

const send = (port: number, host: string, auth: string, content: string) =>
  call(port, host, auth, "POST", "/messages", { type: "stream", to: "general", topic: "t", content });

async function contents(port: number, host: string, auth: string): Promise<string[]> {
  const query = new URLSearchParams({ anchor: "newest", num_before: "100", num_after: "0", apply_markdown: "false" });
  const res = await call(port, host, auth, "GET", `/messages?${query}`);
  expect(res.status).toBe(200);
  return (res.body["messages"] as { content: string }[]).map((m) => m.content);
}

describe("parley shard nginx-config and parley realm move", () => {
  it("routes each Host to its server, and moves a realm with its messages and keys", async () => {
    try {
      await routeAndMove();
    } catch (error) {
      const nginxLog = nginx ? readFileSync(join(nginx.prefix, "logs", "error.log"), "utf8") : "";
      console.error(`servers said:\n${logs}\nnginx said:\n${nginxLog}`);
      throw error;
    }
  });
});

async function routeAndMove(): Promise<void> {
  const a = await seed(["", "beta"]);
  const b = await seed(["gamma"]);
  const [portA, portB] = [await freePort(), await freePort()];
  await serve(a.dir, portA);
  let serverB = await serve(b.dir, portB);
  const map: ShardMap = {
    domain: DOMAIN,
    listen: "",
    max_file_upload_mib: 100,
    shards: { a: [`127.0.0.1:${portA}`], b: [`127.0.0.1:${portB}`] },
    realms: { "": "a", beta: "a", gamma: "b" },
    moving: [],
  };
  const mapFile = join(a.dir, "..", `${Date.now()}-shards.json`);
  dirs.push(mapFile);
  nginx = await startNginx((file, port) => {
    map.listen = `127.0.0.1:${port}`;
    writeFileSync(mapFile, JSON.stringify(map));
    writeFileSync(file, renderNginxConfig(readShardMap(mapFile), mapFile));
  });
  const via = nginx.port;
  const host = (realm: string) => (realm === "" ? DOMAIN : `${realm}.${DOMAIN}`);

  // Each Host reaches its own server: a realm's key works only where the realm is.
  for (const realm of ["", "beta", "gamma"]) {
    const auth = (a.auth[realm] ?? b.auth[realm])!;
    const sent = await send(via, host(realm), auth, `first in ${realm || "root"}`);
    expect(sent.status, `${realm}: ${JSON.stringify(sent.body)}`).toBe(200);
  }
  expect((await send(portA, host("gamma"), b.auth["gamma"]!, "x")).status).not.toBe(200);
  // Any other host is the '' realm's, on server A (as parley serves it).
  expect((await send(via, "127.0.0.1", a.auth[""]!, "by address")).status).toBe(200);
  for (let i = 0; i < 5; i++) expect((await send(via, host("beta"), a.auth["beta"]!, `beta ${i}`)).status).toBe(200);
  const before = await contents(via, host("beta"), a.auth["beta"]!);

  // While it moves (the target is stopped then), beta answers reads and refuses writes with 503.
  const duringMove: Answer[] = [];
  const report = await moveRealm({
    subdomain: "beta",
    toShard: "b",
    mapFile,
    nginxConfFile: nginx.includeFile,
    sourceDir: a.dir,
    targetDir: b.dir,
    nginx: nginxByPidFile({ pidFile: nginx.pidFile }),
    stopTarget: async () => {
      duringMove.push(await send(via, host("beta"), a.auth["beta"]!, "while moving"));
      duringMove.push(await call(via, host("beta"), a.auth["beta"]!, "GET", "/users/me"));
      await stopProcess(serverB, "SIGTERM");
    },
    startTarget: async () => {
      serverB = await serve(b.dir, portB);
    },
  });
  console.log(`realm move of ${report.messages} messages, ${report.users} users: ${JSON.stringify(report.seconds)} s`);
  expect(duringMove.map((r) => r.status)).toEqual([503, 200]);
  expect(duringMove[0]!.body["code"]).toBe("SERVER_BUSY");

  // After: beta's Host reaches server B, with every message and the same API key.
  expect(readShardMap(mapFile).realms["beta"]).toBe("b");
  expect(await contents(via, host("beta"), a.auth["beta"]!)).toEqual(before);
  expect((await send(via, host("beta"), a.auth["beta"]!, "after the move")).status).toBe(200);
  expect(await contents(portB, host("beta"), a.auth["beta"]!)).toContain("after the move");
  expect(await contents(portA, host("beta"), a.auth["beta"]!)).not.toContain("after the move");
  // Everyone's data and credentials came along: the member's direct message, password and API key.
  expect(await contents(via, host("beta"), a.auth["member:beta"]!)).toContain("psst");
  const login = await call(via, host("beta"), "", "POST", "/fetch_api_key", {
    username: "member@beta.dev",
    password: MEMBER_PASSWORD,
  });
  expect(login.status).toBe(200);
  expect(`Basic ${Buffer.from(`member@beta.dev:${String(login.body["api_key"])}`).toString("base64")}`).toBe(
    a.auth["member:beta"],
  );
  // The other realms are where they were.
  expect((await send(via, host("gamma"), b.auth["gamma"]!, "gamma again")).status).toBe(200);
  expect((await send(via, DOMAIN, a.auth[""]!, "root again")).status).toBe(200);
}
