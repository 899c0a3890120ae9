/**
 * The pieces of sharding that need no nginx (docs/cluster.md sections 11-12): the shard map's checks, the nginx
 * configuration it becomes, and the engine's two helpers of `parley realm move` (a whole-realm export plan, an API
 * key carried over). The real nginx and two servers are in test/cluster/shard.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BadRequestError, REALM_EXPORT_TYPE, type SendMessageInput } from "../../src/engine/index.js";
import { run as runShard } from "../../tools/commands/shard.js";
import { renderNginxConfig } from "../../tools/shard/nginx-config.js";
import { readShardMap, ShardMapSchema } from "../../tools/shard/shard-map.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore | null = null;
let dir: string | null = null;
afterEach(() => {
  t?.cleanup();
  t = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

const MAP = {
  domain: "chat.example.com",
  shards: { east: ["10.0.0.1:9991", "10.0.0.2:9991"], west: ["10.0.1.1:9991"] },
  realms: { "": "east", acme: "west", beta: "east" },
  moving: ["beta"],
};

function mapFile(content: unknown): string {
  dir = mkdtempSync(join(tmpdir(), "parley-shard-map-"));
  const file = join(dir, "shards.json");
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe("parley shard nginx-config", () => {
  it("routes each realm's Host to its shard's upstream, other hosts to the '' realm's", () => {
    const text = renderNginxConfig(ShardMapSchema.parse(MAP), "shards.json");
    const mapBlock = /map \$host \$parley_upstream \{\n([^}]*)\}/.exec(text)?.[1] ?? "";
    expect(
      mapBlock
        .trim()
        .split("\n")
        .map((l) => l.trim()),
    ).toEqual([
      "default parley_shard_east;",
      "acme.chat.example.com parley_shard_west;",
      "beta.chat.example.com parley_shard_east;",
    ]);
    // A cluster's nodes: one client's requests stay on one node (its event queue's); a single server needs no hash.
    expect(text).toMatch(/upstream parley_shard_east \{\n\s+hash "\$http_authorization\$cookie_sessionid" consistent;/);
    expect(text).toMatch(/upstream parley_shard_west \{\n\s+server 10\.0\.1\.1:9991 max_fails=2 fail_timeout=10s;/);
    expect(text).toContain("listen 80;");
  });

  it("gives long polls Zulip's timeout without buffering, and uploads parley's size", () => {
    const text = renderNginxConfig(ShardMapSchema.parse({ ...MAP, max_file_upload_mib: 25 }), "shards.json");
    expect(text).toMatch(
      /location ~ \^\/\(api\/v1\|json\)\/events\$ \{\n\s+proxy_pass http:\/\/\$parley_upstream;\n\s+proxy_buffering off;\n\s+proxy_read_timeout 1200s;/,
    );
    expect(text).toContain("client_max_body_size 26m;");
    expect(text).toContain("proxy_request_buffering off;");
  });

  it("makes a moving realm read-only: its Host alone is marked", () => {
    const moving = /map \$host \$parley_moving \{\n([^}]*)\}/.exec(
      renderNginxConfig(ShardMapSchema.parse(MAP), "m"),
    )?.[1];
    expect(
      moving
        ?.trim()
        .split("\n")
        .map((l) => l.trim()),
    ).toEqual(["default 0;", "beta.chat.example.com 1;"]);
    const root = renderNginxConfig(ShardMapSchema.parse({ ...MAP, moving: [""] }), "m");
    expect(/map \$host \$parley_moving \{\n\s+default 1;/.test(root)).toBe(true);
  });

  it("refuses a map that names a missing shard or realm, or a node without a port, saying where", () => {
    expect(() => readShardMap(mapFile({ ...MAP, realms: { acme: "north" } }))).toThrow(
      /realms\.acme: no shard named 'north'/,
    );
    expect(() => readShardMap(mapFile({ ...MAP, moving: ["gamma"] }))).toThrow(/realm 'gamma' is not in "realms"/);
    expect(() => readShardMap(mapFile({ ...MAP, shards: { east: ["10.0.0.1"] } }))).toThrow(
      /shards\.east\.0: HOST:PORT/,
    );
    expect(() => readShardMap(mapFile({ ...MAP, realms: { "a b": "east" } }))).toThrow(/realms\.a b: Invalid key/);
  });
});

describe("the parley shard command", () => {
  it("writes the configuration to --out, and exits 2 on a bad map or action", async () => {
    const file = mapFile(MAP);
    const out = join(dir!, "parley.conf");
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await runShard(["nginx-config", "--map", file, "--out", out])).toBe(0);
      expect(readFileSync(out, "utf8")).toBe(renderNginxConfig(ShardMapSchema.parse(MAP), file));
      writeFileSync(file, "{}");
      expect(await runShard(["nginx-config", "--map", file, "--out", out])).toBe(2);
      expect(await runShard(["reload", "--map", file])).toBe(2);
    } finally {
      quiet.mockRestore();
    }
  });
});

describe("the engine's part of parley realm move", () => {
  it("plans every message of the realm with everyone's rows, where a consent export without consent has less", () => {
    const temp = (t = tempStore());
    const w = seedRealm(temp.store);
    const send = (senderId: number, to: SendMessageInput["to"]) =>
      temp.store.sendMessage({ senderId, to, content: "x" }).id;
    const open = send(w.owner.id, { type: "channel", channel: "general", topic: "t" });
    const secret = send(w.alice.id, { type: "channel", channel: "secret", topic: "t" });
    const dm = send(w.alice.id, { type: "direct", users: [w.bob.id] });
    const whole = t.store.planWholeRealmExport(w.realm.id);
    expect([...whole.messageIds]).toEqual([open, secret, dm]);
    expect([...whole.rowUsers].sort()).toEqual([w.owner.id, w.alice.id, w.bob.id, w.guest.id].sort());
    expect([...t.store.planRealmExport(w.realm.id, REALM_EXPORT_TYPE.FULL_WITH_CONSENT).messageIds]).toEqual([open]);
  });

  it("carries an API key over: the new key logs in, the old one not, and another user's key is refused", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const carried = "k".repeat(32);
    t.store.restoreApiKey(w.alice.id, carried);
    expect(t.store.findUserByApiKey(carried)?.id).toBe(w.alice.id);
    expect(t.store.findUserByApiKey(w.alice.apiKey)).toBeUndefined();
    expect(() => t!.store.restoreApiKey(w.bob.id, carried)).toThrow(BadRequestError);
    expect(t.store.findUserByApiKey(carried)?.id).toBe(w.alice.id);
    expect(t.reopen().findUserByApiKey(carried)?.id).toBe(w.alice.id);
  });
});
