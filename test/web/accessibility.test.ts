/**
 * An automated accessibility check of the web client: axe-core (from npm) injected into
 * the page in Chromium and run over the main views (Inbox, a channel, a topic, the
 * channel browser, people, recent conversations, settings) at desktop and phone widths,
 * with a user card and a message menu open too. No serious or critical violation may
 * remain; the rest are reported by the test's failure message if they turn serious.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousViolations, type Violation } from "../support/axe.js";
import { DESKTOP, PHONE, startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client accessibility (axe-core)", () => {
  let web: WebHarness;

  beforeAll(async () => {
    web = await startWebHarness("weba11y");
    const { alice, bob, general } = web.server.seed;
    for (const [topic, content] of [
      ["release plans", "Shipping on **Friday**, see https://example.com and `npm run build`"],
      ["lunch", "> quoted\n\n- one\n- two\n\n:tada: @**Bob**"],
    ] as const)
      await web.server.call(alice, "POST", "/messages", { type: "stream", to: general.id, topic, content });
    await web.server.call(alice, "POST", "/messages", { type: "private", to: JSON.stringify([bob.id]), content: "hi" });
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  for (const [label, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const)
    it(`finds no serious or critical violations in the main views at ${label} width`, async () => {
      const { bob, general } = web.server.seed;
      const page = await web.loggedIn(bob, viewport);
      const views: [string, string, string][] = [
        ["inbox", "#inbox", "Inbox"],
        ["channel", `#narrow/channel/${general.id}-general`, "#general"],
        ["topic", `#narrow/channel/${general.id}-general/topic/lunch`, "#general › lunch"],
        ["channels", "#channels/all", "All channels"],
        ["people", "#people", "People"],
        ["recent", "#recent", "Recent conversations"],
        ["settings", "#settings/profile", "Settings"],
      ];
      const found: Record<string, Violation[]> = {};
      for (const [name, hash, title] of views) {
        await page.goto(`${web.server.base}/${hash}`);
        await page.waitForSelector("body[data-ready='1']");
        await page.locator(".view-title", { hasText: title }).waitFor();
        if (name === "channel" || name === "topic") await page.locator("li.msg").first().waitFor();
        if (name === "channels") await page.locator(".channels-page li").first().waitFor();
        if (name === "recent") await page.locator(".recent-page li").first().waitFor();
        found[name] = await seriousViolations(page);
        if ((name === "inbox" && label === "desktop") || name === "topic" || name === "settings")
          await web.shot(page, `${label}-${name}`);
        if (name === "topic") {
          await page.locator("li.msg button[data-action=more]").first().click();
          await page.locator(".message-menu").waitFor();
          found["message menu"] = await seriousViolations(page);
          await page.keyboard.press("Escape");
          await page.locator("li.msg button.sender").first().click();
          await page.locator("dialog.user-card").waitFor();
          found["user card"] = await seriousViolations(page);
          await page.keyboard.press("Escape");
        }
      }
      expect(found).toEqual(Object.fromEntries(Object.keys(found).map((k) => [k, []])));
      expect(web.pageErrors).toEqual([]);
    });
});
