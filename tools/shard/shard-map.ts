/**
 * @module tools/shard/shard-map
 * The shard map (docs/cluster.md section 11): which shard (a cluster of nodes, or one server) owns each realm.
 * `parley shard nginx-config` turns it into nginx's routing by Host; `parley realm move` edits it.
 *
 *     {
 *       "domain": "chat.example.com",            realms are SUBDOMAIN.domain, the '' realm the domain itself
 *       "listen": "80",                          nginx's listen (optional, default 80)
 *       "max_file_upload_mib": 100,              the servers' MAX_FILE_UPLOAD_SIZE (optional, default 100)
 *       "shards": { "east": ["10.0.0.1:9991", "10.0.0.2:9991"], "west": ["10.0.1.1:9991"] },
 *       "realms": { "": "east", "acme": "west" },
 *       "moving": ["acme"]                        realms being moved: read-only (optional)
 *     }
 */
import { renameSync, writeFileSync, readFileSync } from "node:fs";
import { z } from "zod";

/** A DNS label or '' (Zulip's subdomains: lowercase letters, digits, dashes). */
const subdomain = z.string().regex(/^(|[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)$/, "a realm subdomain (a-z, 0-9, -)");
const shardName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a shard name (letters, digits, _ and -)");
/** host:port of one node, as nginx's `server` takes it (IPv6 in brackets). */
const node = z.string().regex(/^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d{1,5}$/, "HOST:PORT");

export const ShardMapSchema = z
  .object({
    domain: z.string().regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/, "a lowercase host name without port"),
    listen: z
      .string()
      .regex(/^[A-Za-z0-9.:[\]]+$/, "an nginx listen address (PORT or ADDRESS:PORT)")
      .default("80"),
    max_file_upload_mib: z.number().int().min(1).max(1_000_000).default(100),
    shards: z.record(shardName, z.array(node).min(1, "a shard needs at least one node")),
    realms: z.record(subdomain, shardName),
    moving: z.array(subdomain).default([]),
  })
  .strict()
  .superRefine((map, ctx) => {
    for (const [realm, shard] of Object.entries(map.realms))
      if (map.shards[shard] === undefined)
        ctx.addIssue({ code: "custom", path: ["realms", realm], message: `no shard named '${shard}' in "shards"` });
    for (const realm of map.moving)
      if (map.realms[realm] === undefined)
        ctx.addIssue({ code: "custom", path: ["moving"], message: `realm '${realm}' is not in "realms"` });
  });

export type ShardMap = z.infer<typeof ShardMapSchema>;

/** The Host a realm is reached at (parley's subdomainOf read backwards). */
export function hostOf(map: ShardMap, realm: string): string {
  return realm === "" ? map.domain : `${realm}.${map.domain}`;
}

/** The map in `file`, checked; errors name the file and the field to fix. */
export function readShardMap(file: string): ShardMap {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the shard map ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = ShardMapSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new Error(`the shard map ${file} is not valid:\n  ${issues.join("\n  ")}`);
  }
  return parsed.data;
}

/** Writes the map whole or not at all (a temporary file renamed over it). */
export function writeShardMap(file: string, map: ShardMap): void {
  const next = `${file}.next`;
  writeFileSync(next, `${JSON.stringify(map, null, 2)}\n`);
  renameSync(next, file);
}
