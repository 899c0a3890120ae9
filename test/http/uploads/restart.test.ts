/**
 * What uploads leave across a restart or a crash (issue #26, items 15 and 14):
 * - a tus upload in progress resumes on a new server over the same data directory
 *   (HEAD gives the offset that reached the disk, PATCH completes it, the file
 *   downloads), still private to its owner; half-received files without a sidecar
 *   are deleted at start;
 * - a file renamed into place whose record was never written is deleted by the
 *   uploads cleanup (at start and daily) once older than the grace period; a fresh
 *   one (an upload between rename and record) and recorded files are left alone.
 */
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/config/index.js";
import type { User } from "../../../src/engine/index.js";
import { createServer, type ParleyServer } from "../../../src/http/server.js";
import { UploadsCleanup } from "../../../src/scheduler/uploads-cleanup.js";
import { newPathId, ORPHAN_GRACE_MS } from "../../../src/uploads/index.js";
import { basicAuth, startServer, type TestServer } from "../../support/http.js";
import { bytes, raw } from "./support.js";

const KiB = 1024;
let s: TestServer;
let restarted: ParleyServer | null = null;
beforeAll(async () => {
  s = await startServer({ config: { ...DEFAULT_CONFIG, MAX_FILE_UPLOAD_SIZE: 1 } });
});
afterAll(() => {
  restarted?.close();
  s.close();
});

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const tusHeaders = (user: User) => ({ Authorization: basicAuth(s.t.store.getUser(user.id)), "Tus-Resumable": "1.0.0" });

describe("tus uploads in progress across a restart", () => {
  it("resume on a new server over the same data directory, from the offset that reached the disk", async () => {
    const { alice, bob } = s.seed;
    const data = bytes(300 * KiB, 11);
    const created = await raw(s, "POST", "/api/v1/tus", {
      headers: {
        ...tusHeaders(alice),
        "Upload-Length": String(data.length),
        "Upload-Metadata": `filename ${b64("résumé.pdf")},filetype ${b64("application/pdf")}`,
      },
    });
    expect(created.status).toBe(201);
    const location = String(created.headers["location"]);
    const patch = (server: { base: string }, offset: number, body: Buffer) =>
      raw({ ...s, base: server.base }, "PATCH", location, {
        headers: {
          ...tusHeaders(alice),
          "Content-Type": "application/offset+octet-stream",
          "Upload-Offset": String(offset),
        },
        body,
      });
    expect((await patch(s, 0, data.subarray(0, 100 * KiB))).status).toBe(204);
    // Bob's upload in progress comes back too, still his alone.
    const bobs = await raw(s, "POST", "/api/v1/tus", { headers: { ...tusHeaders(bob), "Upload-Length": "10" } });
    // Leftovers of a crash: a half-received multipart file, and a tus file whose sidecar never made it.
    const tmp = join(s.t.dir, "uploads", String(s.seed.realm.id), "tmp");
    writeFileSync(join(tmp, "upload-0123456789abcdef01234567"), "half");
    writeFileSync(join(tmp, `tus-${"ab".repeat(16)}`), "half");

    // The deploy: this server stops, a new one starts on the same data directory.
    s.server.close();
    const store = s.t.reopen();
    restarted = createServer(store, { rateLimit: false, logError: () => undefined, dataDir: s.t.dir });
    const base = `http://127.0.0.1:${await restarted.listen(0, "127.0.0.1")}`;
    expect(await restarted.uploads.ready).toEqual({ resumed: 2, removed: 2 });
    const at = { ...s, base };

    const head = await raw(at, "HEAD", location, { headers: tusHeaders(alice) });
    expect(head.status).toBe(200);
    expect(head.headers["upload-offset"]).toBe(String(100 * KiB));
    expect(head.headers["upload-length"]).toBe(String(data.length));
    expect((await raw(at, "HEAD", location, { headers: tusHeaders(bob) })).status).toBe(404);
    expect((await raw(at, "HEAD", String(bobs.headers["location"]), { headers: tusHeaders(bob) })).status).toBe(200);

    const done = await patch(at, 100 * KiB, data.subarray(100 * KiB));
    expect(done.status, done.body.toString()).toBe(200);
    expect(done.json()["filename"]).toBe("résumé.pdf");
    const got = await raw(at, "GET", done.json()["url"] as string, { user: alice });
    expect(got.status).toBe(200);
    expect(got.headers["content-type"]).toBe("application/pdf");
    expect(got.body.equals(data)).toBe(true);
    // Finished: its sidecar went with it; bob's stays until he finishes or cancels.
    expect(readdirSync(tmp).sort()).toEqual(
      [String(bobs.headers["location"]).split("/").pop()].flatMap((id) => [`tus-${id}`, `tus-${id}.json`]),
    );
  });
});

describe("files a crash left in place without a record", () => {
  it("are deleted by the uploads cleanup once older than the grace period, at start and daily", async () => {
    const server = restarted!;
    const store = s.t.store;
    const { alice } = s.seed;
    const realmId = s.seed.realm.id;
    const long = (Date.now() - ORPHAN_GRACE_MS - 60_000) / 1000;
    const place = (name: string, old: boolean, suffix = "") => {
      const path = server.uploads.files.pathOf(newPathId(realmId, name)) + suffix;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, name);
      if (old) utimesSync(path, long, long);
      return path;
    };
    const orphan = place("orphan.txt", true);
    const orphanThumbnail = `${orphan}.840x560.webp`;
    writeFileSync(orphanThumbnail, "thumb");
    utimesSync(orphanThumbnail, long, long);
    const fresh = place("in-flight.txt", false);
    // A recorded file, however old, stays.
    const keptPathId = newPathId(realmId, "kept.txt");
    const kept = server.uploads.files.pathOf(keptPathId);
    mkdirSync(dirname(kept), { recursive: true });
    writeFileSync(kept, "kept");
    utimesSync(kept, long, long);
    store.createAttachment(
      { ownerId: alice.id, pathId: keptPathId, name: "kept.txt", size: 4, contentType: "text/plain", image: null },
      null,
    );
    const halfThumbnail = `${kept}.840x560.webp.partial`;
    writeFileSync(halfThumbnail, "half");
    utimesSync(halfThumbnail, long, long);

    const cleanup = new UploadsCleanup(store, server.uploads, { onError: (error) => expect.fail(String(error)) });
    await cleanup.start();
    cleanup.stop();
    expect([orphan, orphanThumbnail, halfThumbnail].filter(existsSync)).toEqual([]);
    expect(existsSync(fresh)).toBe(true);
    expect(existsSync(kept)).toBe(true);

    // A day later the in-flight one never got its record: the daily round deletes it.
    utimesSync(fresh, long, long);
    expect(await cleanup.runOnce()).toBe(1);
    expect(existsSync(fresh)).toBe(false);
    expect(existsSync(kept)).toBe(true);
  });
});
