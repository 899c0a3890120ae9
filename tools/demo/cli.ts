/**
 * @module tools/demo/cli
 * Helpers shared by the operator commands start, serve, realm, user and demo: telling
 * usage errors (exit 2) from failures (exit 1), reading roles, and finding realms and
 * data directories with messages that say what to do next. They live here rather
 * than in tools/args.ts because that module belongs to every command and these
 * conventions were introduced with these five; they can move there unchanged.
 */
import { existsSync } from "node:fs";
import { DataDirectoryLockedError, ROLE, type Realm, type Role, type Store } from "../../src/engine/index.js";
import { openStore, type OpenStoreOptions } from "../../src/index.js";

/** Exit code for a command line the operator has to fix (missing or bad option). */
export const USAGE_EXIT = 2;

/**
 * Runs the option-parsing step of a command. Anything it throws is a usage error:
 * printed with the command's usage text, and reported as null so that the caller
 * returns exit code 2 instead of letting the dispatcher report a failure (exit 1).
 */
export function parseOrUsage<T>(command: string, usage: string, parse: () => T): T | null {
  try {
    return parse();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`parley ${command}: ${message}\n\nusage: ${usage}`);
    return null;
  }
}

const ROLE_NAMES: Readonly<Record<string, Role>> = {
  owner: ROLE.OWNER,
  administrator: ROLE.ADMINISTRATOR,
  admin: ROLE.ADMINISTRATOR,
  moderator: ROLE.MODERATOR,
  member: ROLE.MEMBER,
  guest: ROLE.GUEST,
};

/** A role given as Zulip's number (100..600) or its name; anything else is a usage error. */
export function parseRole(text: string): Role {
  const lower = text.trim().toLowerCase();
  const byName = ROLE_NAMES[lower];
  if (byName !== undefined) return byName;
  const byNumber = (Object.values(ROLE) as number[]).find((r) => String(r) === lower);
  if (byNumber !== undefined) return byNumber as Role;
  throw new Error(
    `--role must be one of owner, administrator, moderator, member, guest (or 100, 200, 300, 400, 600), not '${text}'`,
  );
}

/** The role's name for human output. */
export function roleName(role: Role): string {
  return Object.entries(ROLE_NAMES).find(([name, r]) => r === role && name !== "admin")?.[0] ?? String(role);
}

/** How a subdomain reads in messages: '' is the default realm, which is easy to miss. */
export function describeSubdomain(subdomain: string): string {
  return subdomain === "" ? "'' (the default realm)" : `'${subdomain}'`;
}

/** The error every command gives for an unknown realm, with the command that fixes it. */
export function noSuchRealm(subdomain: string, dir: string): Error {
  return new Error(
    `no realm with subdomain '${subdomain}' in ${dir}; create it with parley realm create --data ${dir} --subdomain '${subdomain}' --name NAME --owner-email EMAIL`,
  );
}

/** The realm with this subdomain, or the error above. */
export function requireRealm(store: Store, subdomain: string, dir: string): Realm {
  const realm = store.findRealmBySubdomain(subdomain);
  if (!realm) throw noSuchRealm(subdomain, dir);
  return realm;
}

/**
 * Checks that a command which needs an existing realm has a data directory to look
 * in, before opening a store there would silently create an empty one.
 */
export function requireDataDir(dir: string, subdomain: string): void {
  if (!existsSync(dir)) throw noSuchRealm(subdomain, dir);
}

/**
 * Opens the store for `parley <command>`. The engine takes the directory's one-writer
 * lock, names this command to anyone refused, and explains who holds it; the CLI adds
 * its own way out.
 */
export function openForCommand(dir: string, command: string, options: OpenStoreOptions = {}): Store {
  try {
    return openStore(dir, { ...options, holder: `parley ${command}` });
  } catch (error) {
    if (error instanceof DataDirectoryLockedError)
      throw new Error(`${error.message}. Pass --data DIR to use another directory.`, { cause: error });
    throw error;
  }
}
