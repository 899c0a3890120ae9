/**
 * @module tools/backup/restored-check
 * Opens a restored data directory and checks it (verify, message count, last message
 * ID) in a child process, for `parley restore`. A backup damaged before its checksums
 * were taken passes the checksum step, and reading it then fails in ways the restore
 * must still report: the record decoder throws, and LMDB, reading a damaged page
 * through its memory map, can kill the process with SIGSEGV or SIGBUS, which no
 * try/catch sees. The child prints one JSON line with its findings; the parent turns
 * an exception, a signal or a missing line into one message.
 *
 * Run as a script: `node restored-check.js DIR [--quiet]`.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openForCommand } from "../demo/cli.js";
import { progressBar } from "../progress.js";

export interface RestoredStore {
  readonly messageCount: number;
  readonly lastMessageId: number;
  /** Index differences and verify's problems, one line each. */
  readonly problems: string[];
}

/** Why the store could not be read, or what it holds. */
export type CheckResult =
  { readonly ok: true; readonly store: RestoredStore } | { readonly ok: false; readonly reason: string };

/**
 * msgpackr's messages quote the damaged record after the text ("Data read, but end of
 * buffer not reached {"id":8,...,"content":...}"): users' messages have no place in a
 * restore's output, so the reason ends where a quoted value begins, and is kept short.
 */
function shortReason(error: unknown): string {
  const line = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
  const quoted = line.search(/\s[{["]/);
  const text = (quoted >= 0 ? line.slice(0, quoted) : line).trim();
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

function checkHere(dir: string, quiet: boolean): CheckResult {
  try {
    const store = openForCommand(dir, "restore");
    try {
      const bar = quiet ? null : progressBar("verify", store.lastMessageId);
      try {
        const report = store.verify((done) => bar?.update(done));
        const problems = [
          ...report.differences.map((d) => `index ${d.key}: ${d.missingCount} missing, ${d.extraCount} extra`),
          ...report.problems,
        ];
        return {
          ok: true,
          store: { messageCount: store.countMessages(), lastMessageId: store.lastMessageId, problems },
        };
      } finally {
        bar?.stop();
      }
    } finally {
      store.close();
    }
  } catch (error) {
    return { ok: false, reason: shortReason(error) };
  }
}

function parseResult(line: string): CheckResult | null {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== "object" || value === null) return null;
    const v = value as Record<string, unknown>;
    if (v["ok"] === false && typeof v["reason"] === "string") return { ok: false, reason: v["reason"] };
    const s = v["store"] as Record<string, unknown> | undefined;
    if (v["ok"] !== true || typeof s !== "object" || s === null) return null;
    const { messageCount, lastMessageId, problems } = s;
    if (typeof messageCount !== "number" || typeof lastMessageId !== "number" || !Array.isArray(problems)) return null;
    return { ok: true, store: { messageCount, lastMessageId, problems: problems.map(String) } };
  } catch {
    return null;
  }
}

/** Checks the store in `dir` in a child process; its progress bar (unless quiet) goes to this process's stderr. */
export function checkRestoredStore(dir: string, quiet: boolean): Promise<CheckResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), dir, ...(quiet ? ["--quiet"] : [])], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const result = parseResult(stdout.trim().split("\n").pop() ?? "");
      if (result !== null) resolve(result);
      else if (signal !== null)
        resolve({ ok: false, reason: `reading it crashed the store reader (${signal}: LMDB met a damaged page)` });
      else resolve({ ok: false, reason: `the check exited with code ${String(code)} without a result` });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, flag] = process.argv.slice(2);
  if (dir === undefined) {
    console.error("usage: restored-check DIR [--quiet]");
    process.exitCode = 2;
  } else {
    console.log(JSON.stringify(checkHere(dir, flag === "--quiet")));
  }
}
