/**
 * @module test/support/web-client
 * The web client in headless Chromium against a real server, for browser tests: a
 * fresh build and server per file, browser contexts (each its own cookie jar) and pages,
 * logging in with a user's API key (as the login screen's key form does), screenshots
 * (into docs/screenshots with PARLEY_SCREENSHOTS=1), and the page errors collected so a
 * test can require none.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { buildWeb } from "../../tools/build-web.js";
import type { ServerConfig } from "../../src/config/index.js";
import type { OpenStoreOptions } from "../../src/index.js";
import type { User } from "../../src/engine/types.js";
import { launchChromium } from "./chromium.js";
import { startServer, type TestServer } from "./http.js";

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

type Viewport = { readonly width: number; readonly height: number };

export interface WebHarness {
  readonly server: TestServer;
  readonly browser: Browser;
  readonly pageErrors: string[];
  /** A new browser context: its own storage and cookies, as another browser or person. */
  newContext(viewport?: Viewport): Promise<BrowserContext>;
  /** A new tab of the context at `/` (plus `hash`), its errors collected. */
  open(context: BrowserContext, hash?: string): Promise<Page>;
  /** Logs in on the login screen with the user's API key and waits for the first view. */
  logIn(page: Page, user: User): Promise<void>;
  /** A new browser context (its own storage) with the user logged in and the first view shown. */
  loggedIn(user: User, viewport: Viewport, options?: { permissions?: string[]; hash?: string }): Promise<Page>;
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * `config`: the server's, where a test needs other limits (DEFAULT_CONFIG otherwise);
 * `store`: the store's options (a test clock).
 */
export async function startWebHarness(
  prefix: string,
  options: { config?: ServerConfig; store?: OpenStoreOptions } = {},
): Promise<WebHarness> {
  const dir = mkdtempSync(join(tmpdir(), `parley-${prefix}-`));
  await buildWeb(join(dir, "web"));
  const server = await startServer(
    { webRoot: join(dir, "web"), ...(options.config ? { config: options.config } : {}) },
    options.store ?? {},
  );
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];
  const harness: WebHarness = {
    server,
    browser,
    pageErrors,
    async newContext(viewport = DESKTOP) {
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      return context;
    },
    async open(context, hash = "") {
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on("pageerror", (error) => pageErrors.push(error.stack ?? error.message));
      await page.goto(`${server.base}/${hash}`);
      return page;
    },
    async logIn(page, user) {
      await page.fill("#key-email", user.email);
      await page.fill("#key-value", server.t.store.getUser(user.id).apiKey);
      await page.click("#key-form button[type=submit]");
      await page.waitForSelector("body[data-ready='1']");
    },
    async loggedIn(user, viewport, loginOptions = {}) {
      const context = await harness.newContext(viewport);
      if (loginOptions.permissions) await context.grantPermissions(loginOptions.permissions, { origin: server.base });
      const page = await harness.open(context, loginOptions.hash);
      await harness.logIn(page, user);
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
  return harness;
}
