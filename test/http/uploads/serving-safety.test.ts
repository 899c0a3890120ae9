/**
 * Stored XSS and header injection through upload content types (issue #26, item 1):
 * whatever type a client claims (tus `filetype`, a multipart part's type) or a store
 * already holds, a file is served inline only for an allow-listed type, everything
 * else as application/octet-stream with `attachment`; CR/LF never reaches a header;
 * every upload response (file, download, thumbnail, temporary URL, their errors)
 * carries the sandbox CSP, nosniff and Cross-Origin-Resource-Policy.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { contentTypeFor, newPathId, parseMediaType, servedType } from "../../../src/uploads/index.js";
import { basicAuth, startServer, type TestServer } from "../../support/http.js";
import { raw, upload, type RawAnswer } from "./support.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** A whole tus upload (create + one PATCH); returns the final PATCH's `url`. */
async function tusUpload(user: User, filename: string, filetype: string, data: Buffer): Promise<string> {
  const headers = { Authorization: basicAuth(s.t.store.getUser(user.id)), "Tus-Resumable": "1.0.0" };
  const created = await raw(s, "POST", "/api/v1/tus", {
    headers: {
      ...headers,
      "Upload-Length": String(data.length),
      "Upload-Metadata": `filename ${b64(filename)},filetype ${b64(filetype)}`,
    },
  });
  expect(created.status).toBe(201);
  const patched = await raw(s, "PATCH", String(created.headers["location"]), {
    headers: { ...headers, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0" },
    body: data,
  });
  expect(patched.status, patched.body.toString()).toBe(200);
  return patched.json()["url"] as string;
}

function expectGuarded(r: RawAnswer): void {
  expect(r.headers["content-security-policy"], `${r.status} ${r.body.toString().slice(0, 80)}`).toBe(
    "sandbox; default-src 'none'",
  );
  expect(r.headers["x-content-type-options"]).toBe("nosniff");
  expect(r.headers["cross-origin-resource-policy"]).toBe("same-origin");
}

/** Served safely: never HTML or script inline, only a plain text or download answer. */
function expectNotRenderable(r: RawAnswer): void {
  expect(r.status).toBe(200);
  expectGuarded(r);
  const type = String(r.headers["content-type"]);
  const disposition = String(r.headers["content-disposition"]);
  const plainInline = type === "text/plain; charset=utf-8" && disposition.startsWith("inline;");
  const download = type === "application/octet-stream" && disposition.startsWith("attachment;");
  expect(plainInline || download, `${type} / ${disposition}`).toBe(true);
}

const HTML = Buffer.from("<html><script>parent.postMessage(document.cookie,'*')</script></html>");

describe("content types a client declares", () => {
  it("serves the tus filetype `text/plain;a=b,text/html` as plain text or a download, never as HTML inline", async () => {
    const { alice } = s.seed;
    const url = await tusUpload(alice, "note", "text/plain;a=b,text/html", HTML);
    const got = await raw(s, "GET", url, { user: alice });
    expectNotRenderable(got);
    expect(got.body.equals(HTML)).toBe(true);
    // The temporary URL (no credentials) answers the same.
    const temporary = (await raw(s, "GET", `/api/v1${url}`, { user: alice })).json()["url"] as string;
    expectNotRenderable(await raw(s, "GET", temporary));
  });

  it("never lets CR/LF in a tus filetype or name reach a response header", async () => {
    const { alice } = s.seed;
    const url = await tusUpload(
      alice,
      "a\r\nX-Name-Injected: 1.txt",
      "text/html\r\nService-Worker-Allowed: /\r\nX-Injected: 1",
      HTML,
    );
    for (const path of [url, url.replace("/user_uploads/", "/user_uploads/download/")]) {
      const got = await raw(s, "GET", path, { user: alice });
      expect(got.status).toBe(200);
      expect(got.headers["service-worker-allowed"]).toBeUndefined();
      expect(got.headers["x-injected"]).toBeUndefined();
      expect(got.headers["x-name-injected"]).toBeUndefined();
      expect(got.headers["content-type"]).toBe("application/octet-stream");
      expect(String(got.headers["content-disposition"])).toMatch(/^attachment; /);
      expectGuarded(got);
    }
  });

  it("reduces multipart part types through the same parser", async () => {
    const { alice } = s.seed;
    const r = await upload(s, alice, [{ name: "x.txt", data: HTML, type: "text/html" }]);
    const got = await raw(s, "GET", r.body["url"] as string, { user: alice });
    expectNotRenderable(got);
    const svg = await upload(s, alice, [
      {
        name: "y.png",
        data: "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
        type: "image/svg+xml",
      },
    ]);
    const gotSvg = await raw(s, "GET", svg.body["url"] as string, { user: alice });
    expect(gotSvg.headers["content-type"]).toBe("application/octet-stream");
    expect(String(gotSvg.headers["content-disposition"])).toMatch(/^attachment; /);
  });
});

describe("attachments already stored with a bad content type", () => {
  it("are served through the allow-list too (the check is made again when serving)", async () => {
    const { alice } = s.seed;
    const stored = [
      "text/plain;a=b,text/html",
      "text/html",
      "image/svg+xml",
      "TEXT/HTML; charset=utf-8",
      "text/html\r\nX-Injected: 1",
      "application/xhtml+xml",
      "",
    ];
    for (const contentType of stored) {
      // As an older build stored them: the type exactly as the client sent it.
      const pathId = newPathId(s.seed.realm.id, "legacy.bin");
      const path = s.server.uploads.files.pathOf(pathId);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, HTML);
      s.t.store.createAttachment(
        { ownerId: alice.id, pathId, name: "legacy.bin", size: HTML.length, contentType, image: null },
        null,
      );
      const got = await raw(s, "GET", `/user_uploads/${pathId}`, { user: alice });
      expect(got.body.equals(HTML)).toBe(true);
      expect(got.headers["x-injected"]).toBeUndefined();
      expect(got.headers["content-type"], JSON.stringify(contentType)).toBe("application/octet-stream");
      expect(String(got.headers["content-disposition"])).toMatch(/^attachment; /);
      expectGuarded(got);
    }
  });
});

