/**
 * POST /user_uploads and downloads over real HTTP: the round trip (bytes identical),
 * Zulip's refusals with nothing left on disk, the access matrix (uploader, DM
 * recipient, private channel subscriber, non-subscriber, guest, another realm, no
 * credentials, expired temporary URL), Range, ETag, Content-Disposition and nosniff,
 * and path traversal in every path parameter and file name.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/config/index.js";
import type { User } from "../../../src/engine/index.js";
import { request as httpRequest } from "node:http";
import { basicAuth, expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";
import { fingerprint } from "../../support/snapshot.js";
import { bytes, filesOnDisk, raw, upload } from "./support.js";

let s: TestServer;
let clock = 1_700_000_000_000;
const KiB = 1024;
const MiB = 1024 * KiB;

beforeAll(async () => {
  s = await startServer({
    config: { ...DEFAULT_CONFIG, MAX_FILE_UPLOAD_SIZE: 1, REALM_UPLOAD_QUOTA_MIB: 3 },
    now: () => clock,
  });
});
afterAll(() => s.close());

/** Uploads and returns the URL path (/user_uploads/<path_id>). */
async function uploaded(user: User, name: string, data: Buffer | string, type?: string): Promise<string> {
  const r = await upload(s, user, [{ name, data, ...(type === undefined ? {} : { type }) }]);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body["url"] as string;
}

const send = (
  user: User,
  to: { type: "channel"; channel: string; topic: string } | { type: "direct"; users: number[] },
  content: string,
) => s.t.store.sendMessage({ senderId: user.id, to, content }).id;

