import { request } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/http.js";

/** A request with the path exactly as given (fetch would normalise `..` away). */
function get(
  base: string,
  path: string,
  method = "GET",
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the web client's static files at /", () => {
  let dir: string;
  let server: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "parley-web-"));
    const root = join(dir, "web");
    mkdirSync(join(root, "nested"), { recursive: true });
    writeFileSync(join(root, "index.html"), "<!doctype html><title>parley</title>");
    writeFileSync(join(root, "app-ABCDEFG2.js"), "console.log(1)");
    writeFileSync(join(root, "app-ABCDEFG2.css"), "body{}");
    writeFileSync(join(root, "nested", "inner.js"), "inner");
    writeFileSync(join(dir, "secret.txt"), "outside the web root");
    server = await startServer({ webRoot: root });
  });
  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves index.html at / with the HTML type, revalidation and a content security policy", async () => {
    const r = await get(server.base, "/");
    expect(r.status).toBe(200);
    expect(r.body).toBe("<!doctype html><title>parley</title>");
    expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(r.headers["cache-control"]).toBe("no-cache");
    expect(r.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
    const again = await get(server.base, "/", "GET", { "If-None-Match": String(r.headers["etag"]) });
    expect(again.status).toBe(304);
    expect(again.body).toBe("");
  });

  it("serves hashed assets with their types, cached for good; HEAD has no body", async () => {
    const js = await get(server.base, "/app-ABCDEFG2.js");
    expect(js.status).toBe(200);
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(js.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(js.body).toBe("console.log(1)");
    const css = await get(server.base, "/app-ABCDEFG2.css", "HEAD");
    expect(css.status).toBe(200);
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(css.body).toBe("");
  });

  it("answers 404 for unknown files, other directories and every traversal spelling", async () => {
    for (const path of [
      "/nope.js",
      "/nested/inner.js",
      "/nested",
      "/../secret.txt",
      "/%2e%2e/secret.txt",
      "/..%2fsecret.txt",
      "//secret.txt",
      "/index.html/",
      "/api",
      "/APP-ABCDEFG2.JS",
    ]) {
      const r = await get(server.base, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain("outside the web root");
      expect(r.body, path).not.toBe("inner");
    }
  });

  it("serves only GET and HEAD; the API is untouched", async () => {
    expect((await get(server.base, "/", "POST")).status).toBe(404);
    expect((await get(server.base, "/index.html", "DELETE")).status).toBe(404);
    const settings = await get(server.base, "/api/v1/server_settings");
    expect(settings.status).toBe(200);
    expect(settings.headers["content-type"]).toBe("application/json");
  });

  it("answers 404 at / when the client was never built", async () => {
    const bare = await startServer({ webRoot: join(dir, "missing") });
    try {
      const r = await get(bare.base, "/");
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body)).toMatchObject({ result: "error" });
    } finally {
      bare.close();
    }
  });
});
