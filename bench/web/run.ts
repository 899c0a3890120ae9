/**
 * @module bench/web/run
 * The web client's load and narrow-switch times, measured in headless Chromium on a
 * generated dataset (`npm run build && node dist/bench/web/run.js [--scale 100k]
 * [--data DIR]`). The client records them itself (window.parleyTimings): the first view
 * on screen (ms since navigation start: bundle, register, first view), and each narrow
 * switch from the click to the list on screen plus one frame. Writes
 * bench/results/web-client-<scale>.json. Figures only; no test asserts a time.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium, type Page } from "playwright-core";
import { openStore } from "../../src/index.js";
import { createServer } from "../../src/http/server.js";
import { csrfTokenFor } from "../../src/http/session.js";
import { chooseDataset, ensureDataset, workingCopy } from "../dataset.js";

interface Timings {
  firstView: number | null;
  bootToView: number | null;
  narrowSwitches: number[];
  switchLog: { view: string; ms: number }[];
  phases: Record<string, number>;
}

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const LOADS = 5;

function stats(xs: readonly number[]): { n: number; p50: number; max: number; min: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => Math.round((s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0) * 10) / 10;
  return {
    n: s.length,
    p50: at(0.5),
    max: Math.round((s[s.length - 1] ?? 0) * 10) / 10,
    min: Math.round((s[0] ?? 0) * 10) / 10,
  };
}

async function timings(page: Page): Promise<Timings> {
  return (await page.evaluate("window.parleyTimings")) as Timings;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scale: { type: "string" }, data: { type: "string" } } });
  const log = (line: string) => console.log(line);
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, log);
  const work = workingCopy(choice.dir);
  const store = openStore(work.dir);
  const user = store.getUser(manifest.subjects.main);
  const server = createServer(store, { rateLimit: false, authFailureLimit: false, logError: () => undefined });
  const port = await server.listen(0);
  const base = `http://127.0.0.1:${port}`;
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
  try {
    // bypassCSP: waitForFunction evaluates strings, which the page's policy forbids.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    // A session cookie already set, as after a login: each load goes straight to the client.
    const token = store.createWebSession(user.id);
    await context.addCookies([
      { name: "sessionid", value: token, url: base, httpOnly: true, sameSite: "Lax" },
      { name: "csrftoken", value: csrfTokenFor(token), url: base, sameSite: "Lax" },
    ]);
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    const loads: number[] = [];
    const phases: Record<string, number[]> = {};
    const registerMs: number[] = [];
    let registerBytes = 0;
    for (let i = 0; i < LOADS; i++) {
      await (i === 0 ? page.goto(base) : page.reload());
      await page.waitForSelector("body[data-ready='1']", { state: "attached" });
      const t = await timings(page);
      loads.push(t.firstView ?? Number.NaN);
      for (const [k, v] of Object.entries(t.phases)) (phases[k] ??= []).push(v);
      const reg = (await page.evaluate(
        "performance.getEntriesByType('resource').filter((e) => e.name.includes('/register')).map((e) => [e.duration, e.encodedBodySize])",
      )) as [number, number][];
      for (const [ms, bytes] of reg) {
        registerMs.push(ms);
        registerBytes = bytes;
      }
    }
    // Narrow switches: every channel, the first topics of the open one, the DM
    // conversations, the views; twice round.
    const selectors = (await page.evaluate(
      "[...document.querySelectorAll('.sidebar button[data-key]')].map((b) => b.dataset.key)",
    )) as string[];
    const targets = selectors.filter((k) => !k.startsWith("topic:")).slice(0, 30);
    for (let round = 0; round < 2; round++) {
      for (const key of targets) {
        const before = (await timings(page)).narrowSwitches.length;
        await page.click(`.sidebar button[data-key=${JSON.stringify(key)}]`);
        if (key !== "view:inbox") await page.waitForFunction(`window.parleyTimings.narrowSwitches.length > ${before}`);
        if (round === 0 && key.startsWith("channel:") && (await page.locator(".sidebar button.topic").count()) > 0) {
          const n = (await timings(page)).narrowSwitches.length;
          // A locator, not a handle: the sidebar is redrawn whole as reads land.
          await page.locator(".sidebar button.topic").first().click();
          await page.waitForFunction(`window.parleyTimings.narrowSwitches.length > ${n}`);
        }
      }
    }
    const final = await timings(page);
    const switches = final.narrowSwitches;
    const slowest = [...final.switchLog]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((s) => ({ view: s.view, ms: Math.round(s.ms) }));
    const rendered = (await page.evaluate("document.querySelectorAll('li.msg').length")) as number;
    const domNodes = (await page.evaluate("document.getElementsByTagName('*').length")) as number;
    const result = {
      dataset: {
        dir: choice.dir,
        messages: manifest.scale.messages,
        users: manifest.scale.users,
        channels: manifest.scale.channels,
      },
      user: user.email,
      machine: "shared 2-core machine, other work running",
      initialLoadMs: stats(loads),
      registerMs: stats(registerMs),
      firstViewPhasesMs: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, stats(v)])),
      registerBytes,
      narrowSwitchMs: stats(switches),
      slowestSwitches: slowest,
      renderedMessagesAtEnd: rendered,
      domNodesAtEnd: domNodes,
    };
    log(JSON.stringify(result, null, 2));
    mkdirSync(join("bench", "results"), { recursive: true });
    writeFileSync(join("bench", "results", `web-client-${choice.label}.json`), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await browser.close();
    server.close();
    store.close();
    work.cleanup();
  }
}

await main();
