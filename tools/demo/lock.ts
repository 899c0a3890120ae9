/**
 * @module tools/demo/lock
 * One writer per data directory. The engine keeps users, channels and ID counters in
 * memory, loaded at open, so a second process writing beside a running server would
 * be invisible to it and, worse, both would hand out the same IDs. LMDB itself allows
 * several processes, so the CLI guards the directory: serve, start, demo, realm and
 * user hold DIR/parley.lock (the holder's pid and command) while they run, and refuse
 * to start when a live process holds it. A lock left by a killed process is taken over.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";

export const LOCK_FILE = "parley.lock";

export interface DataLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else; it still holds the lock.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function holder(path: string): { pid: number; command: string } | null {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as { pid?: unknown; command?: unknown };
    return typeof value.pid === "number" ? { pid: value.pid, command: typeof value.command === "string" ? value.command : "parley" } : null;
  } catch {
    return null;
  }
}

/** Takes the directory's lock for `command` (creating the directory), or explains who has it. */
export function lockDataDir(dir: string, command: string): DataLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const current = holder(path);
      if (current && current.pid !== process.pid && alive(current.pid)) {
        throw new Error(`${dir} is in use by parley ${current.command} (pid ${current.pid}); stop it first, or use another --data DIR (a running server would not see changes made beside it)`);
      }
      // Left by a process that died without cleaning up (or unreadable): take it over.
      rmSync(path, { force: true });
      continue;
    }
    writeSync(fd, JSON.stringify({ pid: process.pid, command }));
    closeSync(fd);
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      process.off("exit", release);
      if (holder(path)?.pid === process.pid) rmSync(path, { force: true });
    };
    // A command that fails unexpectedly still frees the directory on its way out.
    process.on("exit", release);
    return { release };
  }
  throw new Error(`cannot lock ${dir}: remove ${path} if no parley process is using the directory`);
}
