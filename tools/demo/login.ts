/**
 * @module tools/demo/login
 * demo-login.json in the data directory: which realm and email `parley start` shows
 * as the login. Only the email is kept, not the API key, so the file holds no secret
 * and a key changed later is still shown correctly (start looks the user up).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const DEMO_LOGIN_FILE = "demo-login.json";

export interface DemoLogin {
  readonly subdomain: string;
  readonly email: string;
}

/**
 * Records the demo login unless one is recorded already: the first demo in a
 * directory stays the one `start` logs you in to, even after more demo realms.
 */
export function rememberDemoLogin(dir: string, login: DemoLogin): boolean {
  const path = join(dir, DEMO_LOGIN_FILE);
  if (existsSync(path)) return false;
  writeFileSync(path, `${JSON.stringify(login, null, 2)}\n`);
  return true;
}

/** The recorded login, or null when there is none or it cannot be read. */
export function readDemoLogin(dir: string): DemoLogin | null {
  try {
    const value: unknown = JSON.parse(readFileSync(join(dir, DEMO_LOGIN_FILE), "utf8"));
    if (typeof value !== "object" || value === null) return null;
    const { subdomain, email } = value as Record<string, unknown>;
    return typeof subdomain === "string" && typeof email === "string" ? { subdomain, email } : null;
  } catch {
    return null;
  }
}
