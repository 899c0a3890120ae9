/**
 * Resumable uploads at /api/v1/tus with tus-js-client, the reference tus client:
 * an upload interrupted midway (the client aborts between chunks; and a PATCH cut
 * off mid-body, whose received bytes the server keeps) and resumed from the server's
 * offset; the final PATCH's `{url, filename}` JSON; the file then downloads byte for
 * byte like any upload. Refusals: no credentials, deferred length, over the limit,
 * a wrong offset, another user's upload.
 */
import { request as httpRequest } from "node:http";
import * as tus from "tus-js-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/config/index.js";
import type { User } from "../../../src/engine/index.js";
import { basicAuth, startServer, type TestServer } from "../../support/http.js";
import { MAX_TUS_UPLOADS_PER_USER } from "../../../src/uploads/index.js";
import { bytes, raw } from "./support.js";

let s: TestServer;
const KiB = 1024;
beforeAll(async () => {
  s = await startServer({ config: { ...DEFAULT_CONFIG, MAX_FILE_UPLOAD_SIZE: 1 } });
});
afterAll(() => s.close());

interface Done {
  readonly body: { url: string; filename: string };
  readonly uploadUrl: string;
}

/** Runs a tus-js-client upload to the end; `interrupt` may abort it once (returning true) and it is then resumed. */
function tusUpload(
  user: User,
  data: Buffer,
  options: { chunkSize?: number; uploadUrl?: string; interruptAfterChunks?: number; name?: string } = {},
): Promise<Done & { interrupted: boolean; offsetsSeen: number[] }> {
  return new Promise((resolve, reject) => {
    let chunks = 0;
    let interrupted = false;
    const offsetsSeen: number[] = [];
    const upload = new tus.Upload(data, {
      endpoint: `${s.base}/api/v1/tus`,
      ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : {}),
      headers: { Authorization: basicAuth(s.t.store.getUser(user.id)) },
      metadata: { filename: options.name ?? "data.bin", filetype: "application/octet-stream" },
      chunkSize: options.chunkSize ?? Number.POSITIVE_INFINITY,
      retryDelays: null,
      onChunkComplete: (_size, accepted) => {
        offsetsSeen.push(accepted);
        chunks++;
        if (!interrupted && options.interruptAfterChunks === chunks) {
          interrupted = true;
          // Abort as a dropped connection would, then carry on: the client asks the server (HEAD) where to resume.
          void upload.abort().then(() => setTimeout(() => upload.start(), 10));
        }
      },
      onError: reject,
      onSuccess: ({ lastResponse }) =>
        resolve({
          body: JSON.parse(lastResponse.getBody()) as Done["body"],
          uploadUrl: upload.url ?? "",
          interrupted,
          offsetsSeen,
        }),
    });
    upload.start();
  });
}

describe("tus uploads with tus-js-client", () => {
  it("uploads in one PATCH and answers the final PATCH with Zulip's {url, filename}", async () => {
    const data = bytes(200 * KiB, 3);
    const done = await tusUpload(s.seed.alice, data, { name: "report (v2).pdf" });
    expect(done.body.filename).toBe("report (v2).pdf");
    // tus names are sanitized strictly (ASCII), as Zulip does for tusd.
    expect(done.body.url).toMatch(
      new RegExp(`^/user_uploads/${s.seed.realm.id}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/report-v2.pdf$`),
    );
    const got = await raw(s, "GET", done.body.url, { user: s.seed.alice });
    expect(got.body.equals(data)).toBe(true);
    // The same attachment as POST /user_uploads would make.
    expect(
      s.t.store
        .attachments(s.seed.alice.id)
        .some((a) => `/user_uploads/${a.pathId}` === done.body.url && a.size === data.length),
    ).toBe(true);
  });

  it("resumes from the server's offset after the client aborts midway", async () => {
    const data = bytes(256 * KiB, 5);
    const done = await tusUpload(s.seed.bob, data, { chunkSize: 64 * KiB, interruptAfterChunks: 2 });
    expect(done.interrupted).toBe(true);
    // After the abort the client resumed at 128 KiB (the offset the server reported), not at 0.
    expect(done.offsetsSeen).toEqual([64 * KiB, 128 * KiB, 192 * KiB, 256 * KiB]);
    const got = await raw(s, "GET", done.body.url, { user: s.seed.bob });
    expect(got.body.equals(data)).toBe(true);
  });

  it("keeps the bytes of a PATCH cut off mid-body, and tus-js-client resumes the upload from there", async () => {
    const { alice } = s.seed;
    const data = bytes(300 * KiB, 9);
    const tusHeaders = { Authorization: basicAuth(s.t.store.getUser(alice.id)), "Tus-Resumable": "1.0.0" };
    const created = await raw(s, "POST", "/api/v1/tus", {
      headers: {
        ...tusHeaders,
        "Upload-Length": String(data.length),
        "Upload-Metadata": `filename ${Buffer.from("cut.bin").toString("base64")}`,
      },
    });
    expect(created.status).toBe(201);
    const location = String(created.headers["location"]);
    const id = location.split("/").pop()!;
    // Send the first 100 KiB of a PATCH that announces all 300 KiB, wait until the server has them, then drop the
    // connection.
    const url = new URL(s.base);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      path: location,
      method: "PATCH",
      headers: {
        ...tusHeaders,
        "Content-Type": "application/offset+octet-stream",
        "Upload-Offset": "0",
        "Content-Length": String(data.length),
      },
    });
    req.on("error", () => undefined);
    req.write(data.subarray(0, 100 * KiB));
    const upload = () => s.server.uploads.tus.get(id, s.seed.realm.id, alice.id)!;
    for (let i = 0; i < 500 && upload().file.received < 100 * KiB; i++) await new Promise((r) => setTimeout(r, 10));
    req.destroy();
    const head = await raw(s, "HEAD", location, { headers: tusHeaders });
    expect(head.status).toBe(200);
    expect(head.headers["upload-offset"]).toBe(String(100 * KiB));
    expect(head.headers["upload-length"]).toBe(String(data.length));
    const done = await tusUpload(alice, data, { uploadUrl: `${s.base}${location}` });
    expect(done.offsetsSeen).toEqual([data.length]);
    const got = await raw(s, "GET", done.body.url, { user: alice });
    expect(got.body.equals(data)).toBe(true);
  });
});

