/**
 * `parley serve --log-file PATH --log-level L --slow-request-ms N`: the request log of
 * the operator CLI goes to the file, and a bad level is a usage error (exit 2).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";

const CLI = resolve(import.meta.dirname, "../../dist/tools/parley.js");
const dir = mkdtempSync(join(tmpdir(), "parley-serve-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parley serve request logging", () => {
  it("writes request lines to --log-file, flagged slow over --slow-request-ms; /metrics takes PARLEY_METRICS_TOKEN", async () => {
    const logFile = join(dir, "logs", "requests.log");
    const child = spawn(
      process.execPath,
      [
        CLI,
        "serve",
        "--data",
        join(dir, "data"),
        "--host",
        "0.0.0.0",
        "--port",
        "0",
        "--json",
        "--no-sync",
        "--log-file",
        logFile,
        "--slow-request-ms",
        "0",
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, PARLEY_METRICS_TOKEN: "scrape-me" },
      },
    );
    const url = await new Promise<string>((r, reject) => {
      child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
      createInterface({ input: child.stdout }).once("line", (line) => r((JSON.parse(line) as { url: string }).url));
    });
    const response = await fetch(`${url}/api/v1/server_settings`);
    expect(response.status).toBe(200);
    // A non-loopback peer (this machine's external address) needs the token from the environment.
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && !i.internal && i.family === "IPv4")?.address;
    const metricsRequests = external === undefined ? 0 : 2;
    if (external !== undefined) {
      const remote = url.replace("127.0.0.1", external);
      expect((await fetch(`${remote}/metrics`)).status).toBe(401);
      const scraped = await fetch(`${remote}/metrics`, { headers: { Authorization: "Bearer scrape-me" } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(
        /parley_http_requests_total\{method="GET",path="\/api\/v1\/server_settings",status="200"\} 1/,
      );
    }
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const lines = readFileSync(logFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1 + metricsRequests);
    expect(lines[0]).toMatchObject({
      method: "GET",
      path: "/api/v1/server_settings",
      status: 200,
      slow: true,
      level: "warn",
      req_id: response.headers.get("x-request-id"),
    });
  });

  it("refuses an unknown --log-level with exit code 2", () => {
    const r = spawnSync(
      process.execPath,
      [CLI, "serve", "--data", join(dir, "other"), "--port", "0", "--log-level", "loud"],
      { encoding: "utf8" },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--log-level must be one of silent, fatal, error, warn, info, debug, trace, not 'loud'/);
    expect(existsSync(join(dir, "other"))).toBe(false);
  });
});
