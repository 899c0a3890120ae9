import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_CONFIG, loadConfigFile, parseConfig, resolveConfig } from "../../src/config/index.js";
import { CLI, killStartedProcesses, serveProcess, stopProcess } from "../support/serve-process.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-config-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  killStartedProcesses();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("configuration schema", () => {
  it("fills Zulip's defaults", () => {
    expect(DEFAULT_CONFIG.INVITATION_LINK_VALIDITY_MINUTES).toBe(14_400);
    expect(DEFAULT_CONFIG.MAX_FILE_UPLOAD_SIZE).toBe(100);
    expect(DEFAULT_CONFIG.EMAIL_PORT).toBe(25);
    expect(DEFAULT_CONFIG.JWT_AUTH_KEYS).toEqual({});
    expect(DEFAULT_CONFIG.EXTERNAL_HOST).toBeUndefined();
  });

  it("accepts Zulip's settings", () => {
    const config = parseConfig({ EXTERNAL_HOST: "chat.example.com", JWT_AUTH_KEYS: { zulip: { key: "secret", algorithms: ["HS256"] } }, EMAIL_HOST: "smtp.example.com", EMAIL_PORT: 587, EMAIL_USE_TLS: true, MAX_FILE_UPLOAD_SIZE: 25 }, "test");
    expect(config.JWT_AUTH_KEYS["zulip"]?.algorithms).toEqual(["HS256"]);
    expect(config.EMAIL_PORT).toBe(587);
    expect(config.MAX_FILE_UPLOAD_SIZE).toBe(25);
  });

  it("names an unknown key", () => {
    expect(() => parseConfig({ EXTERNAL_HSOT: "x" }, "f.json")).toThrow(/f\.json: unknown key 'EXTERNAL_HSOT'/);
  });

  it("names the key of a bad value", () => {
    expect(() => parseConfig({ EMAIL_PORT: "25" }, "f.json")).toThrow(/'EMAIL_PORT'/);
    expect(() => parseConfig({ JWT_AUTH_KEYS: { zulip: { key: "k", algorithms: ["none"] } } }, "f.json")).toThrow(/'JWT_AUTH_KEYS\.zulip\.algorithms\.0'/);
    expect(() => parseConfig({ EXTERNAL_HOST: "http://x/" }, "f.json")).toThrow(/'EXTERNAL_HOST'/);
    expect(() => parseConfig({ MAX_FILE_UPLOAD_SIZE: -1 }, "f.json")).toThrow(ConfigError);
  });

  it("reports unreadable and malformed files", () => {
    const dir = tempDir();
    expect(() => loadConfigFile(join(dir, "missing.json"))).toThrow(/cannot read.*ENOENT/);
    writeFileSync(join(dir, "bad.json"), "{ EXTERNAL_HOST: 1 ");
    expect(() => loadConfigFile(join(dir, "bad.json"))).toThrow(/not valid JSON/);
    writeFileSync(join(dir, "list.json"), "[]");
    expect(() => loadConfigFile(join(dir, "list.json"))).toThrow(/expected a JSON object/);
  });

  it("reads DATA/parley.json when no file is named, and the named file over it", () => {
    const dir = tempDir();
    expect(resolveConfig(undefined, dir).source).toBeNull();
    writeFileSync(join(dir, "parley.json"), JSON.stringify({ MAX_FILE_UPLOAD_SIZE: 7 }));
    expect(resolveConfig(undefined, dir).config.MAX_FILE_UPLOAD_SIZE).toBe(7);
    const other = join(dir, "other.json");
    writeFileSync(other, JSON.stringify({ MAX_FILE_UPLOAD_SIZE: 9 }));
    expect(resolveConfig(other, dir)).toEqual({ config: expect.objectContaining({ MAX_FILE_UPLOAD_SIZE: 9 }), source: other });
  });
});

describe("parley serve --config", () => {
  it("refuses to start on a bad key, naming it, and creates nothing", () => {
    const dir = tempDir();
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ EMAIL_PORT: 99999 }));
    const data = join(dir, "data");
    const run = spawnSync(process.execPath, [CLI, "serve", "--data", data, "--config", file, "--port", "0"], { encoding: "utf8", timeout: 30_000 });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("'EMAIL_PORT'");
    expect(run.stderr).toContain(file);
    expect(existsSync(data)).toBe(false);
  });

  it("uses EXTERNAL_HOST from the file for realm hosts and URLs", async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    const demo = spawnSync(process.execPath, [CLI, "demo", "--data", data, "--json"], { encoding: "utf8", timeout: 60_000 });
    expect(demo.status).toBe(0);
    writeFileSync(join(data, "parley.json"), JSON.stringify({ EXTERNAL_HOST: "chat.example.test" }));
    const { child, url } = await serveProcess(data);
    try {
      const response = await fetch(`${url}/api/v1/server_settings`, { headers: { host: "chat.example.test" } });
      const body = (await response.json()) as { realm_uri?: string; realm_url?: string };
      expect(response.status).toBe(200);
      expect(body.realm_url ?? body.realm_uri).toMatch(/^http:\/\/chat\.example\.test/);
    } finally {
      await stopProcess(child, "SIGTERM");
    }
  });
});
