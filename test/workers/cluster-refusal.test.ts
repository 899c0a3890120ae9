/**
 * `parley serve --cluster` with several workers (docs/cluster.md section 8) is refused
 * before anything starts, whether the workers come from --workers or from WORKERS in
 * the configuration file, with a message saying why and what to do instead. No NATS
 * server is needed: the refusal comes before the node connects.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/serve-process.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function serve(args: readonly string[]): { status: number | null; stderr: string; data: string } {
  const data = mkdtempSync(join(tmpdir(), "parley-cluster-refusal-"));
  dirs.push(data);
  const cli = [CLI, "serve", "--data", data, "--port", "0", ...args, "--cluster", "nats://127.0.0.1:1", "--node", "n1"];
  const run = spawnSync(process.execPath, cli, { encoding: "utf8", timeout: 30_000 });
  return { status: run.status, stderr: run.stderr, data };
}

describe("serve --cluster with workers", () => {
  it("is refused when --workers asks for several, saying why and creating nothing", () => {
    const run = serve(["--workers", "2"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--cluster runs a node as one process/);
    expect(run.stderr).toMatch(/2 workers \(--workers\)/);
    expect(run.stderr).toMatch(/add nodes to the cluster/);
    expect(readdirSync(run.data)).toEqual([]);
  });

  it("is refused when the configuration's WORKERS asks for several, naming that setting", () => {
    const config = join(mkdtempSync(join(tmpdir(), "parley-cluster-refusal-config-")), "parley.json");
    dirs.push(join(config, ".."));
    writeFileSync(config, JSON.stringify({ WORKERS: 3 }));
    const run = serve(["--config", config]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/3 workers \(WORKERS in the configuration\)/);
    expect(run.stderr).toMatch(/set WORKERS to 1/);
  });
});
