/**
 * The image proxy (Zulip's camo) end to end: a message's external image is rendered
 * as a signed /external_content/ URL, and GET on it fetches the image from a real
 * HTTP server on loopback (allowed here by the server option tests use) and serves
 * it sandboxed, with none of the reader's headers reaching the image's host.
 * Refusals: bad signatures, non-images, redirect loops, oversized bodies, failing
 * hosts, and (with the default policy) loopback and private addresses.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  camoPath,
  ImageFetchRefused,
  ImageProxy,
  publicAndLoopbackAddresses,
  signedImageUrls,
} from "../../src/external-content/index.js";
import { StaticFiles } from "../../src/http/static-files.js";
import { createMarkdownRenderer } from "../../src/markdown/index.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";

const KEY = "camo-test-key-5b0e1c9d2f7a4e36";
/** A PNG signature and some bytes: the proxy checks the declared type, the bytes travel unchanged. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(600, 7)]);
const MAX_BYTES = 2048;

let images: Server;
let imageBase: string;
/** Every request the image host received: path and headers. */
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
const hanging: ServerResponse[] = [];
let s: TestServer;
let strict: TestServer;

function route(path: string, res: ServerResponse): void {
  const port = (images.address() as { port: number }).port;
  const send = (status: number, type: string, body: string | Buffer) =>
    res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) }).end(body);
  const redirect = (location: string) => res.writeHead(302, { Location: location }).end();
  if (path === "/cat.png" || path === "/dog.png") send(200, "image/png", PNG);
  else if (path === "/page.html") send(200, "text/html", "<script>alert(document.cookie)</script>");
  else if (path === "/drawing.svg")
    send(200, "image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  else if (path === "/moved.png") redirect("/cat.png");
  else if (path === "/loop.png") redirect("/loop.png");
  else if (path === "/elsewhere.png") redirect(`http://127.0.0.2:${port}/cat.png`);
  else if (path === "/to-file.png") redirect("file:///etc/passwd");
  else if (path === "/big.png") send(200, "image/png", Buffer.alloc(MAX_BYTES + 1));
  else if (path === "/big-chunked.png") {
    res.writeHead(200, { "Content-Type": "image/png" });
    for (let i = 0; i < 4; i++) res.write(Buffer.alloc(MAX_BYTES / 2));
    res.end();
  } else if (path === "/slow.png") hanging.push(res);
  else if (path === "/broken.png") send(500, "text/plain", "oops");
  else send(404, "text/plain", "no such image");
}

beforeAll(async () => {
  images = createHttpServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    route(req.url ?? "", res);
  });
  await new Promise<void>((ok) => images.listen(0, "127.0.0.1", ok));
  imageBase = `http://127.0.0.1:${(images.address() as { port: number }).port}`;
  const renderer = createMarkdownRenderer({ externalImageUrl: signedImageUrls(KEY) });
  s = await startServer(
    { camoKey: KEY, externalContent: { isAllowedAddress: publicAndLoopbackAddresses, maxBytes: MAX_BYTES } },
    { renderer },
  );
  // The default address policy, as `parley serve` runs.
  strict = await startServer({ camoKey: KEY });
});

afterAll(async () => {
  s.close();
  strict.close();
  for (const res of hanging) res.destroy();
  await new Promise((done) => images.close(done));
});

