/**
 * The web client's address and history in headless Chromium against a real server:
 * the view lives in the URL in Zulip's `#narrow/...` format, so a deep link opens it,
 * reload keeps it, Back and Forward move between views, and channel and topic links
 * inside messages change the view in the same tab (where the key is). And the phone
 * layout: at 390 px nothing scrolls sideways, the sidebar sits behind a button, and a
 * message can be written and sent with controls big enough for a finger.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/types.js";
import type { TestServer } from "../support/http.js";
import { startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client navigation", () => {
  let web: WebHarness;
  let server: TestServer;

  beforeAll(async () => {
    web = await startWebHarness("webnav");
    server = web.server;
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });
  const loggedIn = (user: User, viewport: { width: number; height: number }) => web.loggedIn(user, viewport);
  const shot = (page: Page, name: string) => web.shot(page, name);
  const title = (page: Page, text: string) => page.locator(".view-title", { hasText: text }).waitFor();
  const hash = (page: Page) => new URL(page.url()).hash;

  it("opens a deep link into a topic, keeps it on reload, moves with Back and Forward, follows links in messages", async () => {
    const { owner, alice, general } = server.seed;
    const store = server.t.store;
    store.subscribe(owner.id, { channels: [{ name: "url tests" }], principals: [owner.id, alice.id] });
    const topic = "release 1.0 (final)";
    const sent = store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: "url tests", topic },
      content: "the release topic",
    });
    const recipient = store.getMessage(owner.id, sent.id).message.recipient;
    const channelId = recipient.type === "channel" ? recipient.channelId : 0;
    store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: "general", topic: "links" },
      content: `see #**url tests>${topic}** and https://example.com/#narrow/channel/1-elsewhere`,
    });
    // Zulip's spelling: spaces become `-` in the channel's slug; `.`, `(`, `)` and `%`
    // escapes are written with `.` in the topic.
    const topicHash = `#narrow/channel/${channelId}-url-tests/topic/release.201.2E0.20.28final.29`;

    const page = await loggedIn(alice, { width: 1200, height: 760 });
    // A deep link, opened as a new page load in a tab that holds the key.
    await page.goto("about:blank");
    await page.goto(`${server.base}/${topicHash}`);
    await page.waitForSelector("body[data-ready='1']");
    await title(page, `#url tests › ${topic}`);
    await page.locator("li.msg", { hasText: "the release topic" }).waitFor();
    expect(hash(page)).toBe(topicHash);

    await page.reload();
    await page.waitForSelector("body[data-ready='1']");
    await title(page, `#url tests › ${topic}`);
    expect(hash(page)).toBe(topicHash);

    // Views opened in the app become history entries.
    await page.click(`.sidebar button[data-channel-id='${general.id}']`);
    await title(page, "#general");
    expect(hash(page)).toBe(`#narrow/channel/${general.id}-general`);
    await page.click(".sidebar button[data-key='view:inbox']");
    await title(page, "Inbox");
    expect(hash(page)).toBe("#inbox");
    await page.goBack();
    await title(page, "#general");
    await page.goBack();
    await title(page, `#url tests › ${topic}`);
    expect(hash(page)).toBe(topicHash);
    await page.goForward();
    await title(page, "#general");
    expect(hash(page)).toBe(`#narrow/channel/${general.id}-general`);

    // A topic link inside a message: same tab, a view change, and Back returns.
    await page.fill("#search", "channel:general topic:links");
    await page.press("#search", "Enter");
    await title(page, "#general › links");
    const link = page.locator("li.msg .content a.stream-topic");
    expect(await link.getAttribute("target")).toBeNull();
    // Other links still open elsewhere, even one shaped like a narrow on another server.
    expect(await page.locator("li.msg .content a[href^='https://example.com']").getAttribute("target")).toBe("_blank");
    await link.click();
    await title(page, `#url tests › ${topic}`);
    await page.locator("li.msg", { hasText: "the release topic" }).waitFor();
    expect(hash(page)).toBe(topicHash);
    expect(page.context().pages()).toHaveLength(1);
    await page.goBack();
    await title(page, "#general › links");
    expect(web.pageErrors).toEqual([]);
  });

  it("works at phone width: no sideways scroll, sidebar behind a button, 44 px controls, a message sent", async () => {
    const { alice, bob, general } = server.seed;
    const width = 390;
    // Bob's Inbox has Alice's unread topic: a long name, which must wrap or be cut, not widen the page.
    await server.call(alice, "POST", "/messages", {
      type: "stream",
      to: general.id,
      topic: "a rather long topic name that would not fit on a phone screen at all",
      content: "averyveryverylongwordwithoutanyspacesthatmustnotwidenthepageatallwhateverhappens",
    });
    const page = await loggedIn(bob, { width, height: 844 });
    const overflow = () => page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    await page.locator(".inbox-item", { hasText: "a rather long topic" }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shot(page, "phone-inbox");

    // The sidebar is hidden until the menu button opens it.
    const sidebar = page.locator("#sidebar");
    const menu = page.locator("button.menu-toggle");
    expect(await sidebar.isVisible()).toBe(false);
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await menu.click();
    await sidebar.waitFor({ state: "visible" });
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shot(page, "phone-sidebar");
    // Choosing a channel opens it and puts the sidebar away.
    await page.click(`.sidebar button[data-channel-id='${general.id}']`);
    await title(page, "#general");
    await sidebar.waitFor({ state: "hidden" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await page.locator("li.msg", { hasText: "averyvery" }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);

    // Log out, the compose box and Send are on screen, and every visible control is at least 44 px.
    const inView = async (selector: string): Promise<boolean> => {
      const box = await page.locator(selector).first().boundingBox();
      return box !== null && box.x >= 0 && box.x + box.width <= width && box.y >= 0 && box.y + box.height <= 844;
    };
    for (const selector of [".logout", "#compose-topic", "#compose-text", ".compose .send", "#search"])
      expect(await inView(selector), selector).toBe(true);
    // Run in the page (this file is type-checked without the DOM library, hence a string).
    const small = await page.evaluate<string[]>(`
      [...document.querySelectorAll("button, select, input, textarea, .nav-item")]
        .filter((el) => el.offsetParent !== null && !el.closest(".visually-hidden"))
        .map((el) => ({ el, r: el.getBoundingClientRect() }))
        .filter(({ r }) => r.width > 0 && (r.width < 44 || r.height < 44))
        .map(({ el, r }) => el.tagName + "." + el.className + " " + Math.round(r.width) + "x" + Math.round(r.height))
    `);
    expect(small).toEqual([]);

    await page.fill("#compose-topic", "from a phone");
    await page.fill("#compose-text", "sent at 390 px");
    await page.click(".compose .send");
    await page.locator("li.msg", { hasText: "sent at 390 px" }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shot(page, "phone-channel");
    const sent = await server.call(alice, "GET", "/messages", {
      anchor: "newest",
      num_before: 1,
      num_after: 0,
      narrow: JSON.stringify([{ operator: "channel", operand: general.id }]),
    });
    expect(sent.body["messages"]).toMatchObject([{ subject: "from a phone", content: "<p>sent at 390 px</p>" }]);
    expect(web.pageErrors).toEqual([]);
  });
});
