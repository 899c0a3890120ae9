/**
 * @module test/support/serve-process
 * `parley serve` as a child process over a data directory (from dist/: the test
 * command builds first), for crash and restart tests: start it, read its URL from the
 * first JSON line, stop it with a signal and wait for it to exit.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";

export const CLI = resolve(import.meta.dirname, "../../dist/tools/parley.js");

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
}

/** Every child started, so an afterAll can kill what a failed test left running. */
const started: ChildProcess[] = [];

/**
 * Starts `parley serve --data dir` on a free port and resolves once it listens; `env` adds to
 * this process's environment.
 * --no-sync: a SIGKILL leaves the OS holding every committed write, so durability
 * across it needs no fsync.
 */
export function serveProcess(
  dir: string,
  extraArgs: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--data", dir, "--port", "0", "--json", "--no-rate-limit", "--no-sync", ...extraArgs],
    { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, ...env } },
  );
  started.push(child);
  return new Promise((ok, reject) => {
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
    createInterface({ input: child.stdout! }).once("line", (line) =>
      ok({ child, url: (JSON.parse(line) as { url: string }).url }),
    );
  });
}

/** Sends `signal` and waits for the process to exit. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once("exit", () => done());
    child.kill(signal);
  });
}

/** Kills every child still running (for afterAll). */
export function killStartedProcesses(): void {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