const get = (server: TestServer, path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.base}${path}`, { headers });
const hitsOf = (path: string) => seen.filter((r) => r.path === path).length;

/** GET of `url` through `server`'s proxy, answered as [status, body]. */
async function proxied(server: TestServer, url: string): Promise<[number, unknown]> {
  const response = await get(server, camoPath(KEY, url));
  return [response.status, await response.json()];
}
async function refusal(response: Response): Promise<[number, unknown]> {
  return [response.status, await response.json()];
}
const refused = (status: number, msg: string) => [status, { result: "error", code: "BAD_REQUEST", msg }];

describe("external images in messages", () => {
  it("are rendered as signed /external_content/ URLs and served from there, without the reader's headers", async () => {
    const { alice, bob } = s.seed;
    const sent = await s.call(alice, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "pets",
      content: `look: ${imageBase}/cat.png`,
    });
    const message = await s.call(bob, "GET", `/messages/${String(sent.body["id"])}`);
    const html = String((message.body["message"] as Record<string, unknown>)["content"]);
    const src = /<img src="([^"]+)"/.exec(html)?.[1] ?? "";
    expect(src).toBe(camoPath(KEY, `${imageBase}/cat.png`));
    expect(html).toContain(`<a href="${imageBase}/cat.png">`);

    const response = await get(s, src, {
      Cookie: "sessionid=reader-secret",
      Authorization: basicAuth(s.t.store.getUser(bob.id)),
      Referer: `${s.base}/#narrow/channel/general`,
      "User-Agent": "ReaderBrowser/1.0",
      "X-Forwarded-For": "203.0.113.9",
    });
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(PNG);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("cache-control")).toMatch(/max-age=\d+/);

    const upstream = seen.filter((r) => r.path === "/cat.png");
    expect(upstream).toHaveLength(1);
    const sentHeaders = Object.keys(upstream[0]!.headers).sort();
    expect(sentHeaders).toEqual(["accept", "accept-encoding", "connection", "host", "user-agent"]);
    expect(JSON.stringify(upstream[0]!.headers)).not.toMatch(/reader-secret|ReaderBrowser|203\.0\.113\.9|Basic /);
  });

  it("are fetched once and then served from the cache; the ETag revalidates", async () => {
    const path = camoPath(KEY, `${imageBase}/dog.png`);
    const [first, second] = await Promise.all([get(s, path), get(s, path)]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await get(s, path);
    expect(Buffer.from(await third.arrayBuffer())).toEqual(PNG);
    expect(hitsOf("/dog.png")).toBe(1);
    const etag = third.headers.get("etag") ?? "";
    expect(etag).not.toBe("");
    const revalidated = await get(s, path, { "If-None-Match": etag });
    expect(revalidated.status).toBe(304);
    expect(hitsOf("/dog.png")).toBe(1);
  });

  it("follow redirects, up to a bound", async () => {
    const moved = await get(s, camoPath(KEY, `${imageBase}/moved.png`));
    expect(moved.status).toBe(200);
    expect(Buffer.from(await moved.arrayBuffer())).toEqual(PNG);
    expect(await proxied(s, `${imageBase}/loop.png`)).toEqual(refused(400, "More than 5 redirects"));
    expect(hitsOf("/loop.png")).toBe(6);
    expect(await proxied(s, `${imageBase}/to-file.png`)).toEqual(refused(400, "Only http and https URLs are proxied"));
  });
});

