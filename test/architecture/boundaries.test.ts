/**
 * The engine is sealed: outside code (the HTTP layer, the realtime layer, the
 * operator commands) reaches it only through src/engine/index.ts, and the engine
 * never imports HTTP or realtime code. And the layering of src/ as a whole: every
 * arrow between its top-level folders is in LAYER_ARROWS, so a new one (an arrow
 * running back up, such as realtime importing http) fails here until it is decided.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Every relative import of a file, resolved to a path under the project root. */
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

describe("engine boundary", () => {
  it("src/http, src/realtime and tools/commands import the engine only through src/engine/index.ts", () => {
    const offenders: string[] = [];
    for (const dir of ["src/http", "src/realtime", "tools/commands"]) {
      let files: string[] = [];
      try {
        files = sources(join(ROOT, dir));
      } catch {
        continue;
      }
      for (const file of files) {
        for (const target of imports(file)) {
          if (target.startsWith("src/engine/") && target !== "src/engine/index.ts")
            offenders.push(`${relative(ROOT, file)} -> ${target}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the engine imports neither HTTP, realtime nor uWebSockets.js", () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, "src/engine"))) {
      const text = readFileSync(file, "utf8");
      if (/from\s+["']uWebSockets\.js["']/.test(text)) offenders.push(`${relative(ROOT, file)} -> uWebSockets.js`);
      for (const target of imports(file))
        if (target.startsWith("src/http/") || target.startsWith("src/realtime/"))
          offenders.push(`${relative(ROOT, file)} -> ${target}`);
    }
    expect(offenders).toEqual([]);
  });

  it("the Store exposes no state property", async () => {
    const { openStore } = await import("../../src/index.js");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "parley-boundary-"));
    const store = openStore(dir, { noSync: true });
    try {
      expect("state" in store).toBe(false);
      expect(Object.keys(store)).toEqual([]);
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The arrows allowed between src/'s top-level folders, lowest layer first:
 * generated and emoji (data) < engine < markdown, config < wire (Zulip's shapes) <
 * realtime, uploads, push, mail, outgoing-webhooks, scheduler, external-content (services) < http.
 * src/index.ts (the package entry: the engine with Markdown) sits above them all;
 * tools/ may import anything (it is the operator's composition), nothing in src/
 * imports tools/.
 */
const LAYER_ARROWS: Readonly<Record<string, readonly string[]>> = {
  generated: [],
  emoji: ["generated"],
  engine: ["emoji", "generated"],
  markdown: ["engine", "emoji"],
  config: [],
  // The image proxy (camo): signing, address policy, fetch; node only.
  "external-content": [],
  wire: ["engine", "emoji"],
  realtime: ["engine", "wire"],
  uploads: ["engine"],
  push: ["engine", "wire", "realtime"],
  mail: ["engine", "config", "realtime"],
  // Calls to outgoing webhook bots: payloads in Zulip's shapes, the proxy's address guard.
  "outgoing-webhooks": ["engine", "wire", "realtime", "external-content"],
  scheduler: ["engine", "realtime", "uploads"],
  // Organization data exports: the engine's tables written as a tarball, uploads copied in.
  exports: ["engine", "uploads"],
  http: [
    "engine",
    "config",
    "emoji",
    "markdown",
    "wire",
    "realtime",
    "uploads",
    "push",
    "mail",
    "scheduler",
    "external-content",
    "exports",
  ],
  // `parley serve --workers`: the supervisor and its messages (the roles are composed in src/serve-workers.ts).
  workers: [],
  // `parley serve --cluster`: the replicated log and lease in NATS (the node is composed in src/serve-cluster.ts).
  cluster: ["engine"],
};

describe("layers of src/", () => {
  it("every import between src/'s folders follows an allowed arrow", () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, "src"))) {
      const from = relative(ROOT, file).split("/");
      const fromLayer = from.length > 2 ? from[1]! : "";
      for (const target of imports(file)) {
        if (!target.startsWith("src/")) {
          if (target.startsWith("tools/")) offenders.push(`${relative(ROOT, file)} -> ${target}`);
          continue;
        }
        const toLayer = target.split("/")[1]!;
        if (toLayer === fromLayer || fromLayer === "") continue;
        const allowed = LAYER_ARROWS[fromLayer];
        if (allowed === undefined)
          offenders.push(`${relative(ROOT, file)}: folder src/${fromLayer} is not in LAYER_ARROWS`);
        else if (!allowed.includes(toLayer)) offenders.push(`${relative(ROOT, file)} -> ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("nothing outside src/http imports it (realtime, push and mail use src/wire for Zulip's shapes)", () => {
    for (const [layer, arrows] of Object.entries(LAYER_ARROWS))
      if (layer !== "http") expect(arrows, layer).not.toContain("http");
  });
});

/** The strongly connected parts of more than one file in `graph` (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) out.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("the engine's import graph", () => {
  it("has no circle, type-only imports included (a new entity or rule goes below what uses it)", () => {
    const graph = new Map<string, string[]>();
    for (const file of sources(join(ROOT, "src/engine"))) {
      graph.set(
        relative(ROOT, file),
        imports(file).filter((t) => t.startsWith("src/engine/")),
      );
    }
    expect(circles(graph)).toEqual([]);
  });
});

describe("the composition root", () => {
  it("builds the background workers in src/server.ts only (the HTTP server makes its own hub and bouncer client only when not handed one)", () => {
    const built =
      /new (BouncerClient|Scheduler|PushSender|MailSender|WebhookSender|PresenceFlusher|UploadsCleanup|EventHub)\(/g;
    const allowed: Readonly<Record<string, readonly string[]>> = {
      "src/server.ts": [
        "BouncerClient",
        "Scheduler",
        "PushSender",
        "MailSender",
        "WebhookSender",
        "PresenceFlusher",
        "UploadsCleanup",
      ],
      "src/http/server.ts": ["BouncerClient", "EventHub"],
    };
    const offenders: string[] = [];
    for (const dir of ["src", "tools"]) {
      for (const file of sources(join(ROOT, dir))) {
        const path = relative(ROOT, file);
        for (const match of readFileSync(file, "utf8").matchAll(built))
          if (!(allowed[path] ?? []).includes(match[1]!)) offenders.push(`${path}: new ${match[1]!}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
