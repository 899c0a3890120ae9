/**
 * @module test/support/web-client
 * The web client in headless Chromium against a real server, for browser tests: a
 * fresh build and server per file, pages logged in with a user's API key (as the login
 * screen's key form does), screenshots (into docs/screenshots with PARLEY_SCREENSHOTS=1),
 * and the page errors collected so a test can require none.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { buildWeb } from "../../tools/build-web.js";
import type { User } from "../../src/engine/types.js";
import { launchChromium } from "./chromium.js";
import { startServer, type TestServer } from "./http.js";

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export interface WebHarness {
  readonly server: TestServer;
  readonly browser: Browser;
  readonly pageErrors: string[];
  /** A new browser context (its own storage) with the user logged in and the first view shown. */
  loggedIn(
    user: User,
    viewport: { width: number; height: number },
    options?: { permissions?: string[]; hash?: string },
  ): Promise<Page>;
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startWebHarness(prefix: string): Promise<WebHarness> {
  const dir = mkdtempSync(join(tmpdir(), `parley-${prefix}-`));
  await buildWeb(join(dir, "web"));
  const server = await startServer({ webRoot: join(dir, "web") });
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];
  return {
    server,
    browser,
    pageErrors,
    async loggedIn(user, viewport, options = {}) {
      const context = await browser.newContext({ viewport });
      if (options.permissions) await context.grantPermissions(options.permissions, { origin: server.base });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on("pageerror", (error) => pageErrors.push(error.stack ?? error.message));
      await page.goto(`${server.base}/${options.hash ?? ""}`);
      await page.fill("#key-email", user.email);
      await page.fill("#key-value", server.t.store.getUser(user.id).apiKey);
      await page.click("#key-form button[type=submit]");
      await page.waitForSelector("body[data-ready='1']");
      return page;
    },
    async shot(page, name) {
      const to =
        process.env["PARLEY_SCREENSHOTS"] === "1" ? join(process.cwd(), "docs", "screenshots") : join(dir, "shots");
      mkdirSync(to, { recursive: true });
      await page.screenshot({ path: join(to, `${name}.png`) });
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
