/**
 * @module tools/commands/realm-move
 * `parley realm move` (dispatched by tools/commands/realm.ts): moves a realm between shards, freezing it
 * behind nginx, exporting it from the source online, importing it on the target and switching nginx
 * (tools/shard/realm-move.ts; docs/cluster.md section 12). --stop-target and --start-target are shell
 * commands (say `systemctl stop parley`): the import needs the target's directory to itself.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { output, parseOptions, requireString } from "../args.js";
import { parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { nginxByPidFile } from "../shard/nginx-control.js";
import { moveRealm, type RealmMoveReport } from "../shard/realm-move.js";
import { connectSourceCluster } from "../shard/source-cluster.js";

const USAGE =
  "parley realm move --subdomain S --to-shard NAME --map FILE --nginx-conf FILE --source-data DIR --target-data DIR\n" +
  "       [--nginx-pid FILE (default /run/nginx.pid)] [--stop-target CMD] [--start-target CMD]\n" +
  "       [--source-cluster nats://HOST:PORT (the source is a cluster node)] [--json]";

/** Runs an operator's shell command; fails with its exit status. */
function shell(command: string): () => Promise<void> {
  return () =>
    new Promise((ok, fail) => {
      const child = spawn("sh", ["-c", command], { stdio: ["ignore", "inherit", "inherit"] });
      child.once("error", fail);
      child.once("exit", (code, signal) =>
        code === 0 ? ok() : fail(new Error(`'${command}' exited with ${code ?? signal}`)),
      );
    });
}

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("realm move", USAGE, () => {
    const parsed = parseOptions(argv, {
      subdomain: { type: "string" },
      "to-shard": { type: "string" },
      map: { type: "string" },
      "nginx-conf": { type: "string" },
      "nginx-pid": { type: "string" },
      "source-data": { type: "string" },
      "target-data": { type: "string" },
      "stop-target": { type: "string" },
      "start-target": { type: "string" },
      "source-cluster": { type: "string" },
    });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    const value = (name: string): string | undefined => {
      const v = parsed.values[name];
      return typeof v === "string" ? v : undefined;
    };
    const stop = value("stop-target");
    const start = value("start-target");
    return {
      parsed,
      subdomain: requireString(parsed, "subdomain"),
      toShard: requireString(parsed, "to-shard"),
      mapFile: resolve(requireString(parsed, "map")),
      nginxConfFile: resolve(requireString(parsed, "nginx-conf")),
      sourceDir: resolve(requireString(parsed, "source-data")),
      targetDir: resolve(requireString(parsed, "target-data")),
      nginx: nginxByPidFile({ pidFile: value("nginx-pid") ?? "/run/nginx.pid" }),
      sourceClusterUrl: value("source-cluster"),
      ...(stop !== undefined ? { stopTarget: shell(stop) } : {}),
      ...(start !== undefined ? { startTarget: shell(start) } : {}),
    };
  });
  if (!options) return USAGE_EXIT;
  const quiet = options.parsed.values["json"] === true;
  const { sourceClusterUrl, ...move } = options;
  const source = sourceClusterUrl === undefined ? null : await connectSourceCluster(sourceClusterUrl);
  let report: RealmMoveReport;
  try {
    report = await moveRealm({
      ...move,
      ...(source ? { sourceCluster: source.cluster } : {}),
      progress: (line) => (quiet ? undefined : console.error(line)),
    });
  } finally {
    await source?.close();
  }
  output(
    options.parsed,
    report,
    `realm '${report.subdomain}' is on shard '${report.to}' (seconds: ${JSON.stringify(report.seconds)})`,
  );
  return 0;
}
