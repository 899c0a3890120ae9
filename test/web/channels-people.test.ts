/**
 * The web client's channel management and people, in Chromium, two users side by side
 * (Alice at desktop width, Bob at phone width): the channel browser, creating a channel
 * that appears in the other user's browser, subscribing, muting and unsubscribing,
 * muting a topic from a message's menu; the user list with presence and the user card.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DESKTOP, PHONE, startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client: channels and people", () => {
  let web: WebHarness;
  let alice: Page;
  let bob: Page;

  beforeAll(async () => {
    web = await startWebHarness("webchannels");
    alice = await web.loggedIn(web.server.seed.alice, DESKTOP);
    bob = await web.loggedIn(web.server.seed.bob, PHONE);
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  const title = (page: Page, text: string) => page.locator(".view-title", { hasText: text }).waitFor();
  /** At phone width the sidebar (with the pages) sits behind the menu button. */
  async function openPage(page: Page, name: string): Promise<void> {
    const menu = page.locator("button.menu-toggle");
    if (await menu.isVisible()) await menu.click();
    await page.click(`.pages-nav button[data-page='${name}']`);
  }
  const row = (page: Page, channel: string) => page.locator(`.channels-page li[data-channel='${channel}']`);
  /** Bob's subscription to a channel as GET /users/me/subscriptions has it. */
  async function bobsSubscription(name: string): Promise<{ name: string; is_muted: boolean } | undefined> {
    const reply = await web.server.call(web.server.seed.bob, "GET", "/users/me/subscriptions");
    const subs = reply.body["subscriptions"] as { name: string; is_muted: boolean }[];
    return subs.find((s) => s.name === name);
  }

  it("browses, creates, subscribes, mutes and unsubscribes channels; a new channel appears to another user", async () => {
    await openPage(alice, "channels");
    await title(alice, "All channels");
    expect(new URL(alice.url()).hash).toBe("#channels/all");
    // The page is the current item; no view in the sidebar is.
    expect(await alice.locator(".sidebar [aria-current='page']").allTextContents()).toEqual(["All channels"]);
    await row(alice, "secret").waitFor();
    await openPage(bob, "channels");
    await row(bob, "general").waitFor();
    // Bob cannot see the private channel he is not in.
    expect(await row(bob, "secret").count()).toBe(0);
    expect(await row(bob, "general").locator("button", { hasText: "Unsubscribe" }).count()).toBe(1);

    await alice.click("button:has-text('Create channel')");
    await alice.fill("#create-channel input[name=name]", "design");
    await alice.fill("#create-channel input[name=description]", "Where the pixels are argued");
    await alice.click("#create-channel button[type=submit]");
    await row(alice, "design").locator("button", { hasText: "Unsubscribe" }).waitFor();
    await alice.locator(".sidebar button[data-channel-id]", { hasText: "design" }).waitFor({ state: "attached" });
    // Bob's open browser learns of it from the events that follow, without a reload.
    await row(bob, "design").locator("button", { hasText: "Subscribe" }).waitFor();
    await web.shot(bob, "phone-channels");
    await web.shot(alice, "desktop-channels");

    await row(bob, "design").locator("button", { hasText: "Subscribe" }).click();
    await row(bob, "design").locator("button", { hasText: "Unsubscribe" }).waitFor();
    expect(await bobsSubscription("design")).toMatchObject({ is_muted: false });
    const mute = row(bob, "design").locator("button[aria-pressed]");
    await mute.click();
    await row(bob, "design").locator("button[aria-pressed='true']").waitFor();
    expect(await bobsSubscription("design")).toMatchObject({ is_muted: true });
    await row(bob, "design").locator("button[aria-pressed='true']").click();
    await row(bob, "design").locator("button[aria-pressed='false']").waitFor();

    await row(bob, "design").locator("button", { hasText: "Unsubscribe" }).click();
    await row(bob, "design").locator("button", { hasText: "Subscribe" }).waitFor();
    expect(await bobsSubscription("design")).toBeUndefined();
    // The channel name opens its messages.
    await row(alice, "design").locator(".link-button").click();
    await title(alice, "#design");
    expect(web.pageErrors).toEqual([]);
  });

  it("mutes and unmutes a topic from a message's menu", async () => {
    const { alice: aliceUser, bob: bobUser, general } = web.server.seed;
    await web.server.call(aliceUser, "POST", "/messages", {
      type: "stream",
      to: general.id,
      topic: "noisy topic",
      content: "lots of chatter",
    });
    await bob.goto(`${web.server.base}/#narrow/channel/${general.id}-general/topic/noisy.20topic`);
    await bob.waitForSelector("body[data-ready='1']");
    const msg = bob.locator("li.msg", { hasText: "lots of chatter" });
    await msg.locator("button[data-action=more]").click();
    await bob.click(".message-menu button[data-menu=mute-topic]");
    await bob.locator(".message-menu").waitFor({ state: "detached" });
    const policy = () => web.server.t.store.userTopics(bobUser.id).find((t) => t.topic === "noisy topic")?.policy ?? 0;
    expect(policy()).toBe(1);
    await msg.locator("button[data-action=more]").click();
    await bob.click(".message-menu button[data-menu=unmute-topic]");
    await bob.locator(".message-menu").waitFor({ state: "detached" });
    expect(policy()).toBe(0);
    expect(web.pageErrors).toEqual([]);
  });

  it("lists people with presence and opens a user card from the list and from a sender's name", async () => {
    const { alice: aliceUser, general } = web.server.seed;
    await openPage(alice, "people");
    await title(alice, "People");
    // Bob's browser reported him active; the guest never logged in.
    await alice.locator(".people li[data-presence='active']", { hasText: "Bob" }).waitFor();
    await alice.locator(".people li[data-presence='offline']", { hasText: "Gus Guest" }).waitFor();
    await web.shot(alice, "desktop-people");
    await alice.locator(".people li", { hasText: "Bob" }).locator("button").click();
    const card = alice.locator("dialog.user-card");
    await card.locator("h2", { hasText: "Bob" }).waitFor();
    expect(await card.locator(".user-details").innerText()).toMatch(/bob@test\.dev[\s\S]*Member[\s\S]*Active/);
    await card.locator("button", { hasText: "Send direct message" }).click();
    await title(alice, "Direct messages with Bob");

    await web.server.call(aliceUser, "POST", "/messages", {
      type: "stream",
      to: general.id,
      topic: "cards",
      content: "click my name",
    });
    await bob.goto(`${web.server.base}/#narrow/channel/${general.id}-general/topic/cards`);
    await bob.waitForSelector("body[data-ready='1']");
    await bob.locator("li.msg", { hasText: "click my name" }).locator("button.sender").click();
    await bob.locator("dialog.user-card h2", { hasText: "Alice" }).waitFor();
    await web.shot(bob, "phone-user-card");
    await bob.keyboard.press("Escape");
    await bob.locator("dialog.user-card").waitFor({ state: "detached" });
    expect(web.pageErrors).toEqual([]);
  });
});
