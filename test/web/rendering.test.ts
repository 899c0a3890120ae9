/**
 * How the web client draws what the server renders: Zulip's emoji images (sprite cells
 * and custom emoji), highlighted code, math, spoilers and dates; in headless Chromium
 * against a real server, asserting what a reader sees.
 */
import type { Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/types.js";
import type { TestServer } from "../support/http.js";
import { startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client rendering", () => {
  let web: WebHarness;
  let server: TestServer;
  let clockBack = 0;

  beforeAll(async () => {
    // A clock the date test sets back, to send messages on earlier days.
    web = await startWebHarness("webrender", { store: { now: () => Math.floor(Date.now() / 1000) - clockBack } });
    server = web.server;
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  /** Every URL each page asked for, to tell what was fetched lazily. */
  const requested = new Map<Page, string[]>();

  async function signedIn(user: User, width = 1200): Promise<Page> {
    const context = await web.newContext({ width, height: 760 });
    const urls: string[] = [];
    context.on("request", (r) => urls.push(new URL(r.url()).pathname));
    const page = await web.open(context);
    requested.set(page, urls);
    await web.logIn(page, user);
    return page;
  }

  async function send(user: User, topic: string, content: string): Promise<number> {
    const r = await server.call(user, "POST", "/messages", {
      type: "stream",
      to: server.seed.general.id,
      topic,
      content,
    });
    expect(r.status).toBe(200);
    return Number(r.body["id"]);
  }

  async function openTopic(page: Page, topic: string): Promise<void> {
    const hash = `#narrow/channel/${server.seed.general.id}-general/topic/${encodeURIComponent(topic)}`;
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  }

  /**
   * The sprite sheet URL a sprite cell draws from, whether its pixels arrived, and the
   * text colour (the server's `:name:` text is hidden under the image).
   */
  async function spriteOf(page: Page, selector: string): Promise<{ url: string; loaded: boolean; text: string }> {
    return page.evaluate(`(async () => {
      const el = document.querySelector(${JSON.stringify(selector)});
      const style = getComputedStyle(el);
      const url = /url\\("?([^")]+)"?\\)/.exec(style.backgroundImage)?.[1] ?? "";
      const img = new Image();
      img.src = url;
      const loaded = await img.decode().then(() => img.naturalWidth > 1000, () => false);
      return { url, loaded, text: style.color };
    })()`);
  }

  /** A computed style property of the first element the selector finds. */
  const computed = (page: Page, selector: string, property: string): Promise<string> =>
    page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)}))[${JSON.stringify(property)}]`);

  /** An image's natural width once decoded (0 when it could not be). */
  const naturalWidth = (page: Page, selector: string): Promise<number> =>
    page.evaluate(`(async () => {
      const img = document.querySelector(${JSON.stringify(selector)});
      return img.decode().then(() => img.naturalWidth, () => 0);
    })()`);

  it("emoji are Zulip's images: sprite cells in messages, reactions and the picker; custom emoji as images", async () => {
    const { alice, bob } = server.seed;
    const image = await sharp({ create: { width: 64, height: 64, channels: 4, background: "#c00" } })
      .png()
      .toBuffer();
    const body = new FormData();
    body.append("file", new Blob([image], { type: "image/png" }), "parrot.png");
    expect((await server.call(alice, "POST", "/realm/emoji/party_parrot", {}, { body })).status).toBe(200);
    const id = await send(alice, "emoji", "Hello :smile: and :party_parrot:");
    const page = await signedIn(bob);
    await openTopic(page, "emoji");
    const msg = page.locator(`li.msg[data-id='${id}']`);
    await msg.waitFor();

    // The server's span keeps ":smile:" as text; the reader sees the sprite cell instead.
    const smile = msg.locator(".content span.emoji.emoji-1f604");
    await smile.waitFor();
    const drawn = await spriteOf(page, `li.msg[data-id='${id}'] .content span.emoji.emoji-1f604`);
    expect(drawn.url).toMatch(/\/32-[A-Z0-9]{8}\.png$/);
    expect(drawn.loaded).toBe(true);
    expect(drawn.text).toBe("rgba(0, 0, 0, 0)");
    expect((await smile.boundingBox())?.width).toBeGreaterThan(15);
    // The custom emoji is the uploaded image.
    expect(await naturalWidth(page, `li.msg[data-id='${id}'] .content img.emoji[alt=':party_parrot:']`)).toBe(64);

    // The quick picker and the reaction it adds are sprite cells too.
    await msg.locator("button[data-action=picker]").click();
    expect(await msg.locator(".picker button[data-name=thumbs_up] .emoji-sprite.emoji-1f44d").count()).toBe(1);
    await msg.locator(".picker button[data-name=thumbs_up]").click();
    const reaction = msg.locator("button.reaction[aria-pressed=true] .emoji-sprite.emoji-1f44d");
    await reaction.waitFor();
    expect((await spriteOf(page, "button.reaction .emoji-sprite.emoji-1f44d")).loaded).toBe(true);

    // A custom emoji reaction (added by Alice) arrives live as its image.
    expect((await server.call(alice, "POST", `/messages/${id}/reactions`, { emoji_name: "party_parrot" })).status).toBe(
      200,
    );
    await msg.locator("button.reaction img.emoji[alt=':party_parrot:']").waitFor();
    expect(web.pageErrors).toEqual([]);
  });

  it("highlights code blocks and shows math with KaTeX, each loaded only when a message needs it", async () => {
    const { alice, bob } = server.seed;
    const code = await send(alice, "code", "```python\ndef answer():\n    return 42  # the answer\n```");
    const math = await send(
      alice,
      "math",
      "Euler: $$e^{i\\pi} + 1 = 0$$\n```math\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n```",
    );
    for (const width of [1200, 390]) {
      const page = await signedIn(bob, width);
      const urls = requested.get(page) ?? [];
      // The first view (the Inbox: both are unread) needs neither the highlighter nor
      // KaTeX's stylesheet. The second time, nothing is unread and the first view is
      // the combined feed, which shows both.
      if (width === 1200) expect(urls.filter((u) => /\/(highlight|katex)-/.test(u))).toEqual([]);

      await openTopic(page, "code");
      const block = page.locator(`li.msg[data-id='${code}'] div.codehilite[data-code-language=Python] code.hljs`);
      await block.waitFor();
      expect(await block.locator("span.hljs-keyword").first().textContent()).toBe("def");
      expect(await block.locator("span.hljs-number").textContent()).toBe("42");
      expect(await block.locator("span.hljs-comment").textContent()).toBe("# the answer");
      // The text itself is unchanged, and coloured.
      expect(await block.textContent()).toBe("def answer():\n    return 42  # the answer\n");
      expect(await computed(page, `li.msg[data-id='${code}'] span.hljs-keyword`, "color")).toBe("rgb(207, 34, 46)");
      expect(urls.some((u) => /^\/highlight-[A-Z0-9]{8}\.js$/.test(u))).toBe(true);
      if (width === 1200) expect(urls.filter((u) => u.includes("katex"))).toEqual([]);

      await openTopic(page, "math");
      const msg = page.locator(`li.msg[data-id='${math}']`);
      await msg.waitFor();
      expect(await msg.locator("p > span.katex .katex-html").count()).toBe(1);
      expect(await msg.locator("span.katex-display span.katex").count()).toBe(1);
      // KaTeX's stylesheet and fonts arrive and apply: the formula is set in KaTeX's fonts.
      await expect.poll(() => computed(page, `li.msg[data-id='${math}'] .katex`, "fontFamily")).toContain("KaTeX_Main");
      await expect
        .poll(() =>
          page.evaluate(
            "document.fonts.ready.then(() => [...document.fonts].some((f) => f.family.includes('KaTeX') && f.status === 'loaded'))",
          ),
        )
        .toBe(true);
      expect(urls.some((u) => /^\/katex-[A-Z0-9]{8}\.css$/.test(u))).toBe(true);
      // The display formula scrolls inside the message rather than widening the page.
      expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
    }
    expect(web.pageErrors).toEqual([]);
  });

  it("spoilers open on click; days get a date line and times their full date; muted topics leave the Inbox", async () => {
    const { alice, bob } = server.seed;
    clockBack = 2 * 86_400;
    const old = await send(alice, "days", "two days ago");
    clockBack = 0;
    const today = await send(alice, "days", "today");
    const spoiler = await send(alice, "spoiler", "```spoiler Who did it?\nThe **butler**\n```");
    await send(alice, "muted one", "noise");
    await send(alice, "muted one", "more noise");
    await send(alice, "kept", "signal");
    const muted = await server.call(bob, "POST", "/user_topics", {
      stream_id: server.seed.general.id,
      topic: "muted one",
      visibility_policy: 1,
    });
    expect(muted.status).toBe(200);
    for (const width of [1200, 390]) {
      const page = await signedIn(bob, width);
      if (width === 1200) {
        // Inbox (the first view): the muted topic is not listed and the channel badge
        // counts the rest (days 2, spoiler 1, kept 1).
        await page.locator(".inbox-item", { hasText: "kept" }).waitFor();
        expect(await page.locator(".inbox-item", { hasText: "muted one" }).count()).toBe(0);
        const channelBadge = page.locator(`.sidebar button[data-channel-id='${server.seed.general.id}'] .badge`);
        expect(await channelBadge.textContent()).toBe("4 unread");
        // Muted live: the topic leaves the Inbox without a reload.
        await server.call(bob, "POST", "/user_topics", {
          stream_id: server.seed.general.id,
          topic: "kept",
          visibility_policy: 1,
        });
        await page.locator(".inbox-item", { hasText: "kept" }).waitFor({ state: "detached" });
        expect(await channelBadge.textContent()).toBe("3 unread");
      }

      await openTopic(page, "spoiler");
      const block = page.locator(`li.msg[data-id='${spoiler}'] .spoiler-block`);
      await block.waitFor();
      const header = block.locator(".spoiler-header");
      const hidden = block.locator(".spoiler-content");
      expect(await header.getAttribute("aria-expanded")).toBe("false");
      expect(await hidden.isVisible()).toBe(false);
      expect(await header.textContent()).toContain("Who did it?");
      await header.click();
      expect(await hidden.isVisible()).toBe(true);
      expect(await hidden.locator("strong").textContent()).toBe("butler");
      expect(await hidden.getAttribute("aria-hidden")).toBe("false");
      // And shut again from the keyboard.
      await header.focus();
      await page.keyboard.press("Enter");
      expect(await hidden.isVisible()).toBe(false);

      await openTopic(page, "days");
      const first = page.locator(`li.msg[data-id='${old}']`);
      const second = page.locator(`li.msg[data-id='${today}']`);
      await second.waitFor();
      const day = (ts: number) =>
        new Date(ts * 1000).toLocaleDateString("en-US", { weekday: "short", month: "short", day: "numeric" });
      const now = Math.floor(Date.now() / 1000);
      expect(await first.locator(".date-separator").textContent()).toBe(day(now - 2 * 86_400));
      expect(await second.locator(".date-separator").textContent()).toBe(day(now));
      expect(await second.locator(".date-separator").isVisible()).toBe(true);
      // Hovering a time shows its full date.
      const title = (await second.locator(".meta time").getAttribute("title")) ?? "";
      expect(title).toContain(new Date(now * 1000).getFullYear().toString());
      expect(title).toMatch(/day, /);
    }
    expect(web.pageErrors).toEqual([]);
  });

  it("sender:me searches; a failed login keeps the email; a view that failed while the server was down loads on reconnect", async () => {
    const { alice, bob } = server.seed;
    await send(alice, "beacons", "beacon from Alice");
    await send(bob, "beacons", "beacon from Bob");
    const page = await web.open(await web.newContext({ width: 1200, height: 760 }));
    await page.fill("#login-email", alice.email);
    await page.fill("#login-password", "not her password");
    await page.click("#password-form button[type=submit]");
    await page.locator("#login-error:not(:empty)").waitFor();
    expect(await page.inputValue("#login-email")).toBe(alice.email);
    expect(await page.inputValue("#login-password")).toBe("");
    await page.fill("#key-email", alice.email);
    await page.fill("#key-value", "wrong key");
    await page.click("#key-form button[type=submit]");
    await page.locator("#login-error:not(:empty)").waitFor();
    expect(await page.inputValue("#key-email")).toBe(alice.email);
    await page.fill("#key-value", server.t.store.getUser(alice.id).apiKey);
    await page.click("#key-form button[type=submit]");
    await page.waitForSelector("body[data-ready='1']");

    await page.fill("#search", "sender:me beacon");
    await page.press("#search", "Enter");
    await page.locator("li.msg", { hasText: "beacon from Alice" }).waitFor();
    expect(await page.locator(".error-line").first().textContent()).toBe("");
    expect(await page.locator("li.msg").count()).toBe(1);

    // The server goes away (every API request fails), a channel is opened, then it comes back.
    await page.route("**/api/v1/**", (route) => route.abort());
    await page.click(`.sidebar button[data-channel-id='${server.seed.general.id}']`);
    await page.locator(".list-notice", { hasText: "could not be reached" }).waitFor();
    // A message ends the long poll already under way; the next one fails as the rest do.
    await send(bob, "beacons", "while away");
    await page.locator(".conn", { hasText: "Reconnecting" }).waitFor();
    await page.unroute("**/api/v1/**");
    await page.locator("li.msg", { hasText: "beacon from Alice" }).waitFor({ timeout: 40_000 });
    await page.locator("li.msg", { hasText: "while away" }).waitFor();
    expect(await page.locator(".list-notice").textContent()).toBe("");
    await expect.poll(() => page.locator(".conn").textContent()).toBe("");
    expect(web.pageErrors).toEqual([]);
  }, 90_000);

  it("compose autocompletes mentions, groups, channel and topic links, emoji and topics; the full emoji picker", async () => {
    const { alice, bob } = server.seed;
    const group = await server.call(alice, "POST", "/user_groups/create", {
      name: "support crew",
      description: "First line",
      members: [bob.id],
    });
    expect(group.status).toBe(200);
    const image = await sharp({ create: { width: 64, height: 64, channels: 4, background: "#0a0" } })
      .png()
      .toBuffer();
    const body = new FormData();
    body.append("file", new Blob([image], { type: "image/png" }), "wave.png");
    expect((await server.call(alice, "POST", "/realm/emoji/wave_cat", {}, { body })).status).toBe(200);
    await send(bob, "autocomplete", "a topic to link to");

    for (const width of [1200, 390]) {
      const page = await signedIn(alice, width);
      await openTopic(page, "autocomplete");
      await page.locator("li.msg", { hasText: "a topic to link to" }).waitFor();
      const text = page.locator("#compose-text");
      const list = page.locator("#compose-suggestions");
      const fits = async (selector: string): Promise<void> => {
        const box = await page.locator(selector).boundingBox();
        expect(box?.x).toBeGreaterThanOrEqual(0);
        expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(width);
      };
      /** Types, waits for the suggestion, picks it with the keyboard. */
      const choose = async (typed: string, option: string): Promise<void> => {
        await text.pressSequentially(typed);
        await list.locator("[role=option]", { hasText: option }).first().waitFor();
        expect(await text.getAttribute("aria-expanded")).toBe("true");
        await fits("#compose-suggestions");
        while ((await list.locator("[role=option][aria-selected=true]").textContent())?.includes(option) !== true)
          await text.press("ArrowDown");
        await text.press("Enter");
        await list.waitFor({ state: "hidden" });
      };
      await text.fill("");
      await text.focus();
      await choose("Hi @bo", "Bob");
      await choose("and @_Ali", "Alice");
      await choose("ping @supp", "support crew");
      await choose("see #gen", "general");
      await choose("#**general>auto", "autocomplete");
      await choose("go :octo", ":octopus:");
      expect(await list.locator(".emoji-sprite").count()).toBe(0);
      expect(await text.inputValue()).toBe(
        "Hi @**Bob** and @_**Alice** ping @*support crew* see #**general** #**general>autocomplete** go :octopus: ",
      );
      // The emoji suggestion shows its image.
      await text.pressSequentially(":wave");
      await list.locator("[role=option] img.emoji[alt=':wave_cat:']").waitFor();
      await text.press("Escape");
      await list.waitFor({ state: "hidden" });
      // Escape closed the list and kept the text; Enter now sends.
      expect(await text.inputValue()).toMatch(/ :wave$/);
      await text.press("Backspace");
      // The full picker inserts at the caret.
      await page.click(".compose-emoji");
      const picker = page.locator("dialog.emoji-picker[open]");
      await picker.waitFor();
      await fits("dialog.emoji-picker[open]");
      await page.fill("#emoji-search", "wave_c");
      await picker.locator("button[data-name=wave_cat] img.emoji").click();
      await picker.waitFor({ state: "detached" });
      expect(await text.inputValue()).toMatch(/ :wav:wave_cat: $/);
      await text.fill(`${(await text.inputValue()).replace(" :wav:wave_cat: ", " :wave_cat: ")}(${width})`);
      await text.press("Enter");
      const sent = page.locator("li.msg", { hasText: `(${width})` });
      await sent.waitFor();
      expect(await sent.locator(".user-mention").first().textContent()).toBe("@Bob");
      expect(await sent.locator(".user-group-mention").textContent()).toBe("@support crew");
      expect(await sent.locator("a.stream-topic").textContent()).toContain("autocomplete");
      expect(await sent.locator("span.emoji.emoji-1f419").count()).toBe(1);
      expect(await sent.locator("img.emoji[alt=':wave_cat:']").count()).toBe(1);

      // The topic field suggests the channel's topics.
      const topic = page.locator("#compose-topic");
      await topic.fill("");
      await topic.pressSequentially("auto");
      await page.locator("#topic-suggestions [role=option]", { hasText: "autocomplete" }).waitFor();
      await topic.fill("");
      await topic.pressSequentially("a top");
      await page
        .locator("#topic-suggestions [role=option]", { hasText: "autocomplete" })
        .waitFor({ state: "detached" });
      await topic.fill("");
      await topic.pressSequentially("au");
      await page.locator("#topic-suggestions [role=option]", { hasText: "autocomplete" }).click();
      expect(await topic.inputValue()).toBe("autocomplete");

      // Reactions: the quick row's "More…" opens the full picker.
      await sent.locator("button[data-action=picker]").click();
      await sent.locator(".picker button[data-action=more-reactions]").click();
      await picker.waitFor();
      await page.fill("#emoji-search", "octopus");
      await page.press("#emoji-search", "Enter");
      await sent.locator("button.reaction .emoji-sprite.emoji-1f419").waitFor();
    }
    expect(web.pageErrors).toEqual([]);
  });
});
