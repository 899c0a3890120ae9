/** The data directory's own secrets (DATA/secrets.json): the camo key is made once and kept. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { camoKeyFor, ConfigError, DEFAULT_CONFIG, parseConfig, SECRETS_FILE } from "../../src/config/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "parley-secrets-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("camo key", () => {
  it("is generated on first use, readable by the owner only, and the same afterwards", () => {
    const data = join(dir, "data");
    const key = camoKeyFor(DEFAULT_CONFIG, data);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(data, SECRETS_FILE)).mode & 0o777).toBe(0o600);
    expect(camoKeyFor(DEFAULT_CONFIG, data)).toBe(key);
    expect(JSON.parse(readFileSync(join(data, SECRETS_FILE), "utf8"))).toEqual({ camo_key: key });
  });

  it("CAMO_KEY in the configuration wins, and nothing is written", () => {
    const config = parseConfig({ CAMO_KEY: "an operator-chosen camo key" }, "test");
    expect(camoKeyFor(config, dir)).toBe("an operator-chosen camo key");
    expect(() => statSync(join(dir, SECRETS_FILE))).toThrow();
    expect(() => parseConfig({ CAMO_KEY: "short" }, "test")).toThrow(/CAMO_KEY/);
  });

  it("a damaged secrets file stops the server with what to do, instead of a new key", () => {
    writeFileSync(join(dir, SECRETS_FILE), "{not json");
    expect(() => camoKeyFor(DEFAULT_CONFIG, dir)).toThrow(ConfigError);
    expect(() => camoKeyFor(DEFAULT_CONFIG, dir)).toThrow(/restore it from a backup/);
    writeFileSync(join(dir, SECRETS_FILE), JSON.stringify({ camo_key: 5 }));
    expect(() => camoKeyFor(DEFAULT_CONFIG, dir)).toThrow(/'camo_key' must be a non-empty string/);
  });
});
