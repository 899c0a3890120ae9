/**
 * @module http/static-files
 * The web client's files (dist/web, built by tools/build-web.ts), served at `/` outside
 * /api/v1 without authentication. The directory is read once, on the first request, into
 * a map keyed by file name; a request is answered only when its path is exactly "/" +
 * one of those names, so no path (`..`, encoded slashes, anything) can reach another file.
 * Names carrying a content hash (app-HASH.js) are cached for good; index.html is
 * revalidated by ETag, so a new build is picked up on the next load after a restart.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Reply } from "./respond.js";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".ttf": "font/ttf",
};
/** esbuild's [name]-[hash] file names: the content can never change under them. */
const HASHED = /-[A-Z0-9]{8}(\.[a-z0-9]+)+$/;
const IMMUTABLE = "public, max-age=31536000, immutable";
/**
 * Message HTML is inserted as HTML (it is the server's rendering); the policy keeps any
 * script out of the page even if some markup slipped through. Images come from this
 * server only: external images in messages are rendered as /external_content/ URLs
 * (the image proxy), so a reader's browser never contacts a sender's host, and a
 * direct external URL (in HTML stored before the proxy existed) is not loaded. Style
 * attributes are allowed: the server's KaTeX output sizes its boxes with them (a style
 * attribute runs no script).
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
  readonly headers: readonly (readonly [string, string])[];
}

/** dist/web of the package this module belongs to (found by walking up to package.json). */
export function defaultWebRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return join(dir, "dist", "web");
    const parent = dirname(dir);
    if (parent === dir) return join(process.cwd(), "dist", "web");
    dir = parent;
  }
}

export class StaticFiles {
  #files: Map<string, StaticFile> | null = null;

  constructor(private readonly root: string) {}

  /** The reply for a GET/HEAD of one of the files, or null (the caller answers 404). */
  reply(method: string, url: string, ifNoneMatch: string): { reply: Reply; name: string } | null {
    if (method !== "GET" && method !== "HEAD") return null;
    const name = url === "/" ? "index.html" : url.slice(1);
    const file = this.#load().get(name);
    if (!file) return null;
    const etag = file.headers.find(([k]) => k === "ETag")?.[1];
    if (etag !== undefined && ifNoneMatch.split(",").some((tag) => tag.trim() === etag || tag.trim() === "*")) {
      return { reply: { status: 304, body: "", headers: file.headers, contentType: file.contentType }, name };
    }
    return {
      reply: {
        status: 200,
        body: method === "HEAD" ? "" : file.body,
        headers: file.headers,
        contentType: file.contentType,
      },
      name,
    };
  }

  #load(): Map<string, StaticFile> {
    if (this.#files) return this.#files;
    const files = new Map<string, StaticFile>();
    let names: string[] = [];
    try {
      names = readdirSync(this.root);
    } catch {
      // Not built (npm run build makes it): every path is a 404, as before the client existed.
    }
    for (const name of names) {
      const path = join(this.root, name);
      if (!statSync(path).isFile()) continue;
      const body = readFileSync(path);
      const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 16)}"`;
      const headers: [string, string][] = [
        ["Cache-Control", HASHED.test(name) ? IMMUTABLE : "no-cache"],
        ["ETag", etag],
        ["X-Content-Type-Options", "nosniff"],
      ];
      if (name.endsWith(".html")) headers.push(["Content-Security-Policy", CSP], ["Referrer-Policy", "no-referrer"]);
      files.set(name, { body, contentType: CONTENT_TYPES[extname(name)] ?? "application/octet-stream", headers });
    }
    this.#files = files;
    return files;
  }
}