describe("every upload response is guarded", () => {
  it("carries the sandbox CSP, nosniff and CORP on files, downloads, thumbnails, temporary URLs, 304s and errors", async () => {
    const { alice, bob } = s.seed;
    const r = await upload(s, alice, [{ name: "doc.pdf", data: "%PDF-1.4\n", type: "application/pdf" }]);
    const url = r.body["url"] as string;
    const inline = await raw(s, "GET", url, { user: alice });
    expect(inline.headers["content-type"]).toBe("application/pdf");
    expect(String(inline.headers["content-disposition"])).toMatch(/^inline; /);
    expectGuarded(inline);
    expectGuarded(await raw(s, "GET", url.replace("/user_uploads/", "/user_uploads/download/"), { user: alice }));
    expectGuarded(
      await raw(s, "GET", url, { user: alice, headers: { "If-None-Match": String(inline.headers["etag"]) } }),
    );
    expectGuarded(await raw(s, "GET", url, { user: alice, headers: { Range: "bytes=99-" } }));
    const temporary = (await raw(s, "GET", `/api/v1${url}`, { user: alice })).json()["url"] as string;
    expectGuarded(await raw(s, "GET", temporary));
    // Errors: another user's file, a thumbnail of a file that is not an image, a bad token.
    const denied = await raw(s, "GET", url, { user: bob });
    expect(denied.status).toBe(404);
    expectGuarded(denied);
    const noThumbnail = await raw(
      s,
      "GET",
      `/user_uploads/thumbnail/${url.slice("/user_uploads/".length)}/840x560.webp`,
      { user: alice },
    );
    expect(noThumbnail.status).toBe(404);
    expectGuarded(noThumbnail);
    const badToken = await raw(s, "GET", "/user_uploads/temporary/00/x.txt");
    expect(badToken.status).toBe(400);
    expectGuarded(badToken);
  });
});

describe("the parser", () => {
  it("keeps a lowercase type/subtype of RFC 9110 tokens and nothing else", () => {
    expect(parseMediaType('Text/Plain; charset="utf-8"')).toBe("text/plain");
    expect(parseMediaType("image/png")).toBe("image/png");
    expect(parseMediaType("application/vnd.openxmlformats-officedocument.wordprocessingml.document")).toBe(
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    );
    for (const bad of [
      "text/plain;a=b,text/html",
      "text/html\r\nX: 1",
      "text/html\n",
      "text/ html",
      "text",
      "/html",
      "text/html/x",
      "text/<b>",
      "té/xt",
      "text/plain; a",
      'text/plain; a="b',
      "x".repeat(300) + "/y",
    ]) {
      expect(parseMediaType(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(contentTypeFor("text/plain;a=b,text/html", "x.html")).toBe("application/octet-stream");
    expect(contentTypeFor("", "x.pdf")).toBe("application/pdf");
    expect(contentTypeFor("application/octet-stream", "x.png")).toBe("image/png");
    expect(servedType("text/plain")).toEqual({ contentType: "text/plain; charset=utf-8", inline: true });
    expect(servedType("image/svg+xml")).toEqual({ contentType: "application/octet-stream", inline: false });
    expect(servedType("video/mp4; codecs=avc1")).toEqual({ contentType: "video/mp4", inline: true });
  });
});
