/**
 * @module config/secrets
 * Secrets the server makes for itself, kept in DATA/secrets.json (Zulip keeps its own
 * in /etc/zulip/zulip-secrets.conf, made by generate_secrets.py at install). A
 * secret is generated on first use and written owner-readable only; `parley backup`
 * carries the file, since messages already sent depend on it.
 */
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "./load.js";

export const SECRETS_FILE = "secrets.json";

function readSecrets(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(
      `${path}: not valid JSON (${reason}); restore it from a backup, or delete it to generate new secrets ` +
        "(external images in messages already sent then stop showing)",
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`${path}: expected a JSON object of secrets`);
  }
  const secrets: Record<string, string> = {};
  for (const [name, secret] of Object.entries(value)) {
    if (typeof secret !== "string" || secret === "")
      throw new ConfigError(`${path}: '${name}' must be a non-empty string`);
    secrets[name] = secret;
  }
  return secrets;
}

/** The secret `name` of the data directory, generated (32 random bytes, hex) and saved if it has none. */
export function dataDirSecret(dataDir: string, name: string): string {
  const path = join(dataDir, SECRETS_FILE);
  const secrets = readSecrets(path);
  const existing = secrets[name];
  if (existing !== undefined) return existing;
  const secret = randomBytes(32).toString("hex");
  mkdirSync(dataDir, { recursive: true });
  // Written whole and renamed into place, so a crash never leaves a half-written file.
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(temporary, "wx", 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ ...secrets, [name]: secret }, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  return secret;
}

/** The camo key: CAMO_KEY from the configuration, else the data directory's own. */
export function camoKeyFor(config: { readonly CAMO_KEY?: string | undefined }, dataDir: string): string {
  return config.CAMO_KEY ?? dataDirSecret(dataDir, "camo_key");
}
