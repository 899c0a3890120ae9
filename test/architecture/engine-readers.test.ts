/**
 * Queries and the narrow engine read the store through the narrow read interfaces of
 * src/engine/directory.ts (AccessReader, NarrowReader, UnreadReader, ListingReader...),
 * never through the whole StoreState: a module here that imports src/engine/state.ts
 * (or internal.ts, which hands the state out) fails, unless it is listed below with
 * the reason it cannot do without.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** The folders whose modules read through the interfaces. */
const READER_DIRS = ["src/engine/queries", "src/engine/narrow"];

/** The modules that hand out the whole state. */
const STATE_MODULES = ["src/engine/state.ts", "src/engine/internal.ts"];

/** Module -> why it still imports the state. None today. */
const EXCEPTIONS: Readonly<Record<string, string>> = {};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Every relative import of a file (type-only ones and import() types included), as a path from the root. */
function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const match of text.matchAll(
    /(?:import|export)[^"']*?from\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g,
  )) {
    const spec = match[1] ?? match[2]!;
    out.push(relative(ROOT, resolve(dirname(file), spec)).replace(/\.js$/, ".ts"));
  }
  return out;
}

/** `file -> state module` for every import of the state from the reader folders. */
function stateImports(): string[] {
  const found: string[] = [];
  for (const dir of READER_DIRS)
    for (const file of sources(join(ROOT, dir)))
      for (const target of imports(file))
        if (STATE_MODULES.includes(target)) found.push(`${relative(ROOT, file)} -> ${target}`);
  return found;
}

describe("engine readers", () => {
  it("queries and the narrow engine do not import StoreState (only the listed exceptions)", () => {
    const offenders = stateImports().filter((edge) => !(edge.split(" -> ")[0]! in EXCEPTIONS));
    expect(offenders).toEqual([]);
  });

  it("every listed exception still imports the state (a stale entry is removed)", () => {
    const importers = new Set(stateImports().map((edge) => edge.split(" -> ")[0]!));
    expect(Object.keys(EXCEPTIONS).filter((file) => !importers.has(file))).toEqual([]);
  });

  it("the scan sees an import of the state where there is one", () => {
    // The import pattern, checked on a module known to import the state (so a pattern
    // that matched nothing would not pass the test above vacuously).
    expect(imports(join(ROOT, "src/engine/received.ts"))).toContain("src/engine/state.ts");
  });
});
