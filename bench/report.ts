/**
 * @module bench/report
 * Markdown tables and hand-written SVG bar charts for benchmark results.
 */
import { writeFileSync } from "node:fs";
import type { Timing } from "./harness.js";

export interface ComparedResult {
  readonly name: string;
  readonly group: string;
  readonly description: string;
  readonly ours: Timing;
  /** Narrows only: the engine's window without loading records (IDs + flags). */
  readonly oursWindow: Timing | null;
  /** Narrows only: what the HTTP server does (IDs + flags + ready message JSON). */
  readonly oursServe: Timing | null;
  /** peer median / server-path median (narrows). */
  readonly serveRatio: number | null;
  readonly peer: Timing | null;
  /** peer median / ours median. */
  readonly ratio: number | null;
  readonly target: string;
  readonly targetMet: boolean | null;
  readonly idsMatch: boolean | null;
  readonly mismatch: string | null;
  readonly resultSize: number;
}

const fmt = (ms: number) =>
  ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms >= 0.01 ? ms.toFixed(3) : ms.toFixed(4);

export function markdownTable(results: readonly ComparedResult[]): string {
  const lines = [
    "| workload | group | result size | ours (records) ms | ours IDs+flags ms | ours server path ms | peer median ms | peer/ours (records) | peer/server path | target | met | same IDs |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
  ];
  for (const r of results) {
    lines.push(
      `| ${r.name} | ${r.group} | ${r.resultSize} | ${fmt(r.ours.medianMs)} | ${r.oursWindow ? fmt(r.oursWindow.medianMs) : "—"} | ${r.oursServe ? fmt(r.oursServe.medianMs) : "—"} | ${r.peer ? fmt(r.peer.medianMs) : "—"} | ${r.ratio === null ? "—" : r.ratio.toFixed(1) + "×"} | ${r.serveRatio === null ? "—" : r.serveRatio.toFixed(1) + "×"} | ${r.target} | ${r.targetMet === null ? "—" : r.targetMet ? "yes" : "**no**"} | ${r.idsMatch === null ? "—" : r.idsMatch ? "yes" : "**NO**"} |`,
    );
  }
  return lines.join("\n");
}

/** A horizontal bar chart (log scale) of ours vs peer per workload of one group. */
export function barChartSvg(title: string, results: readonly ComparedResult[]): string {
  const rowH = 46;
  const left = 260;
  const width = 1040;
  const plotW = width - left - 240; // room for the value labels right of the longest bar
  const top = 40;
  const height = top + results.length * rowH + 40;
  const values = results.flatMap((r) => [r.ours.medianMs, r.peer?.medianMs ?? r.ours.medianMs]).filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...values))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values))));
  const x = (v: number) =>
    left + (plotW * (Math.log10(Math.max(v, lo)) - Math.log10(lo))) / Math.max(1e-9, Math.log10(hi) - Math.log10(lo));
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(title)} (median ms, log scale; shorter is faster)</text>`,
  ];
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    parts.push(
      `<line x1="${x(d)}" y1="${top - 5}" x2="${x(d)}" y2="${height - 30}" stroke="#ddd"/>`,
      `<text x="${x(d)}" y="${height - 15}" text-anchor="middle" fill="#666">${fmt(d)}</text>`,
    );
  }
  results.forEach((r, i) => {
    const y = top + i * rowH;
    parts.push(`<text x="${left - 8}" y="${y + 20}" text-anchor="end">${esc(r.name)}</text>`);
    parts.push(
      `<rect x="${left}" y="${y + 4}" width="${Math.max(1, x(r.ours.medianMs) - left)}" height="16" fill="#2b8a3e"/>`,
      `<text x="${x(r.ours.medianMs) + 4}" y="${y + 16}" fill="#2b8a3e">parley ${fmt(r.ours.medianMs)}</text>`,
    );
    if (r.peer) {
      parts.push(
        `<rect x="${left}" y="${y + 22}" width="${Math.max(1, x(r.peer.medianMs) - left)}" height="16" fill="#1c5fb8"/>`,
        `<text x="${x(r.peer.medianMs) + 4}" y="${y + 34}" fill="#1c5fb8">PostgreSQL ${fmt(r.peer.medianMs)}${r.ratio ? ` (${r.ratio.toFixed(1)}×)` : ""}</text>`,
      );
    }
  });
  parts.push("</svg>");
  return parts.join("\n");
}

export function writeCharts(prefix: string, results: readonly ComparedResult[]): string[] {
  const files: string[] = [];
  const groups = [...new Set(results.map((r) => r.group))];
  for (const group of groups) {
    const file = `${prefix}-${group}.svg`;
    writeFileSync(
      file,
      barChartSvg(
        `${group} workloads`,
        results.filter((r) => r.group === group),
      ),
    );
    files.push(file);
  }
  return files;
}
