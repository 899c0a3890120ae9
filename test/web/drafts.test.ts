/**
 * The compose box's half-written message in headless Chromium: it keeps its own
 * recipient when the view changes (Enter used to post it to the new view's
 * conversation), and it survives a reload through the server's drafts (POST/PATCH/
 * DELETE /drafts), at desktop and phone widths. One browser launch.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/types.js";
import type { TestServer } from "../support/http.js";
import { startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client drafts", () => {
  let web: WebHarness;
  let server: TestServer;

  beforeAll(async () => {
    web = await startWebHarness("webdrafts");
    server = web.server;
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });
  const loggedIn = (user: User, viewport: { width: number; height: number }) => web.loggedIn(user, viewport);

  /** The newest message of a channel's topic, as the server has it. */
  async function newestIn(user: User, channel: string, topic: string): Promise<string | undefined> {
    const narrow = [
      { operator: "channel", operand: channel },
      { operator: "topic", operand: topic },
    ];
    const r = await server.call(user, "GET", "/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow });
    return (r.body["messages"] as { content: string }[]).at(-1)?.content;
  }

  const drafts = async (user: User) =>
    (await server.call(user, "GET", "/drafts")).body["drafts"] as { content: string; topic: string }[];

  const openChannel = async (page: Page, channelId: number, phone: boolean) => {
    if (phone) await page.click("button.menu-toggle");
    await page.click(`.sidebar button[data-channel-id='${channelId}']`);
  };

  for (const [label, viewport] of [
    ["desktop", { width: 1200, height: 760 }],
    ["phone", { width: 390, height: 800 }],
  ] as const) {
    it(`${label}: a half-written message keeps its recipient when another channel is opened; Enter sends it there`, async () => {
      const { alice, general, secret } = server.seed;
      const phone = label === "phone";
      const page = await loggedIn(alice, viewport);
      await openChannel(page, general.id, phone);
      const topic = `plans ${label}`;
      await page.fill("#compose-topic", topic);
      await page.fill("#compose-text", `half written on ${label}`);
      await openChannel(page, secret.id, phone);
      await page.locator(".view-title", { hasText: "secret" }).waitFor();
      expect(await page.inputValue("#compose-channel")).toBe(String(general.id));
      expect(await page.inputValue("#compose-topic")).toBe(topic);
      await page.press("#compose-text", "Enter");
      await expect.poll(() => newestIn(alice, "general", topic)).toBe(`<p>half written on ${label}</p>`);
      expect(await newestIn(alice, "secret", topic)).toBeUndefined();
      // Sent, the box is empty again and follows the views opened next.
      await openChannel(page, general.id, phone);
      await openChannel(page, secret.id, phone);
      expect(await page.inputValue("#compose-channel")).toBe(String(secret.id));
      expect(web.pageErrors).toEqual([]);
    });
  }

  it("phone: a draft is kept on the server and is back in compose after a reload; sending removes it", async () => {
    const { bob, general } = server.seed;
    const page = await loggedIn(bob, { width: 390, height: 800 });
    await openChannel(page, general.id, true);
    await page.fill("#compose-topic", "reload");
    await page.fill("#compose-text", "survives a reload");
    await expect
      .poll(async () => (await drafts(bob)).map((d) => [d.topic, d.content]))
      .toEqual([["reload", "survives a reload"]]);
    // Edits update the same draft.
    await page.type("#compose-text", "!");
    await expect.poll(async () => (await drafts(bob)).map((d) => d.content)).toEqual(["survives a reload!"]);
    await page.reload();
    await page.waitForSelector("body[data-ready='1']");
    await expect.poll(() => page.inputValue("#compose-text")).toBe("survives a reload!");
    expect(await page.inputValue("#compose-topic")).toBe("reload");
    expect(await page.inputValue("#compose-channel")).toBe(String(general.id));
    await page.press("#compose-text", "Enter");
    await expect.poll(() => newestIn(bob, "general", "reload")).toBe("<p>survives a reload!</p>");
    await expect.poll(async () => (await drafts(bob)).length).toBe(0);
    expect(web.pageErrors).toEqual([]);
  });
});