describe("refusals", () => {
  it("a URL this server did not sign: 403, and nothing is fetched", async () => {
    const path = camoPath(KEY, `${imageBase}/cat.png`);
    const [, , digest, hex] = path.split("/");
    const before = seen.length;
    const otherUrl = Buffer.from(`${imageBase}/dog.png`).toString("hex");
    const flipped = `${digest!.slice(0, -1)}${digest!.endsWith("0") ? "1" : "0"}`;
    const signedWithOtherKey = camoPath("another-key-entirely", `${imageBase}/cat.png`);
    const forged = [
      `/external_content/${flipped}/${hex!}`,
      `/external_content/${digest!}/${otherUrl}`,
      signedWithOtherKey,
      `/external_content/${digest!}/zz`,
      `/external_content/xyz/${hex!}`,
    ];
    for (const bad of forged) {
      expect(await refusal(await get(s, bad)), bad).toEqual(refused(403, "Invalid signature"));
    }
    expect(seen.length).toBe(before);
  });

  it("a page or an SVG instead of a raster image: 400", async () => {
    expect(await proxied(s, `${imageBase}/page.html`)).toEqual(refused(400, "The URL is not an image"));
    expect(await proxied(s, `${imageBase}/drawing.svg`)).toEqual(refused(400, "The URL is not an image"));
  });

  it("an image over the size limit, declared or streamed: 400", async () => {
    const tooLarge = refused(400, `The image is larger than ${MAX_BYTES} bytes`);
    expect(await proxied(s, `${imageBase}/big.png`)).toEqual(tooLarge);
    expect(await proxied(s, `${imageBase}/big-chunked.png`)).toEqual(tooLarge);
  });

  it("a missing image is 404, a failing host 502", async () => {
    expect(await proxied(s, `${imageBase}/missing.png`)).toEqual(refused(404, "The image's host answered 404"));
    expect(await proxied(s, `${imageBase}/broken.png`)).toEqual(refused(502, "The image's host answered 500"));
  });

  it("by default, loopback, private and link-local hosts are refused before any connection", async () => {
    const port = new URL(imageBase).port;
    const before = seen.length;
    for (const [url, host] of [
      [`${imageBase}/cat.png`, "127.0.0.1"],
      [`http://localhost:${port}/cat.png`, "localhost"],
      [`http://[::1]:${port}/cat.png`, "::1"],
      [`http://[::ffff:127.0.0.1]:${port}/cat.png`, "::ffff:7f00:1"],
      ["http://169.254.169.254/latest/meta-data/iam.png", "169.254.169.254"],
      ["http://10.0.0.1/x.png", "10.0.0.1"],
    ] as const) {
      expect(await proxied(strict, url), url).toEqual(refused(403, `The image's host ${host} is not a public address`));
    }
    expect(seen.length).toBe(before);
  });

  it("without a camo key the route does not exist", async () => {
    const plain = await startServer();
    try {
      expect((await get(plain, camoPath(KEY, `${imageBase}/cat.png`))).status).toBe(404);
    } finally {
      plain.close();
    }
  });
});

describe("the proxy's fetch limits", () => {
  const withProxy = async (
    options: Partial<ConstructorParameters<typeof ImageProxy>[0]>,
    run: (proxy: ImageProxy, root: string) => Promise<void>,
  ) => {
    const root = mkdtempSync(join(tmpdir(), "parley-proxy-test-"));
    try {
      await run(new ImageProxy({ key: KEY, root, isAllowedAddress: publicAndLoopbackAddresses, ...options }), root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
  const refusedKind = (promise: Promise<unknown>) =>
    promise.then(
      () => "fetched",
      (error: unknown) => (error instanceof ImageFetchRefused ? error.kind : String(error)),
    );

  it("every redirect hop is checked against the address policy", async () => {
    await withProxy({ isAllowedAddress: (address) => address === "127.0.0.1" }, async (proxy) => {
      expect(await refusedKind(proxy.image(`${imageBase}/cat.png`))).toBe("fetched");
      expect(await refusedKind(proxy.image(`${imageBase}/elsewhere.png`))).toBe("address");
    });
  });

  it("a host that does not answer in time is given up", async () => {
    await withProxy({ timeoutMs: 200 }, async (proxy) => {
      expect(await refusedKind(proxy.image(`${imageBase}/slow.png`))).toBe("timeout");
    });
  });

  it("a refused body leaves no file behind", async () => {
    await withProxy({ maxBytes: MAX_BYTES }, async (proxy, root) => {
      expect(await refusedKind(proxy.image(`${imageBase}/big-chunked.png`))).toBe("too-large");
      expect(await refusedKind(proxy.image(`${imageBase}/page.html`))).toBe("not-image");
      expect(readdirSync(root)).toEqual([]);
    });
  });
});

describe("the web client's page", () => {
  it("loads images from this server only (img-src has no external source)", () => {
    const root = mkdtempSync(join(tmpdir(), "parley-web-"));
    try {
      writeFileSync(join(root, "index.html"), "<!doctype html>");
      const page = new StaticFiles(root).reply("GET", "/", "");
      const csp = page?.reply.headers?.find(([k]) => k === "Content-Security-Policy")?.[1] ?? "";
      expect(/img-src ([^;]*)/.exec(csp)?.[1]).toBe("'self' data:");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
