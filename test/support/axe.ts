/**
 * @module test/support/axe
 * axe-core (from npm) injected into a page in Chromium: the accessibility violations of
 * impact serious or critical in the page as it is now.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface Violation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: string[];
}

export async function seriousViolations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(AXE);
  const all = await page.evaluate<Violation[]>(`
    axe.run(document, { resultTypes: ["violations"] }).then((r) =>
      r.violations.map((v) => ({
        id: v.id,
        impact: v.impact ?? null,
        help: v.help,
        nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
      })),
    )
  `);
  return all.filter((v) => v.impact === "serious" || v.impact === "critical");
}
