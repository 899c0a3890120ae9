/**
 * The embedding example (examples/embed-engine.ts) runs, says what it should, uses
 * only the engine's public entry point, and is the code the README shows.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runExample } from "../../examples/embed-engine.js";

const SOURCE = readFileSync(new URL("../../examples/embed-engine.ts", import.meta.url), "utf8");

describe("examples/embed-engine", () => {
  it("opens a store without HTTP, sends, narrows, marks read and follows every write's change set and events", () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-example-test-"));
    try {
      const { lines, eventTypes } = runExample(dir);
      expect(lines.filter((l) => l.startsWith("event: message"))).toHaveLength(2);
      const seen = lines.filter((l) => l.startsWith("ann sees"));
      // "plan" finds "Planning" (stemmed), in the channel only (not the DM).
      expect(seen).toHaveLength(1);
      expect(seen[0]).toContain("<strong>launch</strong>");
      expect(seen[0]).toContain("[mentioned]");
      expect(lines).toContain('"launches" matches message 1: true');
      expect(lines).toContain("ann's unread before: 2");
      expect(lines).toContain("ann's unread after: 0");
      expect(eventTypes).toContain("update_message_flags");
      // The change sets name each new message and the reader's flag change.
      expect(lines).toContain("change: message 1 added");
      expect(lines).toContain("change: message 2 added");
      expect(lines.some((l) => /^change: flags of user \d+ on 1,2$/.test(l))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("imports nothing of parley but the package's entry point", () => {
    const imports = [...SOURCE.matchAll(/from "([^"]+)"/g)].map((m) => m[1]!);
    expect(imports.filter((i) => i.startsWith("."))).toEqual(["../src/index.js"]);
  });

  it("is the code the README shows", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const shown = /<!-- example:embed-engine -->\n```ts\n([\s\S]*?)```\n/.exec(readme);
    expect(shown, "README.md lacks the example block").not.toBeNull();
    expect(shown![1]).toBe(SOURCE);
  });

  it("runs as a program from the build", () => {
    const built = join(process.cwd(), "dist/examples/embed-engine.js");
    const out = execFileSync(process.execPath, [built], { encoding: "utf8" });
    expect(out).toContain("ann's unread after: 0");
  });
});
