/**
 * @module config/load
 * Reads and validates the configuration file at start. Any problem stops the server
 * with a message that names the file and the key, because a server running on a
 * half-understood configuration is worse than one that does not start.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_SCHEMA, DEFAULT_CONFIG, type ServerConfig } from "./schema.js";

/** The file `parley serve` reads when --config is not given, if it exists. */
export const DEFAULT_CONFIG_FILE = "parley.json";

export class ConfigError extends Error {}

/** Validates an already-parsed configuration object; `source` names it in errors. */
export function parseConfig(value: unknown, source: string): ServerConfig {
  const result = CONFIG_SCHEMA.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    if (issue.code === "unrecognized_keys")
      return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `'${k}'`).join(", ")} (keys are Zulip's setting names; see README "Configuration")`;
    const key = issue.path.map(String).join(".");
    return key === "" ? issue.message : `'${key}': ${issue.message}`;
  });
  throw new ConfigError(`${source}: ${problems.join("; ")}`);
}

/** Reads a JSON configuration file. */
export function loadConfigFile(path: string): ServerConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`${path}: cannot read the configuration file (${code ?? String(error)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConfigError(`${path}: expected a JSON object of settings`);
  return parseConfig(value, path);
}

/**
 * The configuration for a server on `dataDir`: the file given, else DATA/parley.json
 * when it exists, else Zulip's defaults. Returns where it came from, for the log.
 */
export function resolveConfig(
  explicitPath: string | undefined,
  dataDir: string,
): { config: ServerConfig; source: string | null } {
  if (explicitPath !== undefined) return { config: loadConfigFile(explicitPath), source: explicitPath };
  const implicit = join(dataDir, DEFAULT_CONFIG_FILE);
  if (existsSync(implicit)) return { config: loadConfigFile(implicit), source: implicit };
  return { config: DEFAULT_CONFIG, source: null };
}
