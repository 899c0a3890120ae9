/**
 * One error registry: every code of the hierarchy is mapped (the Record type makes
 * that a compile error otherwise) and raised somewhere (no dead codes), and the HTTP
 * layer's own failures — unknown routes, wrong methods, bad bodies, rate limits — come
 * out through it with Zulip's shapes.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_MAP } from "../../src/http/error-map.js";
import { startServer, type TestServer } from "../support/http.js";

const ROOT = resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : [];
  });
}

describe("error registry", () => {
  it("every code is raised somewhere: as a literal, or through an error class that is instantiated", () => {
    const errorFiles = [join(ROOT, "src/engine/errors.ts"), join(ROOT, "src/http/errors.ts")];
    const registry = join(ROOT, "src/http/error-map.ts");
    const classCodes = new Map<string, string[]>();
    for (const file of errorFiles) {
      const text = readFileSync(file, "utf8");
      for (const block of text.split(/\n(?=export class )/)) {
        const name = /^export class (\w+)/.exec(block)?.[1];
        if (name)
          classCodes.set(
            name,
            [...block.matchAll(/"([A-Z_]+)"/g)].map((m) => m[1]!),
          );
      }
    }
    const raised = new Set<string>();
    for (const file of sources(join(ROOT, "src"))) {
      if (file === registry) continue;
      const text = readFileSync(file, "utf8");
      for (const [name, codes] of classCodes)
        if (new RegExp(`new ${name}\\(`).test(text)) for (const c of codes) raised.add(c);
      if (errorFiles.includes(file)) continue;
      for (const m of text.matchAll(/"([A-Z][A-Z_]+)"/g)) raised.add(m[1]!);
    }
    const dead = Object.keys(ERROR_MAP).filter((code) => !raised.has(code));
    expect(dead).toEqual([]);
  });

  it("maps statuses to Zulip's classes", () => {
    for (const [code, { status }] of Object.entries(ERROR_MAP))
      expect([200, 400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 502, 503], code).toContain(status);
  });
});

describe("the HTTP layer's own errors go through the registry", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ rateLimit: { requests: 2, windowSeconds: 60 } });
  });
  afterAll(() => s.close());

  it("unknown path, wrong method, unsupported body, rate limit", async () => {
    const unknown = await s.call(s.seed.alice, "GET", "/no/such/thing");
    expect([unknown.status, unknown.body]).toEqual([404, { result: "error", msg: "Not Found", code: "BAD_REQUEST" }]);
    const wrong = await s.call(s.seed.alice, "PUT", "/messages");
    expect(wrong.status).toBe(405);
    expect(wrong.body).toEqual({ result: "error", msg: "Method Not Allowed", allowed_methods: ["GET", "POST"] });
    expect(wrong.headers.get("allow")).toBe("GET, POST");
    const bad = await s.call(
      s.seed.bob,
      "POST",
      "/messages",
      {},
      { headers: { "Content-Type": "text/csv" }, body: "a,b" },
    );
    expect([bad.status, bad.body["code"], bad.body["msg"]]).toEqual([
      415,
      "BAD_REQUEST",
      "Unsupported content type text/csv",
    ]);
    let limited = await s.call(s.seed.owner, "GET", "/users/me");
    for (let i = 0; i < 3 && limited.status !== 429; i++) limited = await s.call(s.seed.owner, "GET", "/users/me");
    expect(limited.status).toBe(429);
    expect(limited.body["code"]).toBe("RATE_LIMIT_HIT");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
