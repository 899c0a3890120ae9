/**
 * The web client's frame and settings, in Chromium: the unread count in the document
 * title, desktop notifications for DMs and mentions as the user's settings say, keyboard
 * help and Inbox navigation from the keyboard, the reconnecting banner with its countdown
 * and "Try now", personal settings (saved with PATCH /settings, followed by another tab)
 * and organization settings for administrators only.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DESKTOP, PHONE, startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client: title, notifications, keyboard, reconnecting, settings", () => {
  let web: WebHarness;

  beforeAll(async () => {
    web = await startWebHarness("webshell");
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  const title = (page: Page, text: string) => page.locator(".view-title", { hasText: text }).waitFor();
  async function openPage(page: Page, name: string): Promise<void> {
    const menu = page.locator("button.menu-toggle");
    if (await menu.isVisible()) await menu.click();
    await page.click(`.pages-nav button[data-page='${name}']`);
  }
  const say = (from: "alice" | "owner", to: Record<string, unknown>) =>
    web.server.call(web.server.seed[from], "POST", "/messages", to);
  const notifications = (page: Page) =>
    page.evaluate<{ title: string; body: string }[]>(
      "window.parleyNotifications.map(({ title, body }) => ({ title, body }))",
    );
  /** A user's personal settings as register reports them. */
  async function settingsOf(user: "bob" | "alice"): Promise<Record<string, unknown>> {
    const reply = await web.server.call(web.server.seed[user], "POST", "/register", {
      fetch_event_types: ["user_settings"],
    });
    return reply.body["user_settings"] as Record<string, unknown>;
  }

  it("counts unread in the title, notifies of DMs and mentions as the settings say, offers keyboard help and Inbox keys", async () => {
    const { bob, general } = web.server.seed;
    const page = await web.loggedIn(bob, DESKTOP, { permissions: ["notifications"] });
    await page.click(".sidebar button[data-key='view:inbox']");
    await title(page, "Inbox");
    await expect.poll(() => page.title()).toBe("Inbox - parley");

    await say("alice", { type: "private", to: JSON.stringify([bob.id]), content: "psst, **bob**" });
    await expect.poll(() => page.title()).toBe("(1) Inbox - parley");
    await say("alice", { type: "stream", to: general.id, topic: "plans", content: "@**Bob** lunch?" });
    await say("alice", { type: "stream", to: general.id, topic: "chatter", content: "no mention here" });
    await expect.poll(() => page.title()).toBe("(3) Inbox - parley");
    await expect
      .poll(() => notifications(page))
      .toEqual([
        { title: "Alice", body: "psst, bob" },
        { title: "Alice (#general › plans)", body: "@Bob lunch?" },
      ]);

    // Keyboard: ? shows the shortcuts; j/k and the arrows move through the Inbox; Enter opens.
    await page.keyboard.press("?");
    const help = page.locator("#keyboard-help");
    await help.locator("h2", { hasText: "Keyboard shortcuts" }).waitFor();
    expect(await help.locator("tbody tr").count()).toBeGreaterThan(5);
    await web.shot(page, "desktop-keyboard-help");
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });
    const focused = () => page.evaluate<string>("document.activeElement.textContent");
    await page.keyboard.press("j");
    expect(await focused()).toMatch(/^#general › chatter/);
    await page.keyboard.press("ArrowDown");
    expect(await focused()).toMatch(/^#general › plans/);
    await page.keyboard.press("j");
    await page.keyboard.press("k");
    expect(await focused()).toMatch(/^#general › plans/);
    await page.keyboard.press("Enter");
    await title(page, "#general › plans");

    // Content of DMs left out when the user says so; nothing at all with notifications off.
    await openPage(page, "settings");
    await page.uncheck("#setting-pm_content_in_desktop_notifications");
    await page.locator(".settings-status", { hasText: "Saved." }).waitFor();
    await say("alice", { type: "private", to: JSON.stringify([bob.id]), content: "secret words" });
    await expect
      .poll(async () => (await notifications(page)).at(-1))
      .toEqual({ title: "Alice", body: "New direct message" });
    await page.uncheck("#setting-enable_desktop_notifications");
    await expect.poll(async () => (await settingsOf("bob"))["enable_desktop_notifications"]).toBe(false);
    const titled = await page.title();
    await say("alice", { type: "private", to: JSON.stringify([bob.id]), content: "you will not see this" });
    // The message has arrived (the count went up) and made no notification.
    await expect.poll(() => page.title()).not.toBe(titled);
    expect(await notifications(page)).toHaveLength(3);
    expect(web.pageErrors).toEqual([]);
  });

  it("shows a reconnecting banner that counts down, and Try now reconnects at once", async () => {
    const { bob, general } = web.server.seed;
    const page = await web.loggedIn(bob, PHONE);
    const headerHeight = async () => (await page.locator("header.top").boundingBox())?.height;
    const normalHeader = await headerHeight();
    // The server says "come back in a minute" to every event poll.
    await page.route("**/api/v1/events?**", (route) =>
      route.request().method() === "GET"
        ? route.fulfill({
            status: 429,
            headers: { "Retry-After": "60", "Content-Type": "application/json" },
            body: JSON.stringify({ result: "error", code: "RATE_LIMIT_HIT", msg: "API usage exceeded rate limit" }),
          })
        : route.continue(),
    );
    // The poll waiting now ends with this message; the next one meets the 429.
    await say("alice", { type: "stream", to: general.id, topic: "wake", content: "ending the poll" });
    const banner = page.locator(".reconnect-banner");
    await banner.waitFor();
    expect(await banner.textContent()).toMatch(/Trying again in (60|59|58) s\./);
    // The header keeps its shape at 390 px ("Log out" stays on its row).
    expect(await headerHeight()).toBe(normalHeader);
    await web.shot(page, "phone-reconnecting");
    await page.unroute("**/api/v1/events?**");
    await say("alice", { type: "stream", to: general.id, topic: "wake", content: "after the outage" });
    await banner.locator("button", { hasText: "Try now" }).click();
    await banner.waitFor({ state: "hidden" });
    await page.goto(`${web.server.base}/#narrow/channel/${general.id}-general/topic/wake`);
    await page.locator("li.msg", { hasText: "after the outage" }).waitFor();
    expect(web.pageErrors).toEqual([]);
  });

  it("saves personal settings (another tab follows) and organization settings for administrators only", async () => {
    const { bob, owner } = web.server.seed;
    const page = await web.loggedIn(bob, PHONE, { hash: "#settings/profile" });
    const other = await web.loggedIn(bob, DESKTOP, { hash: "#settings/profile" });
    await title(page, "Settings");
    await page.fill("#setting-full_name", "Bob Builder");
    await page.click("button:has-text('Save name')");
    await page.locator(".settings-status", { hasText: "Saved." }).waitFor();
    await expect.poll(() => web.server.t.store.getUser(bob.id).fullName).toBe("Bob Builder");

    const before = (await settingsOf("bob"))["twenty_four_hour_time"];
    await page.click("#setting-twenty_four_hour_time");
    await expect.poll(async () => (await settingsOf("bob"))["twenty_four_hour_time"]).toBe(!before);
    await page.selectOption("#setting-color_scheme", "2");
    await expect.poll(async () => (await settingsOf("bob"))["color_scheme"]).toBe(2);
    // The other tab shows what this one changed.
    await expect.poll(() => other.isChecked("#setting-twenty_four_hour_time")).toBe(!before);
    await expect.poll(() => other.inputValue("#setting-color_scheme")).toBe("2");
    await web.shot(page, "phone-settings");

    // No organization settings for a member.
    expect(await page.locator(".pages-nav button[data-page='organization']").count()).toBe(0);
    await page.goto(`${web.server.base}/#organization/organization-settings`);
    await page.waitForSelector("body[data-ready='1']");
    await page.locator(".list-notice", { hasText: "Only administrators" }).waitFor();

    const admin = await web.loggedIn(owner, DESKTOP);
    await openPage(admin, "organization");
    await title(admin, "Organization settings");
    expect(await admin.inputValue("#realm-name")).toBe("Test");
    await admin.fill("#realm-name", "Parley Test Org");
    await admin.uncheck("#realm-allow_message_editing");
    await admin.fill("#realm-message_content_edit_limit_seconds", "600");
    await admin.click("button:has-text('Save changes')");
    await admin.locator(".settings-status", { hasText: "Saved." }).waitFor();
    await web.shot(admin, "desktop-organization-settings");
    const realm = await web.server.call(owner, "POST", "/register", { fetch_event_types: ["realm"] });
    expect(realm.body).toMatchObject({
      realm_name: "Parley Test Org",
      realm_allow_message_editing: false,
      realm_message_content_edit_limit_seconds: 600,
    });
    // A refusal is shown, not swallowed.
    await admin.fill("#realm-waiting_period_threshold", "-5");
    await admin.click("button:has-text('Save changes')");
    await admin.locator(".settings-status", { hasText: /waiting_period_threshold|Invalid|must/i }).waitFor();
    expect(web.pageErrors).toEqual([]);
  });
});