describe("tus refusals", () => {
  const headers = (user: User) => ({ Authorization: basicAuth(s.t.store.getUser(user.id)), "Tus-Resumable": "1.0.0" });

  it("needs credentials, a declared length within the limit, and the current offset", async () => {
    const { alice, bob } = s.seed;
    expect(
      (await raw(s, "POST", "/api/v1/tus", { headers: { "Tus-Resumable": "1.0.0", "Upload-Length": "10" } })).status,
    ).toBe(401);
    const deferred = await raw(s, "POST", "/api/v1/tus", {
      headers: { ...headers(alice), "Upload-Defer-Length": "1" },
    });
    expect(deferred.status).toBe(411);
    expect(deferred.json()["msg"]).toBe("SizeIsDeferred is not supported");
    const big = await raw(s, "POST", "/api/v1/tus", {
      headers: { ...headers(alice), "Upload-Length": String(2 * 1024 * KiB) },
    });
    expect(big.status).toBe(413);
    expect(big.json()["msg"]).toBe("Uploaded file is larger than the allowed limit of 1 MiB");
    expect(
      (
        await raw(s, "POST", "/api/v1/tus", {
          headers: { Authorization: headers(alice).Authorization, "Upload-Length": "10" },
        })
      ).status,
    ).toBe(412);
    const created = await raw(s, "POST", "/api/v1/tus", { headers: { ...headers(alice), "Upload-Length": "10" } });
    const location = String(created.headers["location"]);
    const patch = (user: User, offset: string, body: Buffer) =>
      raw(s, "PATCH", location, {
        user,
        headers: {
          "Tus-Resumable": "1.0.0",
          "Content-Type": "application/offset+octet-stream",
          "Upload-Offset": offset,
        },
        body,
      });
    expect((await patch(alice, "5", Buffer.alloc(5))).status).toBe(409);
    // Another user's upload is unknown to them: nothing to read, append or delete.
    expect((await patch(bob, "0", Buffer.alloc(5))).status).toBe(404);
    expect((await raw(s, "HEAD", location, { user: bob, headers: { "Tus-Resumable": "1.0.0" } })).status).toBe(404);
    expect((await raw(s, "DELETE", location, { user: bob, headers: { "Tus-Resumable": "1.0.0" } })).status).toBe(404);
    // Past the declared length.
    expect((await patch(alice, "0", Buffer.alloc(11))).status).toBe(413);
    // Termination.
    expect((await raw(s, "DELETE", location, { user: alice, headers: { "Tus-Resumable": "1.0.0" } })).status).toBe(204);
    expect((await raw(s, "HEAD", location, { user: alice, headers: { "Tus-Resumable": "1.0.0" } })).status).toBe(404);
  });

  it("caps the uploads one user has in progress (each holds an open file); finishing or cancelling one frees a place", async () => {
    const { bob, alice } = s.seed;
    const create = (user: User) =>
      raw(s, "POST", "/api/v1/tus", { headers: { ...headers(user), "Upload-Length": "10" } });
    const locations: string[] = [];
    for (let i = 0; i < MAX_TUS_UPLOADS_PER_USER; i++) {
      const r = await create(bob);
      expect(r.status).toBe(201);
      locations.push(String(r.headers["location"]));
    }
    const refused = await create(bob);
    expect(refused.status).toBe(429);
    expect(refused.json()["msg"]).toMatch(/Too many uploads in progress/);
    // Another user is not affected.
    expect((await create(alice)).status).toBe(201);
    expect((await raw(s, "DELETE", locations[0]!, { user: bob, headers: { "Tus-Resumable": "1.0.0" } })).status).toBe(
      204,
    );
    expect((await create(bob)).status).toBe(201);
  });
});
