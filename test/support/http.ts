/**
 * @module test/support/http
 * A real server on a free loopback port over a temporary store, plus a fetch helper
 * that speaks Zulip's form encoding and Basic auth.
 */
import { request as httpRequest } from "node:http";
import { expect } from "vitest";
import { fingerprint } from "./snapshot.js";
import { createServer, type ParleyServer, type ServerOptions } from "../../src/http/server.js";
import type { User } from "../../src/engine/types.js";
import type { OpenStoreOptions } from "../../src/index.js";
import { seedRealm, tempStore, type TempStore } from "./temp-store.js";

export interface TestServer {
  readonly t: TempStore;
  readonly base: string;
  readonly seed: ReturnType<typeof seedRealm>;
  readonly server: ParleyServer;
  call(
    user: User | null,
    method: string,
    path: string,
    params?: Record<string, unknown>,
    init?: { headers?: Record<string, string>; body?: string | FormData },
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  close(): void;
}

/** Form-encodes like Zulip clients: strings as-is, everything else as JSON text. */
export function encodeParams(params: Record<string, unknown>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined) form.set(k, typeof v === "string" ? v : JSON.stringify(v));
  return form;
}

export function basicAuth(user: User): string {
  return `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}`;
}

/** scrypt at a thirty-second of production cost: password tests stay fast; records carry their own parameters. */
export const TEST_SCRYPT_COST = { N: 1024, r: 8, p: 1 } as const;

export async function startServer(
  options: ServerOptions = {},
  storeOptions: OpenStoreOptions = {},
): Promise<TestServer> {
  const t = tempStore(storeOptions);
  const seed = seedRealm(t.store);
  const server = createServer(t.store, {
    rateLimit: false,
    logError: () => undefined,
    dataDir: t.dir,
    passwordHashCost: TEST_SCRYPT_COST,
    ...options,
  });
  const port = await server.listen(0, "127.0.0.1");
  const base = `http://127.0.0.1:${port}`;
  return {
    t,
    base,
    seed,
    server,
    async call(user, method, path, params = {}, init = {}) {
      const form = encodeParams(params);
      const headers: Record<string, string> = {
        ...(user ? { Authorization: basicAuth(t.store.getUser(user.id)) } : {}),
        ...init.headers,
      };
      const isQuery = method === "GET" || method === "DELETE" || method === "HEAD";
      const url = `${base}/api/v1${path}${isQuery && form.size > 0 ? `?${form}` : ""}`;
      const body = init.body ?? (isQuery ? undefined : form);
      const response = await fetch(url, { method, headers, body });
      const text = await response.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = { raw: text };
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    close() {
      server.close();
      t.cleanup();
    },
  };
}

/** A request with full control of headers (fetch forbids setting Host). */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${base}/api/v1${path}`);
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers: { ...headers, "Content-Length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Asserts a 4xx with Zulip's code and message, and that nothing in the store changed. */
export async function expectRejectedUnchanged(
  server: TestServer,
  call: () => Promise<{ status: number; body: Record<string, unknown> }>,
  status: number,
  code: string,
  msg: string | RegExp,
): Promise<Record<string, unknown>> {
  const before = fingerprint(server.t.store);
  const r = await call();
  expect(r.status).toBe(status);
  expect(r.body["result"]).toBe("error");
  expect(r.body["code"]).toBe(code);
  if (typeof msg === "string") expect(r.body["msg"]).toBe(msg);
  else expect(String(r.body["msg"])).toMatch(msg);
  expect(fingerprint(server.t.store)).toBe(before);
  return r.body;
}
