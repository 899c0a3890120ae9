/**
 * Thumbnails decode raster images only, by their real format (issue #26, item 8): an
 * SVG uploaded as `x.png` with image/png gets no image facts and no thumbnail, so it
 * cannot pull a neighbouring private file into its pixels; the check holds for
 * records stored before it (their image facts name an SVG); sharp's loaders for
 * everything but the allowed raster formats are blocked; each allowed format still
 * gets its thumbnail.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { loadSharp, newPathId, sniffRasterFormat } from "../../../src/uploads/index.js";
import { startServer, type TestServer } from "../../support/http.js";
import { raw, upload } from "./support.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

const thumbnailOf = (pathId: string) => `/user_uploads/thumbnail/${pathId}/840x560.webp`;

async function uploaded(user: User, name: string, data: Buffer | string, type: string): Promise<string> {
  const r = await upload(s, user, [{ name, data, type }]);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body["url"] as string).slice("/user_uploads/".length);
}

const solid = (format: "png" | "jpeg" | "gif" | "webp" | "avif" | "tiff", colour: string) =>
  sharp({ create: { width: 64, height: 40, channels: 3, background: colour } })
    .toFormat(format)
    .toBuffer();

describe("an SVG disguised as a PNG", () => {
  it("gets no image facts and no thumbnail, and a neighbouring private image never reaches its pixels", async () => {
    const { alice, bob } = s.seed;
    // Bob's private image, which alice may not download.
    const secret = await uploaded(bob, "secret.png", await solid("png", "#ff0000"), "image/png");
    expect((await raw(s, "GET", `/user_uploads/${secret}`, { user: alice })).status).toBe(404);
    const secretPath = s.server.uploads.files.pathOf(secret);
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="40">
      <image href="neighbour" xlink:href="neighbour" width="64" height="40"/><image href="file://${secretPath}" width="64" height="40"/></svg>`;
    const disguised = await uploaded(alice, "x.png", svg, "image/png");
    // The neighbour sits next to the disguised file, where librsvg would look for it.
    copyFileSync(secretPath, join(dirname(s.server.uploads.files.pathOf(disguised)), "neighbour"));
    const attachment = s.t.store.attachmentInRealm(s.seed.realm.id, disguised)!;
    expect(attachment.image).toBeNull();
    await s.server.uploads.thumbnails.idle();
    const thumb = await raw(s, "GET", thumbnailOf(disguised), { user: alice });
    expect(thumb.status).toBe(404);
    expect(existsSync(`${s.server.uploads.files.pathOf(disguised)}.840x560.webp`)).toBe(false);
    // The message preview is no image either.
    const sent = await s.call(alice, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: `[x.png](/user_uploads/${disguised})`,
    });
    const message = await s.call(alice, "GET", `/messages/${sent.body["id"] as number}`);
    expect((message.body["message"] as { content: string }).content).not.toContain("message_inline_image");
  });

  it("gets no thumbnail either when an older build recorded image facts for it", async () => {
    const { alice } = s.seed;
    const pathId = newPathId(s.seed.realm.id, "old.png");
    const path = s.server.uploads.files.pathOf(pathId);
    mkdirSync(dirname(path), { recursive: true });
    const svg = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="40"><rect width="64" height="40" fill="red"/></svg>`,
    );
    writeFileSync(path, svg);
    s.t.store.createAttachment(
      {
        ownerId: alice.id,
        pathId,
        name: "old.png",
        size: svg.length,
        contentType: "image/png",
        image: { width: 64, height: 40, animated: false },
      },
      null,
    );
    expect((await raw(s, "GET", thumbnailOf(pathId), { user: alice })).status).toBe(404);
    expect(existsSync(`${path}.840x560.webp`)).toBe(false);
  });
});

describe("formats", () => {
  it("thumbnails each allowed raster format, by its bytes whatever type was declared", async () => {
    const { alice } = s.seed;
    const cases: [string, Buffer, string][] = [];
    for (const format of ["png", "jpeg", "gif", "webp", "avif", "tiff"] as const)
      cases.push([`a.${format}`, await solid(format, "#00ff00"), `image/${format}`]);
    // A PNG declared as JPEG is still a PNG to the thumbnailer.
    cases.push(["b.jpg", await solid("png", "#0000ff"), "image/jpeg"]);
    for (const [name, data, type] of cases) {
      const pathId = await uploaded(alice, name, data, type);
      expect(s.t.store.attachmentInRealm(s.seed.realm.id, pathId)!.image, name).toEqual({
        width: 64,
        height: 40,
        animated: false,
      });
      const thumb = await raw(s, "GET", thumbnailOf(pathId), { user: alice });
      expect(thumb.status, name).toBe(200);
      expect(await sharp(thumb.body).metadata(), name).toMatchObject({ format: "webp", width: 64, height: 40 });
    }
  });

  it("sniffs magic bytes, not names or declared types", () => {
    expect(sniffRasterFormat(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"))).toBeNull();
    expect(sniffRasterFormat(Buffer.from("<?xml version='1.0'?><svg/>"))).toBeNull();
    expect(sniffRasterFormat(Buffer.from("%PDF-1.7"))).toBeNull();
    expect(sniffRasterFormat(Buffer.from("GIF89a"))).toBe("gif");
    expect(sniffRasterFormat(Buffer.from("0000001c6674797068656963000000006d69663168656963", "hex"))).toBeNull();
  });

  it("leaves sharp unable to decode SVG (its loader is blocked)", async () => {
    const make = await loadSharp();
    const path = join(tmpdir(), `parley-blocked-${process.pid}.svg`);
    writeFileSync(path, `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`);
    await expect(make(path, {}).metadata()).rejects.toThrow(/unsupported image format/);
  });
});