describe("POST /user_uploads", () => {
  it("stores one file and serves the same bytes back to its uploader", async () => {
    const { alice } = s.seed;
    const data = bytes(40 * KiB);
    const r = await upload(s, alice, [{ name: "report 2024 (final).pdf", data, type: "application/pdf" }]);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ result: "success", msg: "", filename: "report 2024 (final).pdf" });
    const url = r.body["url"] as string;
    expect(r.body["uri"]).toBe(url);
    // Zulip's path_id: realm, 2 hex, random, the sanitized name.
    expect(url).toMatch(
      new RegExp(`^/user_uploads/${s.seed.realm.id}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/report-2024-final.pdf$`),
    );
    const got = await raw(s, "GET", url, { user: alice });
    expect(got.status).toBe(200);
    expect(got.body.equals(data)).toBe(true);
    expect(got.headers["content-type"]).toBe("application/pdf");
    expect(got.headers["content-length"]).toBe(String(data.length));
    // The bytes are on disk under DATA/uploads/<realm>/, never under their name.
    expect(filesOnDisk(s).some((f) => f.startsWith(`${s.seed.realm.id}/`) && !f.includes("report"))).toBe(true);
  });

  it("keeps the original name (unquoted, without NUL) and sanitizes the stored one as Zulip does", async () => {
    // Zulip unquotes the name, then drops NUL bytes (a raw NUL cannot travel in a multipart header).
    const r = await upload(s, s.seed.alice, [{ name: "été%20photo%00 <x>.txt", data: "hi" }]);
    expect(r.status).toBe(200);
    expect(r.body["filename"]).toBe("été photo <x>.txt");
    expect(String(r.body["url"]).split("/").pop()).toBe("été-photo-x.txt");
  });

  it("refuses a body without a file, with several files, or with a file over the limit, leaving nothing on disk", async () => {
    const { alice } = s.seed;
    const before = filesOnDisk(s);
    const form = new FormData();
    form.append("name", "no file here");
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "POST", "/user_uploads", {}, { body: form }),
      400,
      "BAD_REQUEST",
      "You must specify a file to upload",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "POST", "/user_uploads", { x: "1" }),
      400,
      "BAD_REQUEST",
      "You must specify a file to upload",
    );
    await expectRejectedUnchanged(
      s,
      () =>
        upload(s, alice, [
          { name: "a.txt", data: "a" },
          { name: "b.txt", data: "b" },
        ]),
      400,
      "BAD_REQUEST",
      "You may only upload one file at a time",
    );
    const tooLarge = "File is larger than this server's configured maximum upload size (1 MiB).";
    // Declared with Content-Length: refused before it is read; streamed (chunked): refused as it passes the limit.
    await expectRejectedUnchanged(
      s,
      () => upload(s, alice, [{ name: "big.bin", data: bytes(MiB + 200 * KiB) }]),
      400,
      "BAD_REQUEST",
      tooLarge,
    );
    await expectRejectedUnchanged(s, () => chunkedUpload(alice, bytes(MiB + 1)), 400, "BAD_REQUEST", tooLarge);
    expect(filesOnDisk(s)).toEqual(before);
    // Exactly the limit is fine.
    const max = await upload(s, alice, [{ name: "max.bin", data: bytes(MiB) }]);
    expect(max.status, JSON.stringify(max.body)).toBe(200);
  });

  it("refuses an upload past the realm's quota with REALM_UPLOAD_QUOTA, leaving nothing on disk", async () => {
    const { bob } = s.seed;
    // The quota is 3 MiB; fill it close to the top.
    while (s.t.store.uploadSpaceUsed(s.seed.realm.id) + 900 * KiB <= 3 * MiB)
      expect((await upload(s, bob, [{ name: "fill.bin", data: bytes(900 * KiB) }])).status).toBe(200);
    const before = filesOnDisk(s);
    await expectRejectedUnchanged(
      s,
      () => upload(s, bob, [{ name: "over.bin", data: bytes(900 * KiB) }]),
      400,
      "REALM_UPLOAD_QUOTA",
      "Upload would exceed your organization's upload quota.",
    );
    await expectRejectedUnchanged(
      s,
      () => chunkedUpload(bob, bytes(900 * KiB)),
      400,
      "REALM_UPLOAD_QUOTA",
      "Upload would exceed your organization's upload quota.",
    );
    expect(filesOnDisk(s)).toEqual(before);
    // Free the space again for the other tests.
    for (const a of s.t.store.attachments(bob.id)) await s.call(bob, "DELETE", `/attachments/${a.id}`);
    expect(s.t.store.attachments(bob.id)).toEqual([]);
  });

  it("reports the limit and the quota in register", async () => {
    const r = await s.call(s.seed.bob, "POST", "/register", { fetch_event_types: JSON.stringify(["realm"]) });
    expect(r.body).toMatchObject({ max_file_upload_size_mib: 1, realm_upload_quota_mib: 3 });
    expect(r.body["server_thumbnail_formats"]).toEqual([
      { name: "840x560.webp", max_width: 840, max_height: 560, format: "webp", animated: false },
    ]);
  });
});

/** A multipart upload sent chunked (no Content-Length), so only the streaming check can stop it. */
function chunkedUpload(user: User, data: Buffer): Promise<{ status: number; body: Record<string, unknown> }> {
  const boundary = "----parleytest";
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.concat([head, data, tail]);
  const url = new URL(s.base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: "/api/v1/user_uploads",
        method: "POST",
        headers: {
          Authorization: basicAuth(s.t.store.getUser(user.id)),
          "Content-Type": `multipart/form-data; boundary=${boundary}`,
          "Transfer-Encoding": "chunked",
        },
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
    // The server may answer and close before the whole body is written.
    req.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error),
    );
    for (let i = 0; i < body.length; i += 64 * KiB) req.write(body.subarray(i, i + 64 * KiB));
    req.end();
  });
}

