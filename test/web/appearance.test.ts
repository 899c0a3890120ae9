/**
 * How the web client looks, in headless Chromium: avatars in the message list, the
 * people list, the user card and compose suggestions (an uploaded one as the server's
 * image, live when it changes; initials for Gravatar ones); the theme from the
 * color_scheme setting (dark, light, automatic following the system) and times by
 * twenty_four_hour_time, both applied live when the setting changes; axe-core finds no
 * serious violation in the dark theme. Makes the rich-content, dark-theme and avatar
 * screenshots (PARLEY_SCREENSHOTS=1). One browser launch.
 */
import type { Locator, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/types.js";
import { seriousViolations, type Violation } from "../support/axe.js";
import { DESKTOP, PHONE, startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client appearance", () => {
  let web: WebHarness;
  let richTopic = "";

  beforeAll(async () => {
    web = await startWebHarness("webappearance");
    const { alice, bob, general } = web.server.seed;
    const send = (topic: string, content: string) =>
      web.server.call(alice, "POST", "/messages", { type: "stream", to: general.id, topic, content });
    await send("avatars", "a message with my avatar beside it");
    richTopic = "rich content";
    await send(richTopic, "Shipping on **Friday** :tada: :rocket: @**Bob**");
    await send(richTopic, "```python\ndef answer():\n    return 42  # the answer\n```");
    await send(richTopic, "Euler: $$e^{i\\pi} + 1 = 0$$\n```math\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n```");
    await send(richTopic, "```spoiler Who did it?\nThe **butler**, with `the candlestick`\n```");
    await web.server.call(alice, "POST", "/messages", { type: "private", to: JSON.stringify([bob.id]), content: "hi" });
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  const topicHash = (topic: string) =>
    `#narrow/channel/${web.server.seed.general.id}-general/topic/${encodeURIComponent(topic)}`;

  async function openTopic(page: Page, topic: string): Promise<void> {
    await page.evaluate(`location.hash = ${JSON.stringify(topicHash(topic))}`);
    await page.locator(".view-title", { hasText: topic }).waitFor();
    await page.locator("li.msg").first().waitFor();
  }

  const setting = async (user: User, name: string, value: unknown) =>
    expect((await web.server.call(user, "PATCH", "/settings", { [name]: value })).status).toBe(200);

  const theme = (page: Page) => page.evaluate<string | undefined>("document.documentElement.dataset.theme");
  const background = (page: Page) =>
    page.evaluate<string>("getComputedStyle(document.documentElement).backgroundColor");

  it("shows avatars in the message list, people list, user card and compose suggestions, from this server only", async () => {
    const { alice, bob, guest } = web.server.seed;
    // Alice uploads an avatar (POST /users/me/avatar); the others keep Gravatar, shown as initials.
    const form = new FormData();
    const png = await sharp({ create: { width: 120, height: 120, channels: 3, background: "#2a7" } })
      .png()
      .toBuffer();
    form.append("file", new Blob([png], { type: "image/png" }), "me.png");
    expect((await web.server.call(alice, "POST", "/users/me/avatar", {}, { body: form })).status).toBe(200);
    const context = await web.newContext(DESKTOP);
    const imageHosts = new Set<string>();
    context.on("request", (r) => {
      if (r.resourceType() === "image") imageHosts.add(new URL(r.url()).origin);
    });
    const page = await web.open(context, topicHash("avatars"));
    await web.logIn(page, bob);
    const loaded = (avatar: Locator) =>
      avatar.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth);
    const row = page.locator("li.msg", { hasText: "with my avatar" });
    await row.waitFor();
    const rowAvatar = row.locator("button.sender .avatar");
    expect(await rowAvatar.evaluate((el) => el.tagName)).toBe("IMG");
    await expect.poll(() => loaded(rowAvatar)).toBe(100);

    await page.evaluate(`location.hash = "#people"`);
    const person = (id: number) => page.locator(`.people-page li[data-user-id='${id}'] .avatar`);
    await person(alice.id).waitFor();
    expect(await person(alice.id).evaluate((el) => el.tagName)).toBe("IMG");
    expect(await person(guest.id).textContent()).toBe("GG");
    await web.shot(page, "desktop-people-avatars");

    await page.locator(`.people-page li[data-user-id='${guest.id}'] button`).click();
    expect(await page.locator("dialog.user-card .avatar.large").textContent()).toBe("GG");
    await page.keyboard.press("Escape");
    await page.locator(`.people-page li[data-user-id='${alice.id}'] button`).click();
    expect(await page.locator("dialog.user-card .avatar.large").evaluate((el) => el.tagName)).toBe("IMG");
    await page.keyboard.press("Escape");

    await openTopic(page, "avatars");
    await page.fill("#compose-text", "@gus");
    const suggestion = page.locator(".autocomplete li", { hasText: "Gus Guest" });
    await suggestion.waitFor();
    expect(await suggestion.locator(".avatar").textContent()).toBe("GG");
    await page.fill("#compose-text", "@ali");
    await page.locator(".autocomplete li", { hasText: "Alice" }).locator("img.avatar").waitFor();
    await page.fill("#compose-text", "");

    // Back to Gravatar while the page is open: the realm_user update redraws the rows with initials.
    expect((await web.server.call(alice, "DELETE", "/users/me/avatar")).status).toBe(200);
    await expect.poll(() => rowAvatar.evaluate((el) => el.tagName)).toBe("SPAN");
    expect(await rowAvatar.textContent()).toBe("A");

    // Bob sets his own in Settings, and removes it again.
    const ownAvatar = async () =>
      String((await web.server.call(bob, "GET", "/users/me", { client_gravatar: false })).body["avatar_url"]);
    await page.evaluate(`location.hash = "#settings/profile"`);
    await page.locator("#setting-avatar").setInputFiles({ name: "bob.png", mimeType: "image/png", buffer: png });
    await page.locator(".avatar-field img.avatar").waitFor();
    expect(await ownAvatar()).toMatch(/^\/user_avatars\//u);
    await page.click("#remove-avatar");
    await page.locator(".avatar-field span.avatar").waitFor();
    expect(await page.locator("#remove-avatar").isVisible()).toBe(false);
    expect(await ownAvatar()).toMatch(/^https:\/\/secure\.gravatar\.com\//u);
    expect([...imageHosts]).toEqual([web.server.base]);
    expect(web.pageErrors).toEqual([]);
  });

  it("applies the theme live: dark, light, and automatic following the system; no serious axe violation in dark", async () => {
    const { bob } = web.server.seed;
    const context = await web.newContext(DESKTOP);
    const page = await web.open(context, topicHash(richTopic));
    await page.emulateMedia({ colorScheme: "light" });
    await web.logIn(page, bob);
    // Automatic by default, the system is light.
    expect(await theme(page)).toBe("light");
    const light = await background(page);

    await setting(bob, "color_scheme", 2);
    await expect.poll(() => theme(page)).toBe("dark");
    expect(await background(page)).not.toBe(light);
    await setting(bob, "color_scheme", 1);
    await expect.poll(() => theme(page)).toBe("light");
    await page.emulateMedia({ colorScheme: "dark" });
    await expect.poll(() => theme(page)).toBe("dark");
    await setting(bob, "color_scheme", 3);
    await expect.poll(() => theme(page)).toBe("light");
    await page.locator(".spoiler-header").first().click();
    await page.locator(".katex").first().waitFor();
    await page.locator(".hljs-keyword").first().waitFor();
    await web.shot(page, "desktop-rich-content");
    await setting(bob, "color_scheme", 2);
    await expect.poll(() => theme(page)).toBe("dark");

    const found: Record<string, Violation[]> = {};
    found["topic"] = await seriousViolations(page);
    await web.shot(page, "desktop-dark-topic");
    await page.locator("li.msg button.sender").first().click();
    await page.locator("dialog.user-card").waitFor();
    found["user card"] = await seriousViolations(page);
    await page.keyboard.press("Escape");
    for (const [name, hash, title] of [
      ["inbox", "#inbox", "Inbox"],
      ["people", "#people", "People"],
      ["settings", "#settings/profile", "Settings"],
    ] as const) {
      await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
      await page.locator(".view-title", { hasText: title }).waitFor();
      if (name === "inbox") await page.locator(".inbox-item").first().waitFor();
      found[name] = await seriousViolations(page);
    }
    await web.shot(page, "desktop-dark-settings");
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((k) => [k, []])));

    // A reload starts in the stored theme.
    await page.reload();
    await page.waitForSelector("body[data-ready='1']");
    expect(await theme(page)).toBe("dark");
    // Logging out leaves the person's theme: the login screen follows the system.
    await page.emulateMedia({ colorScheme: "light" });
    await page.click("button.logout");
    await page.locator("#key-form").waitFor();
    expect(await theme(page)).toBe("light");
    await setting(bob, "color_scheme", 1);
    expect(web.pageErrors).toEqual([]);
  });

  it("formats times by the 24-hour setting, live; phone width in both themes", async () => {
    const { alice } = web.server.seed;
    await setting(alice, "twenty_four_hour_time", false);
    const page = await web.loggedIn(alice, PHONE, { hash: topicHash(richTopic) });
    const time = page.locator("li.msg .meta time").first();
    await time.waitFor();
    expect(await time.textContent()).toMatch(/^\d{1,2}:\d{2}\s?[AP]M$/u);
    await setting(alice, "twenty_four_hour_time", true);
    await expect.poll(() => time.textContent()).toMatch(/^\d{2}:\d{2}$/u);
    expect(await time.getAttribute("title")).not.toMatch(/[AP]M/u);
    await page.locator(".spoiler-header").first().click();
    await page.locator(".katex").first().waitFor();
    await web.shot(page, "phone-rich-content");
    await setting(alice, "color_scheme", 2);
    await expect.poll(() => theme(page)).toBe("dark");
    await web.shot(page, "phone-dark-topic");
    expect(await seriousViolations(page)).toEqual([]);
    await setting(alice, "twenty_four_hour_time", false);
    await expect.poll(() => time.textContent()).toMatch(/[AP]M$/u);
    expect(web.pageErrors).toEqual([]);
  });
});
