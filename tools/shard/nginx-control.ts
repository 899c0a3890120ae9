/**
 * @module tools/shard/nginx-control
 * Reloading nginx and knowing when the reload has taken effect, for `parley realm move`. A reload (SIGHUP to the
 * master, what `nginx -s reload` sends) starts new workers with the new configuration and asks the old ones to
 * finish their requests and exit. Two things matter to a move:
 *
 * - the new configuration was accepted: new workers appeared (a refused one leaves the old workers alone);
 * - drained: every old worker has exited, so no request routed by the old configuration is still in flight
 *   and no answer to one can still reach a client. Long polls keep an old worker alive until they end, so
 *   nginx's main configuration should set `worker_shutdown_timeout` (docs/cluster.md section 11).
 *
 * Workers are found as the master's children in /proc (Linux).
 */
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export interface NginxControl {
  /** Reloads; with `drain`, resolves only once the old workers are gone. Throws with what to check otherwise. */
  reload(drain: boolean): Promise<void>;
}

export interface NginxPidOptions {
  /** The master's PID file (Debian: /run/nginx.pid). */
  readonly pidFile: string;
  /** How long new workers may take to appear. */
  readonly startTimeoutMs?: number;
  /** How long old workers may take to finish (long polls: see worker_shutdown_timeout). */
  readonly drainTimeoutMs?: number;
}

/** The PIDs whose parent is `parent`. */
export function childrenOf(parent: number): Set<number> {
  const out = new Set<number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid === parent) out.add(Number(entry));
  }
  return out;
}

function readMasterPid(pidFile: string): number {
  let text: string;
  try {
    text = readFileSync(pidFile, "utf8").trim();
  } catch (error) {
    throw new Error(
      `cannot read nginx's PID file ${pidFile} (${error instanceof Error ? error.message : String(error)}): ` +
        "is nginx running? Pass --nginx-pid FILE (its `pid` directive)",
    );
  }
  if (!/^\d+$/.test(text)) throw new Error(`nginx's PID file ${pidFile} holds '${text}', not a process ID`);
  return Number(text);
}

async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) return false;
    await sleep(50);
  }
  return true;
}

/** Controls the nginx whose master's PID is in `pidFile`; this process must be allowed to signal it. */
export function nginxByPidFile(options: NginxPidOptions): NginxControl {
  return {
    async reload(drain) {
      const master = readMasterPid(options.pidFile);
      const before = childrenOf(master);
      try {
        process.kill(master, "SIGHUP");
      } catch (error) {
        throw new Error(
          `cannot signal nginx's master ${master}: ${error instanceof Error ? error.message : String(error)} ` +
            "(run as the user nginx runs as, or root)",
          { cause: error },
        );
      }
      const started = await until(
        () => [...childrenOf(master)].some((pid) => !before.has(pid)),
        options.startTimeoutMs ?? 10_000,
      );
      if (!started)
        throw new Error(
          `nginx (master ${master}) started no new workers after the reload: it refused the configuration; ` +
            "see its error log, or run nginx -t",
        );
      if (!drain) return;
      const drainMs = options.drainTimeoutMs ?? 180_000;
      const drained = await until(() => ![...childrenOf(master)].some((pid) => before.has(pid)), drainMs);
      if (!drained)
        throw new Error(
          `nginx's old workers still run ${drainMs / 1000} s after the reload (long polls?): set ` +
            "worker_shutdown_timeout in nginx's main configuration (docs/cluster.md section 11)",
        );
    },
  };
}
