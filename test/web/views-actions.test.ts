/**
 * The web client's recent conversations, drafts and scheduled messages views and a
 * message's actions, in Chromium: quote and reply, copy link, mark unread from here;
 * and edit, delete, resolve and move at phone width (390x844) with nothing pushed off
 * the side of the screen.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DESKTOP, PHONE, startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client: views and message actions", () => {
  let web: WebHarness;

  beforeAll(async () => {
    web = await startWebHarness("webviews");
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  const title = (page: Page, text: string) => page.locator(".view-title", { hasText: text }).waitFor();
  const overflow = (page: Page) => page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
  async function openPage(page: Page, name: string): Promise<void> {
    const menu = page.locator("button.menu-toggle");
    if (await menu.isVisible()) await menu.click();
    await page.click(`.pages-nav button[data-page='${name}']`);
  }
  const send = async (from: "alice" | "bob", topic: string, content: string): Promise<number> => {
    const reply = await web.server.call(web.server.seed[from], "POST", "/messages", {
      type: "stream",
      to: web.server.seed.general.id,
      topic,
      content,
    });
    return Number(reply.body["id"]);
  };

  it("shows recent conversations, drafts (restore, delete) and scheduled messages (delete)", async () => {
    const { alice, bob, general } = web.server.seed;
    await send("alice", "older", "first of all");
    await send("alice", "newer", "then this");
    await web.server.call(alice, "POST", "/messages", {
      type: "private",
      to: JSON.stringify([bob.id]),
      content: "psst",
    });
    const now = Math.floor(Date.now() / 1000);
    await web.server.call(bob, "POST", "/drafts", {
      drafts: [
        { type: "stream", to: [general.id], topic: "draft topic", content: "half written", timestamp: now - 60 },
        { type: "private", to: [alice.id], topic: "", content: "never mind", timestamp: now - 30 },
      ],
    });
    await web.server.call(bob, "POST", "/scheduled_messages", {
      type: "stream",
      to: general.id,
      topic: "later",
      content: "send me tomorrow",
      scheduled_delivery_timestamp: now + 86_400,
    });

    // The desktop pass sends to "older", which the phone pass then finds at the top.
    const orders = [
      ["Alice", "#general › newer", "#general › older"],
      ["#general › older", "Alice", "#general › newer"],
    ];
    for (const [i, viewport] of [DESKTOP, PHONE].entries()) {
      const page = await web.loggedIn(bob, viewport);
      const tag = viewport === PHONE ? "phone" : "desktop";
      await openPage(page, "recent");
      await title(page, "Recent conversations");
      expect(new URL(page.url()).hash).toBe("#recent");
      const rows = page.locator(".recent-page li .label");
      await rows.first().waitFor();
      expect(await rows.allTextContents()).toEqual(orders[i]);
      // Both channel conversations are unread the first time; the desktop pass then reads "newer".
      expect(await page.locator(".recent-page li[data-key^='s:'] .badge").count()).toBe(i === 0 ? 2 : 1);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await web.shot(page, `${tag}-recent`);
      // A new message moves its conversation to the top.
      await send("alice", i === 0 ? "older" : "newer", "back to the old one");
      await expect.poll(() => rows.first().textContent()).toBe(i === 0 ? "#general › older" : "#general › newer");
      await page.locator(".recent-page li", { hasText: "› newer" }).locator("button").click();
      await title(page, "#general › newer");
      // Opening the topic marks it read a moment later: wait for that, or whether the phone pass
      // finds it read would depend on how fast the machine is (it failed once under load).
      await expect
        .poll(async () => {
          const unread = await web.server.call(bob, "GET", "/messages", {
            anchor: "newest",
            num_before: 10,
            num_after: 0,
            narrow: JSON.stringify([
              { operator: "channel", operand: general.id },
              { operator: "topic", operand: "newer" },
              { operator: "is", operand: "unread" },
            ]),
          });
          return (unread.body["messages"] as unknown[]).length;
        })
        .toBe(0);
      await page.close();
    }

    const page = await web.loggedIn(bob, PHONE, { hash: "#drafts" });
    await title(page, "Drafts");
    const drafts = page.locator(".saved-page li");
    await expect.poll(() => drafts.count()).toBe(2);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await web.shot(page, "phone-drafts");
    await drafts.filter({ hasText: "never mind" }).locator("button.danger").click();
    await expect.poll(() => drafts.count()).toBe(1);
    const left = await web.server.call(bob, "GET", "/drafts");
    expect(left.body["drafts"]).toMatchObject([{ content: "half written" }]);
    await drafts.locator("button", { hasText: "Restore" }).click();
    await title(page, "#general › draft topic");
    await expect.poll(() => page.locator("#compose-text").inputValue()).toBe("half written");

    await page.goto(`${web.server.base}/#scheduled`);
    await page.waitForSelector("body[data-ready='1']");
    await title(page, "Scheduled messages");
    const scheduled = page.locator(".saved-page li");
    await scheduled.filter({ hasText: "send me tomorrow" }).waitFor();
    await web.shot(page, "phone-scheduled");
    await scheduled.locator("button.danger").click();
    await page.locator(".list-notice", { hasText: "No scheduled messages." }).waitFor();
    const none = await web.server.call(bob, "GET", "/scheduled_messages");
    expect(none.body["scheduled_messages"]).toEqual([]);
    expect(web.pageErrors).toEqual([]);
  });

  it("quotes and replies, copies a link that opens the message, and marks unread from a message on", async () => {
    const { alice, bob, general } = web.server.seed;
    const first = await send("alice", "quoting", "the **original** words");
    const second = await send("alice", "quoting", "and a second message");
    const page = await web.loggedIn(bob, DESKTOP, { permissions: ["clipboard-read", "clipboard-write"] });
    await page.goto(`${web.server.base}/#narrow/channel/${general.id}-general/topic/quoting`);
    await page.waitForSelector("body[data-ready='1']");
    const menuOf = async (id: number, action: string) => {
      await page.locator(`li.msg[data-id='${id}'] button[data-action=more]`).click();
      await page.click(`.message-menu button[data-menu=${action}]`);
      await page.locator(".message-menu").waitFor({ state: "detached" });
    };

    await menuOf(first, "quote");
    const link = `${web.server.base}/#narrow/channel/${general.id}-general/topic/quoting/near/${first}`;
    await expect
      .poll(() => page.locator("#compose-text").inputValue())
      .toBe(`@_**Alice|${alice.id}** [said](${link}):\n\`\`\`quote\nthe **original** words\n\`\`\`\n`);
    await page.locator("#compose-text").press("Enter");
    const quote = page.locator("li.msg", { has: page.locator("blockquote", { hasText: "the original words" }) });
    await quote.waitFor();
    const quoteId = Number(await quote.getAttribute("data-id"));

    await menuOf(first, "copy-link");
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(link);
    await page.goto(`${web.server.base}/#inbox`);
    await page.goto(link);
    await title(page, "#general › quoting");
    await page.locator(`li.msg[data-id='${first}']`).waitFor();

    // Everything in the topic was read by being on screen; mark unread from the first message on.
    const unread = async () => {
      const reply = await web.server.call(bob, "GET", "/messages", {
        anchor: "newest",
        num_before: 10,
        num_after: 0,
        narrow: JSON.stringify([
          { operator: "channel", operand: general.id },
          { operator: "topic", operand: "quoting" },
          { operator: "is", operand: "unread" },
        ]),
      });
      return (reply.body["messages"] as { id: number }[]).map((m) => m.id);
    };
    await expect.poll(unread).toEqual([]);
    await menuOf(first, "mark-unread");
    expect(await unread()).toEqual([first, second, quoteId]);
    // The rows, still on screen, show unread and are not marked read again by being seen
    // (the list marks what it shows after 150 ms; this waits well past that).
    await page.locator(`li.msg.unread[data-id='${quoteId}']`).waitFor();
    await page.waitForTimeout(600);
    expect(await unread()).toEqual([first, second, quoteId]);
    await page.click(".sidebar button[data-key='view:inbox']");
    await page.locator(".inbox-item", { hasText: "quoting" }).locator(".badge", { hasText: "3" }).waitFor();
    expect(web.pageErrors).toEqual([]);
  });

  it("edits, deletes, resolves and moves at phone width", async () => {
    const { general } = web.server.seed;
    const mine = await send("bob", "phone edits", "typo hree");
    const doomed = await send("bob", "phone edits", "delete me");
    const page = await web.loggedIn(web.server.seed.bob, PHONE);
    await page.goto(`${web.server.base}/#narrow/channel/${general.id}-general/topic/phone.20edits`);
    await page.waitForSelector("body[data-ready='1']");
    const msg = page.locator(`li.msg[data-id='${mine}']`);
    await msg.locator("button[data-action=edit]").click();
    const editor = page.locator("textarea.edit-text");
    await expect.poll(() => editor.inputValue()).toBe("typo hree");
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await editor.fill("typo here");
    await editor.press("Enter");
    await msg.locator(".content", { hasText: "typo here" }).waitFor();

    await page.locator(`li.msg[data-id='${doomed}'] button[data-action=delete]`).click();
    const dialog = page.locator("dialog.dialog");
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await dialog.locator("button[type=submit]").click();
    await page.locator(`li.msg[data-id='${doomed}']`).waitFor({ state: "detached" });

    await msg.locator(".recipient button[data-action=resolve]").click();
    await title(page, "#general › ✔ phone edits");
    await msg.locator(".recipient button[data-action=move-topic]").click();
    await dialog.locator("input.move-topic").fill("moved from a phone");
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await web.shot(page, "phone-move-dialog");
    await dialog.locator("button[type=submit]").click();
    await title(page, "#general › moved from a phone");
    expect(web.pageErrors).toEqual([]);
  });
});
