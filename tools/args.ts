/**
 * @module tools/args
 * A small, strict option parser for the CLI: --name value, --flag, and positionals.
 * Unknown options are errors that name the option, so operators see typos at once.
 */
import { parseArgs } from "node:util";

export interface OptionSpec {
  readonly [name: string]: { readonly type: "string" | "boolean"; readonly default?: string | boolean };
}

export interface Parsed {
  readonly values: Record<string, string | boolean | undefined>;
  readonly positionals: string[];
}

export function parseOptions(argv: string[], options: OptionSpec): Parsed {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...options, json: { type: "boolean" }, data: { type: "string", default: "./data" } },
    allowPositionals: true,
    strict: true,
  });
  return { values: values as Record<string, string | boolean | undefined>, positionals };
}

/** A required string option, or an error telling the operator what to pass. */
export function requireString(parsed: Parsed, name: string): string {
  const value = parsed.values[name];
  if (typeof value !== "string") throw new Error(`missing --${name}`);
  return value;
}

/** An optional integer option within bounds. */
export function intOption(
  parsed: Parsed,
  name: string,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = parsed.values[name];
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== "string" || !/^-?\d+$/.test(value) || n < min || n > max)
    throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** Prints `data` as JSON with --json, else the human text. */
export function output(parsed: Parsed, data: unknown, human: string): void {
  console.log(parsed.values["json"] ? JSON.stringify(data, null, 2) : human);
}
