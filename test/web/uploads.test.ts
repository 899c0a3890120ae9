/**
 * Uploads in the web client, headless Chromium: a file chosen with the 📎 button,
 * dropped on the compose box or pasted becomes Zulip's `[name](/user_uploads/...)`
 * link; the image shows inline to a second person (at phone width), whose browser
 * loads it with the session cookie; a file link opens. One browser launch.
 */
import { deflateSync } from "node:zlib";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import type { User } from "../../src/engine/types.js";
import type { TestServer } from "../support/http.js";
import { startWebHarness, type WebHarness } from "../support/web-client.js";

/** CRC-32 as PNG chunks need it. */
function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** A real PNG: `size` square pixels of one colour. */
function png(size: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3, 0x5a)]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

describe("web client uploads", () => {
  let web: WebHarness;
  let server: TestServer;

  beforeAll(async () => {
    web = await startWebHarness("webuploads", { config: { ...DEFAULT_CONFIG, MAX_FILE_UPLOAD_SIZE: 1 } });
    server = web.server;
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  async function loggedIn(user: User, viewport: { width: number; height: number }): Promise<Page> {
    const page = await web.loggedIn(user, viewport);
    // Uploads and image decoding take longer than a click under load.
    page.setDefaultTimeout(15_000);
    return page;
  }

  it("an image chosen with the button shows inline to a second person at phone width; a dropped and a pasted file link open", async () => {
    const { alice, bob, general } = server.seed;
    const alicePage = await loggedIn(alice, { width: 1200, height: 760 });
    await alicePage.click(`.sidebar button[data-channel-id='${general.id}']`);
    await alicePage.fill("#compose-topic", "pictures");
    await alicePage.fill("#compose-text", "look:");
    await alicePage.setInputFiles("#compose-file", { name: "square.png", mimeType: "image/png", buffer: png(64) });
    await expect
      .poll(() => alicePage.inputValue("#compose-text"))
      .toMatch(/^look: \[square\.png\]\(\/user_uploads\/\d+\/[^)]+\/square\.png\) $/);
    // Dropped and pasted files, built in the page as a browser hands them over.
    for (const [name, event] of [
      ["dropped.txt", "drop"],
      ["pasted.txt", "paste"],
    ] as const)
      await alicePage.evaluate(`(() => {
        const data = new DataTransfer();
        data.items.add(new File(["contents of ${name}"], "${name}", { type: "text/plain" }));
        const init = { bubbles: true, cancelable: true };
        document.getElementById("compose-text").dispatchEvent(${
          event === "drop"
            ? 'new DragEvent("drop", { ...init, dataTransfer: data })'
            : 'new ClipboardEvent("paste", { ...init, clipboardData: data })'
        });
      })()`);
    await expect.poll(() => alicePage.inputValue("#compose-text")).toContain("[pasted.txt](/user_uploads/");
    expect(await alicePage.inputValue("#compose-text")).toContain("[dropped.txt](/user_uploads/");
    expect(await alicePage.locator(".compose-status").textContent()).toBe("");
    await alicePage.press("#compose-text", "Enter");
    await alicePage.locator("li.msg", { hasText: "look:" }).waitFor();

    const bobPage = await loggedIn(bob, { width: 390, height: 800 });
    await bobPage.click("button.menu-toggle");
    await bobPage.click(`.sidebar button[data-channel-id='${general.id}']`);
    const message = bobPage.locator("li.msg", { hasText: "look:" });
    await message.waitFor();
    const image = message.locator(".message_inline_image img");
    await image.waitFor();
    await expect
      .poll(() => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth > 0))
      .toBe(true);
    // The file links open for Bob (his session cookie is accepted under /user_uploads).
    for (const name of ["dropped.txt", "pasted.txt"]) {
      const href = await message.locator(`a`, { hasText: name }).first().getAttribute("href");
      expect(href).toMatch(/^\/user_uploads\//);
      const download = await bobPage.request.get(`${server.base}${href}`);
      expect([download.status(), await download.text()]).toEqual([200, `contents of ${name}`]);
    }
    expect(web.pageErrors).toEqual([]);
  });

  it("shows the server's refusal and leaves no placeholder behind", async () => {
    const { alice, general } = server.seed;
    const page = await loggedIn(alice, { width: 1200, height: 760 });
    await page.click(`.sidebar button[data-channel-id='${general.id}']`);
    await page.fill("#compose-text", "before");
    // Over the server's MAX_FILE_UPLOAD_SIZE (1 MiB here): its message is shown.
    const big = { name: "big.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(1024 * 1024 + 1024) };
    await page.setInputFiles("#compose-file", big);
    await page.locator(".compose-status", { hasText: /^big\.bin: .*larger/ }).waitFor();
    expect(await page.inputValue("#compose-text")).toBe("before");
    expect(web.pageErrors).toEqual([]);
  });
});
