/**
 * The web client's browser session in headless Chromium (http/session): one login per
 * browser, shared by new tabs and kept across reloads; logging out in one tab ends
 * every tab; a write forged by another site's page is refused. One browser launch.
 */
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/types.js";
import type { TestServer } from "../support/http.js";
import { startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client session", () => {
  let web: WebHarness;
  let server: TestServer;

  beforeAll(async () => {
    web = await startWebHarness("websession");
    server = web.server;
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  /** A fresh browser profile (its own cookie jar). */
  const newBrowser = () => web.newContext({ width: 1200, height: 760 });
  const open = (context: BrowserContext) => web.open(context);
  const logIn = (page: Page, user: User) => web.logIn(page, user);

  const whoami = (page: Page) => page.locator(".whoami").textContent();

  it("logs in once per browser: a new tab and a reload start logged in; another browser does not", async () => {
    const { alice } = server.seed;
    const context = await newBrowser();
    const first = await open(context);
    await logIn(first, alice);
    expect(await whoami(first)).toBe(alice.email);

    const second = await open(context);
    await second.waitForSelector("body[data-ready='1']");
    expect(await whoami(second)).toBe(alice.email);
    expect(await second.locator("#key-form").count()).toBe(0);

    await first.reload();
    await first.waitForSelector("body[data-ready='1']");
    expect(await whoami(first)).toBe(alice.email);

    const elsewhere = await open(await newBrowser());
    await elsewhere.locator("#key-form").waitFor();
    expect(server.t.store.webSessionCount(alice.id)).toBe(1);
    expect(web.pageErrors).toEqual([]);
  });

  it("logging out in one tab ends the session on the server and logs out the other tab", async () => {
    const { bob } = server.seed;
    const context = await newBrowser();
    const first = await open(context);
    await logIn(first, bob);
    const second = await open(context);
    await second.waitForSelector("body[data-ready='1']");
    const cookie = (await context.cookies()).find((c) => c.name === "sessionid")!;

    await first.click("button.logout");
    await first.locator("#key-form").waitFor();
    await second.locator("#key-form").waitFor();
    await second.locator("#login-error", { hasText: "another tab" }).waitFor();
    await expect.poll(() => server.t.store.webSessionCount(bob.id)).toBe(0);
    // The old cookie, replayed, is worth nothing now.
    const replay = await server.call(
      null,
      "GET",
      "/users/me",
      {},
      { headers: { Cookie: `sessionid=${cookie.value}` } },
    );
    expect(replay.status).toBe(401);
    // A reload stays logged out.
    await second.reload();
    await second.locator("#key-form").waitFor();
    expect(web.pageErrors).toEqual([]);
  });

  it("a tab whose session ended on the server (deactivation) returns to the login screen", async () => {
    const { guest, owner } = server.seed;
    const page = await open(await newBrowser());
    await logIn(page, guest);
    await server.call(owner, "DELETE", `/users/${guest.id}`);
    // The next request of the page (its event poll, answered by the deactivation's events) is refused.
    await page.locator("#key-form").waitFor({ timeout: 30_000 });
    await server.call(owner, "POST", `/users/${guest.id}/reactivate`);
    expect(web.pageErrors).toEqual([]);
  });

  it("refuses a write another site's page makes with the logged-in browser's cookie", async () => {
    const { alice, general } = server.seed;
    const context = await newBrowser();
    const page = await open(context);
    await logIn(page, alice);
    const newest = async () =>
      (
        (await server.call(alice, "GET", "/messages", { anchor: "newest", num_before: 1, num_after: 0 })).body[
          "messages"
        ] as { id: number }[]
      ).at(-1)?.id ?? 0;
    const before = await newest();
    const target = `${server.base}/api/v1/messages`;
    const forged = `type=stream&to=${general.id}&topic=forged&content=forged`;
    // Another site on this machine ("localhost" is not the site "127.0.0.1"): a form
    // posted at once and a no-cors fetch, both with the browser's cookies if it sends them.
    const inputs = forged
      .split("&")
      .map((kv) => kv.split("="))
      .map(([k, v]) => `<input name="${k}" value="${v}">`)
      .join("");
    const evilPage = `<!doctype html><form method="post" action="${target}">${inputs}</form><script>
      fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include",
        headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: ${JSON.stringify(forged)} })
        .finally(() => document.forms[0].submit());
      </script>`;
    const evilSite = createHttpServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html" }).end(evilPage));
    await new Promise<void>((resolve) => evilSite.listen(0, "127.0.0.1", resolve));
    const evilPort = (evilSite.address() as AddressInfo).port;
    const evil = await context.newPage();
    // Both forged requests reach the server (simple requests need no preflight) and are refused.
    const answers: number[] = [];
    evil.on("response", (r) => {
      if (r.url() === target) answers.push(r.status());
    });
    try {
      await evil.goto(`http://localhost:${evilPort}/`);
      await expect.poll(() => answers.length).toBe(2);
    } finally {
      evilSite.close();
    }
    for (const status of answers) expect([401, 403]).toContain(status);
    expect(await newest()).toBe(before);
    // The real page still works.
    await page.click(`.sidebar button[data-channel-id='${general.id}']`);
    await page.fill("#compose-topic", "real");
    await page.fill("#compose-text", "from the real page");
    await page.press("#compose-text", "Enter");
    await page.locator("li.msg", { hasText: "from the real page" }).waitFor();
    expect(web.pageErrors).toEqual([]);
  });
});
