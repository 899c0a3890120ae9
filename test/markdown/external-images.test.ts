/**
 * External images in messages go through the server's image proxy (Zulip's camo):
 * the renderer writes a signed /external_content/ URL into the <img>, so a reader's
 * browser never asks the sender's host; the server's own files stay as they are.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { RenderContext } from "../../src/engine/render.js";
import { signedImageUrls } from "../../src/external-content/index.js";
import { createMarkdownRenderer, renderMarkdown } from "../../src/markdown/index.js";

const KEY = "test-camo-key-0123456789abcdef";

const context: RenderContext = {
  findUsersByName: () => [],
  findUserById: () => undefined,
  findChannelByName: () => undefined,
  findGroupByName: () => undefined,
  findUpload: (pathId) =>
    pathId === "2/ab/photo.png" ? { contentType: "image/png", width: 640, height: 480, animated: false } : undefined,
  findRealmEmoji: (name) => (name === "party" ? "/user_avatars/2/emoji/images/party.png" : undefined),
  realmUrl: "",
};

const proxied = createMarkdownRenderer({ externalImageUrl: signedImageUrls(KEY) });

/** Zulip's camo URL computed independently: HMAC-SHA1 hex, then the URL's UTF-8 bytes in hex. */
function camo(url: string): string {
  return `/external_content/${createHmac("sha1", KEY).update(url, "utf8").digest("hex")}/${Buffer.from(url, "utf8").toString("hex")}`;
}

const imgSources = (html: string) =>
  [...html.matchAll(/<img[^>]* src="([^"]*)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));

describe("external images are proxied", () => {
  it("a linked image's preview loads through /external_content/, the link keeps the original", () => {
    const url = "https://images.example.org/cat.png";
    const { html, hasImage } = proxied(`look ${url}`, context);
    expect(imgSources(html)).toEqual([camo(url)]);
    expect(html).toContain(`<a href="${url}">`);
    expect(html).not.toContain(`src="${url}"`);
    expect(hasImage).toBe(true);
  });

  it("image syntax, a bare image link, and URLs with queries and non-ASCII", () => {
    const url = "http://example.net/a/été.jpg?size=large&v=2";
    const encoded = "http://example.net/a/%C3%A9t%C3%A9.jpg?size=large&v=2";
    expect(imgSources(proxied(`![a cat](${url})`, context).html)).toEqual([camo(encoded)]);
    expect(imgSources(proxied("https://x.example/p.webp", context).html)).toEqual([camo("https://x.example/p.webp")]);
  });

  it("uploads and realm emoji, which this server serves, are untouched", () => {
    const html = proxied("[photo](/user_uploads/2/ab/photo.png) :party:", context).html;
    expect(imgSources(html)).toEqual([
      "/user_avatars/2/emoji/images/party.png",
      "/user_uploads/thumbnail/2/ab/photo.png/840x560.webp",
    ]);
  });

  it("an image URL too long to proxy gets no preview: the link stays, nothing loads from the host", () => {
    const url = `https://example.com/${"a".repeat(3000)}.png`;
    const { html, hasImage } = proxied(url, context);
    expect(imgSources(html)).toEqual([]);
    expect(html).toContain(`href="${url}"`);
    expect(hasImage).toBe(false);
  });

  it("without the option (embedders, tests), images are linked directly as before", () => {
    const url = "https://images.example.org/cat.png";
    expect(imgSources(renderMarkdown(url, context).html)).toEqual([url]);
  });
});
