/**
 * Issue #26, item 1, in a real browser: the attack as reported. A member uploads HTML
 * through tus with the filetype `text/plain;a=b,text/html` and hands a victim the
 * temporary URL (no credentials needed); Chromium rendered it as HTML on the server's
 * origin, where its script could register a service worker. Now the page runs no
 * script: it is shown as plain text (or downloaded).
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { basicAuth, startServer, type TestServer } from "../../support/http.js";
import { launchChromium } from "../../support/chromium.js";
import { raw } from "./support.js";

let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  s = await startServer();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  s.close();
});

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

it("a tus upload typed `text/plain;a=b,text/html` runs no script in Chromium through its temporary URL", async () => {
  const { alice } = s.seed;
  const html = Buffer.from(
    `<html><body><script>document.title = "ran"; navigator.serviceWorker?.register("/sw.js");</script></body></html>`,
  );
  const headers = { Authorization: basicAuth(s.t.store.getUser(alice.id)), "Tus-Resumable": "1.0.0" };
  const metadata = `filename ${b64("page.txt")},filetype ${b64("text/plain;a=b,text/html")}`;
  const created = await raw(s, "POST", "/api/v1/tus", {
    headers: { ...headers, "Upload-Length": String(html.length), "Upload-Metadata": metadata },
  });
  const patchHeaders = { ...headers, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0" };
  const done = await raw(s, "PATCH", String(created.headers["location"]), { headers: patchHeaders, body: html });
  const temporary = (await raw(s, "GET", `/api/v1${done.json()["url"] as string}`, { user: alice })).json()[
    "url"
  ] as string;

  const page = await browser.newPage();
  try {
    const loaded = await page.goto(`${s.base}${temporary}`).then(
      () => true,
      // A download (attachment) never becomes a page: as safe as it gets.
      (error: unknown) => (String(error).includes("Download is starting") ? false : Promise.reject(error)),
    );
    if (loaded) {
      expect(await page.title()).not.toBe("ran");
      expect(await page.evaluate("document.contentType")).toBe("text/plain");
      expect(await page.evaluate("document.body.innerText")).toContain("<script>");
    }
  } finally {
    await page.close();
  }
});
