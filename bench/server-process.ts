/**
 * @module bench/server-process
 * `parley serve` as a child process for the benchmarks that drive it over HTTP, and its
 * cost read from /proc: CPU and RSS of the whole process tree (with `--workers N` the
 * server is a parent and N worker processes, and the parent's own figures would miss them).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** utime + stime of a process in seconds (from /proc/PID/stat); 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export function rssMB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** The process and all its descendants, from the parent field of every /proc/PID/stat. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(
        readFileSync(join("/proc", entry, "stat"), "utf8")
          .split(") ")[1]!
          .split(" ")[1],
      );
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // exited while we looked
    }
  }
  const tree: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    tree.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** CPU seconds and RSS of a process tree (a worker replaced mid-run takes its CPU seconds with it). */
export function treeUsage(root: number): { cpuSeconds: number; rssMB: number; processes: number } {
  const pids = processTree(root);
  return {
    cpuSeconds: pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    rssMB: pids.reduce((sum, pid) => sum + rssMB(pid), 0),
    processes: pids.length,
  };
}

/** A worker's name from its environment (PARLEY_WORKER), else "parent" (the supervisor, or a lone server). */
function processName(pid: number): string {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    const worker = env.find((entry) => entry.startsWith("PARLEY_WORKER="));
    return worker ? worker.slice("PARLEY_WORKER=".length) : "parent";
  } catch {
    return "gone";
  }
}

/** CPU seconds of each process of the tree by name ("parent", "writer", "reader-1", ...; a replaced worker's go). */
export function cpuByProcess(root: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const pid of processTree(root)) {
    const name = processName(pid);
    byName.set(name, (byName.get(name) ?? 0) + cpuSeconds(pid));
  }
  return byName;
}

/** Starts `parley serve` and resolves with its port from the `listening on` line. */
export async function startServer(
  dir: string,
  nodeArgs: readonly string[],
  serveArgs: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const cli = join("dist", "tools", "parley.js");
  const child = spawn(
    process.execPath,
    [...nodeArgs, cli, "serve", "--data", dir, "--port", "0", "--no-rate-limit", "--log-level", "silent", ...serveArgs],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error("parley serve printed no 'listening on' line within 120 s")),
      120_000,
    );
    child.once("exit", (code) =>
      reject(
        new Error(
          `parley serve exited with code ${code}: is the build current (npm run build) and the data directory free?`,
        ),
      ),
    );
    lines.on("line", (line) => {
      const match = /listening on https?:\/\/[^:]+:(\d+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
  return { child, port };
}