describe("downloads: who may see a file", () => {
  const bee = { host: "bee.localhost", user: null as User | null };
  let dmFile = "";
  let secretFile = "";
  let publicFile = "";
  let unclaimed = "";
  beforeAll(async () => {
    const { alice, bob } = s.seed;
    dmFile = await uploaded(alice, "dm.txt", "for bob");
    secretFile = await uploaded(alice, "secret.txt", "for secret");
    publicFile = await uploaded(alice, "public.txt", "for everyone");
    unclaimed = await uploaded(alice, "mine.txt", "just mine");
    send(alice, { type: "direct", users: [bob.id] }, `[dm.txt](${dmFile})`);
    send(alice, { type: "channel", channel: "secret", topic: "t" }, `[secret.txt](${secretFile})`);
    send(alice, { type: "channel", channel: "general", topic: "t" }, `[public.txt](${publicFile})`);
    const b = s.t.store.createRealm({
      subdomain: "bee",
      name: "Bee",
      owner: { email: "queen@bee.test", fullName: "Queen" },
    });
    bee.user = b.owner;
  });

  it("serves each file exactly to those Zulip's rule allows, and 404 with no hint to everyone else", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const status = async (url: string, user: User | null, host?: string) =>
      (await raw(s, "GET", url, { user, ...(host ? { host } : {}) })).status;
    const matrix: [string, string, User | null, number, string?][] = [
      ["uploader, unclaimed", unclaimed, alice, 200],
      ["member, unclaimed file of another", unclaimed, bob, 404],
      ["DM recipient", dmFile, bob, 200],
      ["not in the DM", dmFile, owner, 404],
      ["guest, DM of others", dmFile, guest, 404],
      ["private channel subscriber", secretFile, owner, 200],
      ["private channel non-subscriber", secretFile, bob, 404],
      ["guest, private channel", secretFile, guest, 404],
      ["member, public channel", publicFile, bob, 200],
      ["owner, public channel", publicFile, owner, 200],
      ["guest not subscribed, public channel", publicFile, guest, 404],
      ["no credentials", publicFile, null, 404],
    ];
    const got = [];
    for (const [label, url, user, expected] of matrix) got.push([label, await status(url, user), expected]);
    expect(got.map(([label, actual]) => [label, actual])).toEqual(got.map(([label, , expected]) => [label, expected]));
    // Another realm's user, on their own host (where the realm's files do not exist) and on this one (401: not their
    // realm).
    expect(await status(publicFile, bee.user, bee.host)).toBe(404);
    expect(await status(publicFile, bee.user)).toBe(401);
    // A denied file answers byte for byte like a path that never existed.
    const denied = await raw(s, "GET", secretFile, { user: bob });
    const missing = await raw(s, "GET", secretFile.replace(/\/[A-Za-z0-9_-]{24}\//, "/AAAAAAAAAAAAAAAAAAAAAAAA/"), {
      user: bob,
    });
    expect(denied.status).toBe(missing.status);
    expect(denied.body.toString()).toBe(missing.body.toString());
    expect(denied.json()).toEqual({
      result: "error",
      msg: "This file does not exist or has been deleted.",
      code: "BAD_REQUEST",
    });
  });

  it("lets a guest subscribed to the channel see its files, and stops when the subscriber leaves a private channel without shared history", async () => {
    const { owner, alice, guest } = s.seed;
    const url = await uploaded(alice, "later.txt", "x");
    send(alice, { type: "channel", channel: "general", topic: "g" }, `[later](${url})`);
    expect((await raw(s, "GET", url, { user: guest })).status).toBe(404);
    s.t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [guest.id] });
    // Subscribed now, and general's history is public to subscribers.
    expect((await raw(s, "GET", url, { user: guest })).status).toBe(200);
    s.t.store.unsubscribe(owner.id, ["general"], [guest.id]);
    expect((await raw(s, "GET", url, { user: guest })).status).toBe(404);
    // secret: history not public; owner received the message, leaves, loses the file.
    const secretUrl = await uploaded(alice, "s2.txt", "y");
    send(alice, { type: "channel", channel: "secret", topic: "t" }, `[s2](${secretUrl})`);
    expect((await raw(s, "GET", secretUrl, { user: owner })).status).toBe(200);
  });

  it("gives a temporary URL that works without credentials for 60 seconds, only to those who may see the file", async () => {
    const { owner, bob } = s.seed;
    const apiPath = `/api/v1${dmFile}`;
    const r = await raw(s, "GET", apiPath, { user: bob });
    expect(r.status).toBe(200);
    const url = r.json()["url"] as string;
    expect(url).toMatch(/^\/user_uploads\/temporary\/[0-9A-F]+\/dm.txt$/);
    const fetched = await raw(s, "GET", url);
    expect(fetched.status).toBe(200);
    expect(fetched.body.toString()).toBe("for bob");
    // Someone who may not see the file gets the 404 of a missing one, not a URL.
    const refused = await raw(s, "GET", apiPath, { user: owner });
    expect(refused.status).toBe(404);
    expect(refused.json()["msg"]).toBe("This file does not exist or has been deleted.");
    // A wrong file name, a forged token, then expiry.
    expect((await raw(s, "GET", url.replace(/dm.txt$/, "other.txt"))).json()["msg"]).toBe("Invalid filename");
    expect((await raw(s, "GET", url.replace(/\/([0-9A-F]{4})/, "/0000"))).json()["msg"]).toBe("Invalid token");
    clock += 59_000;
    expect((await raw(s, "GET", url)).status).toBe(200);
    clock += 2_000;
    const expired = await raw(s, "GET", url);
    expect(expired.status).toBe(400);
    expect(expired.json()).toEqual({ result: "error", msg: "Invalid token", code: "BAD_REQUEST" });
  });
});

