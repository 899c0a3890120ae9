/**
 * GET /thumbnail/status/{realm_id}/{filename} (FL 479): false until an image's thumbnail
 * is made (asking does not make it), true after; false for a file that gets none; the
 * 404 of a missing file for one the caller may not download.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newPathId } from "../../../src/uploads/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";
import { raw, upload } from "./support.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

const status = (pathId: string) => `/thumbnail/status/${pathId}`;

describe("GET /thumbnail/status", () => {
  it("answers false before the thumbnail is made and true after; asking does not make it", async () => {
    const { alice } = s.seed;
    // An image stored without its thumbnail queued (as one uploaded before a restart).
    const pathId = newPathId(s.seed.realm.id, "photo.png");
    const path = s.server.uploads.files.pathOf(pathId);
    mkdirSync(dirname(path), { recursive: true });
    const png = await sharp({ create: { width: 64, height: 40, channels: 3, background: "#00ff00" } })
      .png()
      .toBuffer();
    writeFileSync(path, png);
    s.t.store.createAttachment(
      {
        ownerId: alice.id,
        pathId,
        name: "photo.png",
        size: png.length,
        contentType: "image/png",
        image: { width: 64, height: 40, animated: false },
      },
      null,
    );
    for (let i = 0; i < 2; i++) {
      const r = await s.call(alice, "GET", status(pathId));
      expect([r.status, r.body]).toEqual([200, { result: "success", msg: "", has_thumbnail: false }]);
      await s.server.uploads.thumbnails.idle();
    }
    expect((await raw(s, "GET", `/user_uploads/thumbnail/${pathId}/840x560.webp`, { user: alice })).status).toBe(200);
    expect((await s.call(alice, "GET", status(pathId))).body["has_thumbnail"]).toBe(true);
  });

  it("answers false for a file that gets no thumbnail, 404 where the caller may not download", async () => {
    const { alice, bob } = s.seed;
    const r = await upload(s, alice, [{ name: "notes.txt", data: "hello", type: "text/plain" }]);
    const text = (r.body["url"] as string).slice("/user_uploads/".length);
    await s.server.uploads.thumbnails.idle();
    expect((await s.call(alice, "GET", status(text))).body["has_thumbnail"]).toBe(false);
    for (const target of [text, `${s.seed.realm.id}/ab/nothing-here/x.png`])
      await expectRejectedUnchanged(
        s,
        () => s.call(bob, "GET", status(target)),
        404,
        "BAD_REQUEST",
        "This file does not exist or has been deleted.",
      );
  });
});
