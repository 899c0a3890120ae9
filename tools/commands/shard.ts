/**
 * @module tools/commands/shard
 * `parley shard nginx-config --map FILE [--out FILE]`: nginx's configuration routing each realm's Host to the
 * shard (cluster or single server) that owns it, from a shard map (tools/shard/shard-map.ts; docs/cluster.md
 * section 11). Printed, or written to --out whole (a temporary file renamed over it) for nginx to include;
 * reload nginx after.
 */
import { renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseOptions, requireString } from "../args.js";
import { parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { renderNginxConfig } from "../shard/nginx-config.js";
import { readShardMap } from "../shard/shard-map.js";

const USAGE = "parley shard nginx-config --map FILE [--out FILE]";

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("shard", USAGE, () => {
    const parsed = parseOptions(argv, { map: { type: "string" }, out: { type: "string" } });
    const [action, ...extra] = parsed.positionals;
    if (action !== "nginx-config")
      throw new Error(action === undefined ? "missing action: nginx-config" : `unknown action '${action}'`);
    if (extra.length > 0) throw new Error(`unexpected argument '${extra[0]}'`);
    const out = parsed.values["out"];
    return { map: resolve(requireString(parsed, "map")), out: typeof out === "string" ? resolve(out) : null };
  });
  if (!options) return USAGE_EXIT;
  let text: string;
  try {
    text = renderNginxConfig(readShardMap(options.map), options.map);
  } catch (error) {
    console.error(`parley shard: ${error instanceof Error ? error.message : String(error)}`);
    return USAGE_EXIT;
  }
  if (options.out === null) {
    process.stdout.write(text);
    return 0;
  }
  writeFileSync(`${options.out}.next`, text);
  renameSync(`${options.out}.next`, options.out);
  console.error(`wrote ${options.out}; reload nginx (nginx -s reload) to apply it`);
  return 0;
}
