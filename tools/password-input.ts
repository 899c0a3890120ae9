/**
 * @module tools/password-input
 * Passwords for the CLI, never as an argument value (which `ps` and shell history
 * would show): `--password` reads the first line of standard input, `--password-file
 * FILE` the first line of FILE. A trailing "\r" is dropped; nothing else is trimmed.
 */
import { readFileSync } from "node:fs";
import type { Parsed } from "./args.js";

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/**
 * The password named by the boolean flag `stdinFlag` or the path option `fileFlag`,
 * or undefined when neither is given. Both at once, or an empty password, is an error.
 */
export function passwordOption(parsed: Parsed, stdinFlag: string, fileFlag: string): string | undefined {
  const fromStdin = parsed.values[stdinFlag] === true;
  const file = parsed.values[fileFlag];
  if (fromStdin && typeof file === "string") throw new Error(`give --${stdinFlag} or --${fileFlag}, not both`);
  if (!fromStdin && typeof file !== "string") return undefined;
  if (fromStdin && process.stdin.isTTY) process.stderr.write("password (then Enter and Ctrl-D): ");
  const password = firstLine(readFileSync(fromStdin ? 0 : (file as string), "utf8"));
  if (password === "") throw new Error(fromStdin ? "no password on standard input" : `no password in ${String(file)}`);
  return password;
}
