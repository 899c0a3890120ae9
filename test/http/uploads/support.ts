/**
 * @module test/http/uploads/support
 * Helpers for the upload tests: multipart uploads with fetch, raw GETs with any Host
 * and headers (fetch forbids setting Host), and the files left under DATA/uploads.
 */
import { readdirSync, statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join, relative } from "node:path";
import type { User } from "../../../src/engine/index.js";
import { basicAuth, type TestServer } from "../../support/http.js";

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  json(): Record<string, unknown>;
}

/** A request outside fetch's rules: any Host, any path bytes, any headers. */
export function raw(
  s: TestServer,
  method: string,
  path: string,
  options: { user?: User | null; host?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<RawAnswer> {
  const url = new URL(s.base);
  const headers: Record<string, string> = { ...options.headers };
  if (options.user) headers["Authorization"] = basicAuth(s.t.store.getUser(options.user.id));
  if (options.host) headers["Host"] = options.host;
  if (options.body) headers["Content-Length"] = String(options.body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          json: () => JSON.parse(body.toString("utf8")) as Record<string, unknown>,
        });
      });
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** POST /api/v1/user_uploads with the given files as one multipart body. */
export async function upload(
  s: TestServer,
  user: User,
  files: readonly { name: string; data: Buffer | string; type?: string }[],
  field = "file",
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  files.forEach((f, i) =>
    form.append(
      files.length > 1 ? `${field}${i}` : field,
      new Blob([f.data], f.type === undefined ? {} : { type: f.type }),
      f.name,
    ),
  );
  return s.call(user, "POST", "/user_uploads", {}, { body: form });
}

/** Every file under DATA/uploads, relative to it. */
export function filesOnDisk(s: TestServer): string[] {
  const root = join(s.t.dir, "uploads");
  const out: string[] = [];
  const walk = (dir: string) => {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

/** Deterministic bytes (not all one value, so an offset mistake shows). */
export function bytes(n: number, seed = 1): Buffer {
  const out = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