describe("downloads: HTTP details", () => {
  let url = "";
  const data = bytes(100 * KiB, 7);
  beforeAll(async () => {
    url = await uploaded(s.seed.alice, "clip.mp4", data, "video/mp4");
  });
  const get = (headers: Record<string, string>) => raw(s, "GET", url, { user: s.seed.alice, headers });

  it("answers byte ranges (video seeking) with 206 and Content-Range, and 416 past the end", async () => {
    const mid = await get({ Range: "bytes=1000-1999" });
    expect(mid.status).toBe(206);
    expect(mid.headers["content-range"]).toBe(`bytes 1000-1999/${data.length}`);
    expect(mid.body.equals(data.subarray(1000, 2000))).toBe(true);
    const open = await get({ Range: "bytes=100000-" });
    expect(open.body.equals(data.subarray(100_000))).toBe(true);
    const suffix = await get({ Range: "bytes=-10" });
    expect(suffix.body.equals(data.subarray(-10))).toBe(true);
    const past = await get({ Range: `bytes=${data.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers["content-range"]).toBe(`bytes */${data.length}`);
    // Several ranges: the whole file (allowed by RFC 9110), as is a malformed header.
    expect((await get({ Range: "bytes=0-1,5-6" })).body.equals(data)).toBe(true);
  });

  it("sends an ETag, answers If-None-Match with 304, and applies If-Range", async () => {
    const first = await get({});
    const etag = String(first.headers["etag"]);
    expect(etag).toMatch(/^".+"$/);
    expect(first.headers["accept-ranges"]).toBe("bytes");
    const again = await get({ "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect((await get({ Range: "bytes=0-9", "If-Range": etag })).status).toBe(206);
    expect((await get({ Range: "bytes=0-9", "If-Range": '"stale"' })).status).toBe(200);
  });

  it("serves risky types as attachments, safe ones inline, always with nosniff", async () => {
    const { alice } = s.seed;
    const html = await uploaded(alice, "page.html", "<script>alert(1)</script>", "text/html");
    const svg = await uploaded(alice, "logo.svg", "<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml");
    const text = await uploaded(alice, "notes.txt", "plain", "text/plain");
    const disposition = async (u: string) => {
      // Clients percent-encode the non-ASCII names of Zulip's URLs.
      const r = await raw(s, "GET", encodeURI(u), { user: alice });
      expect(r.headers["x-content-type-options"], `${r.status} ${r.body.toString()}`).toBe("nosniff");
      return String(r.headers["content-disposition"]);
    };
    expect(await disposition(html)).toBe('attachment; filename="page.html"');
    expect(await disposition(svg)).toBe('attachment; filename="logo.svg"');
    expect(await disposition(text)).toBe('inline; filename="notes.txt"');
    expect(await disposition(url)).toBe('inline; filename="clip.mp4"');
    // The download form always says attachment.
    const download = await raw(s, "GET", url.replace("/user_uploads/", "/user_uploads/download/"), { user: alice });
    expect(download.headers["content-disposition"]).toBe('attachment; filename="clip.mp4"');
    expect(download.body.equals(data)).toBe(true);
    const unicode = await uploaded(alice, "résumé.txt", "x", "text/plain");
    expect(await disposition(unicode)).toBe(`inline; filename="r_sum_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt`);
  });
});

describe("path traversal", () => {
  it("refuses ../, encoded separators and NUL in every path parameter and in file names, and changes nothing", async () => {
    const { alice } = s.seed;
    const url = await uploaded(alice, "target.txt", "t");
    const [, , realm, hash, random, name] = url.split("/");
    const nasty = [
      "..",
      "%2E%2E",
      "..%2F..%2F..%2Fparley.lock",
      "%2F",
      "%00",
      "a%00b",
      "..%5C..%5C",
      "%252E%252E",
      "./.",
      "data.mdb",
    ];
    const before = fingerprint(s.t.store);
    const answers: string[] = [];
    for (const bad of nasty) {
      const variants = [
        `/user_uploads/${bad}/${hash}/${random}/${name}`,
        `/user_uploads/${realm}/${bad}/${random}/${name}`,
        `/user_uploads/${realm}/${hash}/${bad}/${name}`,
        `/user_uploads/${realm}/${hash}/${random}/${bad}`,
        `/user_uploads/${realm}/${hash}/${random}/${name}/${bad}`,
        `/user_uploads/download/${realm}/${hash}/${bad}/${name}`,
        `/user_uploads/thumbnail/${realm}/${hash}/${random}/${name}/${bad}`,
        `/user_uploads/temporary/${bad}/${name}`,
        `/api/v1/user_uploads/${realm}/${hash}/${bad}/${name}`,
        `/api/v1/attachments/${bad}`,
        `/api/v1/tus/${bad}`,
      ];
      for (const path of variants) {
        const r = await raw(s, "GET", path, { user: alice });
        if (r.status !== 404 && r.status !== 400 && r.status !== 405) answers.push(`${path}: ${r.status}`);
        if (r.body.includes(Buffer.from("SQLite")) || r.body.length > 300)
          answers.push(`${path}: leaked ${r.body.length} bytes`);
      }
    }
    expect(answers).toEqual([]);
    // Upload names with traversal never reach the disk path, and are stored sanitized.
    for (const evil of ["../../parley.lock", "..\\..\\x", "a/../../b", "%00../x", "..", "%2E%2E%2F%2E%2E%2Fx"]) {
      const r = await upload(s, alice, [{ name: evil, data: "e" }]);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(String(r.body["url"]).split("/").pop()).not.toMatch(/^\.\.?$|\/|\\|\0/);
    }
    expect(
      filesOnDisk(s).every((f) => /^\d+\/(?:[0-9a-f]{2}\/[A-Za-z0-9_-]{24}(?:\.840x560\.webp)?|tmp\/.*)$/.test(f)),
    ).toBe(true);
    // The refused requests changed nothing; the uploads only added attachments.
    expect(JSON.parse(fingerprint(s.t.store)).users).toEqual(JSON.parse(before).users);
  });
});
