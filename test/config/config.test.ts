import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkJwtKeys,
  ConfigError,
  DEFAULT_CONFIG,
  loadConfigFile,
  parseConfig,
  resolveConfig,
} from "../../src/config/index.js";
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
    const config = parseConfig(
      {
        EXTERNAL_HOST: "chat.example.com",
        JWT_AUTH_KEYS: { zulip: { key: "secret", algorithms: ["HS256"] } },
        EMAIL_HOST: "smtp.example.com",
        EMAIL_PORT: 587,
        EMAIL_USE_TLS: true,
        MAX_FILE_UPLOAD_SIZE: 25,
      },
      "test",
    );
    expect(config.JWT_AUTH_KEYS["zulip"]?.algorithms).toEqual(["HS256"]);
    expect(config.EMAIL_PORT).toBe(587);
    expect(config.MAX_FILE_UPLOAD_SIZE).toBe(25);
  });

  it("names an unknown key", () => {
    expect(() => parseConfig({ EXTERNAL_HSOT: "x" }, "f.json")).toThrow(/f\.json: unknown key 'EXTERNAL_HSOT'/);
  });

  it("names the key of a bad value", () => {
    expect(() => parseConfig({ EMAIL_PORT: "25" }, "f.json")).toThrow(/'EMAIL_PORT'/);
    expect(() => parseConfig({ JWT_AUTH_KEYS: { zulip: { key: "k", algorithms: ["none"] } } }, "f.json")).toThrow(
      /'JWT_AUTH_KEYS\.zulip\.algorithms\.0'/,
    );
    expect(() => parseConfig({ EXTERNAL_HOST: "http://x/" }, "f.json")).toThrow(/'EXTERNAL_HOST'/);
    expect(() => parseConfig({ MAX_FILE_UPLOAD_SIZE: -1 }, "f.json")).toThrow(ConfigError);
  });

  it("refuses EMAIL_USE_TLS and EMAIL_USE_SSL together, naming both", () => {
    expect(() =>
      parseConfig({ EMAIL_HOST: "smtp.example.com", EMAIL_USE_TLS: true, EMAIL_USE_SSL: true }, "f.json"),
    ).toThrow(/f\.json: 'EMAIL_USE_SSL': EMAIL_USE_TLS and EMAIL_USE_SSL are both true; set only one/);
    expect(parseConfig({ EMAIL_USE_SSL: true, EMAIL_PORT: 465 }, "f.json").EMAIL_USE_SSL).toBe(true);
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
    expect(resolveConfig(other, dir)).toEqual({
      config: expect.objectContaining({ MAX_FILE_UPLOAD_SIZE: 9 }),
      source: other,
    });
  });
});

describe("JWT key check at start", () => {
  const pem = (type: "rsa" | "ec", options: { modulusLength?: number; namedCurve?: string }) =>
    generateKeyPairSync(type as "rsa", options as { modulusLength: number })
      .publicKey.export({ type: "spki", format: "pem" })
      .toString();
  const check = (keys: Record<string, { key: string; algorithms: string[] }>) =>
    checkJwtKeys(parseConfig({ JWT_AUTH_KEYS: keys }, "f.json"), "f.json");

  it("accepts a shared secret for HS* and a public key of the algorithm's type and size", async () => {
    const rsa = pem("rsa", { modulusLength: 2048 });
    const ec = pem("ec", { namedCurve: "P-256" });
    await expect(
      check({
        "": { key: "a shared secret", algorithms: ["HS256", "HS512"] },
        rsa: { key: rsa, algorithms: ["RS256", "PS256"] },
        ec: { key: ec, algorithms: ["ES256"] },
      }),
    ).resolves.toBeUndefined();
  });

  it("refuses, naming the setting, a key no listed algorithm could verify with", async () => {
    await expect(
      check({
        zulip: { key: "-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----", algorithms: ["RS256"] },
      }),
    ).rejects.toThrow(/f\.json: 'JWT_AUTH_KEYS\.zulip': RS256 needs a PEM public key .*cannot be parsed/);
    await expect(check({ "": { key: "a shared secret", algorithms: ["ES256"] } })).rejects.toThrow(
      /'JWT_AUTH_KEYS\[""\]': ES256 needs a PEM public key/,
    );
    const rsa = pem("rsa", { modulusLength: 2048 });
    await expect(check({ sso: { key: rsa, algorithms: ["RS256", "HS256"] } })).rejects.toThrow(
      /'JWT_AUTH_KEYS\.sso': HS256 needs a shared secret, and 'key' is a PEM key/,
    );
    await expect(check({ sso: { key: rsa, algorithms: ["ES256"] } })).rejects.toThrow(
      /'JWT_AUTH_KEYS\.sso': jose cannot verify ES256 tokens with this key/,
    );
    await expect(check({ sso: { key: pem("rsa", { modulusLength: 1024 }), algorithms: ["RS256"] } })).rejects.toThrow(
      /RS256 requires key modulusLength to be 2048 bits/,
    );
    await expect(check({ sso: { key: pem("ec", { namedCurve: "P-256" }), algorithms: ["ES384"] } })).rejects.toThrow(
      /jose cannot verify ES384/,
    );
  });
});

describe("parley serve --config", () => {
  it("refuses to start on a JWT key that cannot be parsed, naming the setting, and creates nothing", () => {
    const dir = tempDir();
    const file = join(dir, "jwt.json");
    writeFileSync(
      file,
      JSON.stringify({
        JWT_AUTH_KEYS: {
          zulip: { key: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----", algorithms: ["RS256"] },
        },
      }),
    );
    const data = join(dir, "data");
    const run = spawnSync(process.execPath, [CLI, "serve", "--data", data, "--config", file, "--port", "0"], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`parley serve: ${file}: 'JWT_AUTH_KEYS.zulip': RS256 needs a PEM public key`);
    expect(existsSync(data)).toBe(false);
  });

  it("refuses to start on a bad key, naming it, and creates nothing", () => {
    const dir = tempDir();
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ EMAIL_PORT: 99999 }));
    const data = join(dir, "data");
    const run = spawnSync(process.execPath, [CLI, "serve", "--data", data, "--config", file, "--port", "0"], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("'EMAIL_PORT'");
    expect(run.stderr).toContain(file);
    expect(existsSync(data)).toBe(false);
  });

  it("uses EXTERNAL_HOST from the file for realm hosts and URLs", async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    const demo = spawnSync(process.execPath, [CLI, "demo", "--data", data, "--json"], {
      encoding: "utf8",
      timeout: 60_000,
    });
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
