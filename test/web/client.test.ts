/**
 * The web client in headless Chromium against a real server: two people in two browser
 * contexts, everything through the UI and the public API the client uses. One browser
 * launch for the file. Screenshots go to a temporary directory, or to docs/screenshots
 * when PARLEY_SCREENSHOTS=1 (how the README's pictures are made).
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/engine/index.js";
import type { User } from "../../src/engine/types.js";
import type { TestServer } from "../support/http.js";
import { startWebHarness, type WebHarness } from "../support/web-client.js";

describe("web client at /", () => {
  let web: WebHarness;
  let server: TestServer;
  /** Uncaught errors in any page: each test ends by asserting there were none. */
  let pageErrors: string[];

  beforeAll(async () => {
    web = await startWebHarness("webclient");
    server = web.server;
    pageErrors = web.pageErrors;
    // Installing chromium on a fresh machine can take minutes.
  }, 600_000);
  afterAll(async () => {
    await web?.close();
  });

  const newPage = async (): Promise<Page> => web.open(await web.newContext({ width: 1200, height: 760 }));
  const loginWithKey = (page: Page, user: User) => web.logIn(page, user);
  const shot = (page: Page, name: string) => web.shot(page, name);

  /** The badge of a sidebar entry ("" when there is none). */
  const badge = async (page: Page, selector: string): Promise<string> => {
    const b = page.locator(`${selector} .badge`);
    return (await b.count()) === 0 ? "" : ((await b.first().textContent()) ?? "").replace(" unread", "");
  };

  it("two people chat live: channel topic and DM, unread counts, reading, reactions, stars, typing, keys, logout", async () => {
    const { alice, bob, general } = server.seed;
    const alicePage = await newPage();
    await shot(alicePage, "login");
    const bobPage = await newPage();
    await loginWithKey(alicePage, alice);
    await loginWithKey(bobPage, bob);
    // Nothing is unread yet, so Bob starts on the combined feed, where arriving messages
    // would be read at once; the Inbox keeps them unread.
    await bobPage.click(".sidebar button[data-key='view:inbox']");
    // The page never holds the key: the session is an HttpOnly cookie.
    expect(alicePage.url()).not.toContain(alice.apiKey);
    const stored = "JSON.stringify([document.cookie, {...sessionStorage}, {...localStorage}])";
    expect(await alicePage.evaluate(stored)).not.toContain(alice.apiKey);
    const aliceCookies = await alicePage.context().cookies();
    expect(aliceCookies.find((c) => c.name === "sessionid")).toMatchObject({ httpOnly: true, sameSite: "Lax" });

    // Alice writes to #general > web test.
    const channelButton = `.sidebar button[data-channel-id='${general.id}']`;
    await alicePage.click(channelButton);
    await alicePage.fill("#compose-topic", "web test");
    await alicePage.fill("#compose-text", "Hello **Bob**, <b>not bold</b>");
    await alicePage.press("#compose-text", "Enter");
    const aliceMsg = alicePage.locator("li.msg", { hasText: "Hello Bob" });
    await aliceMsg.waitFor();
    // Sent from the web app, it starts read for Alice (no read request needed).
    expect(
      (await server.call(alice, "GET", `/messages/${await aliceMsg.getAttribute("data-id")}`)).body["message"],
    ).toMatchObject({ flags: ["read"], client: "website" });
    // Markdown from the server renders; typed HTML stays text.
    expect(await aliceMsg.locator(".content strong").textContent()).toBe("Bob");
    expect(await aliceMsg.locator(".content").textContent()).toContain("<b>not bold</b>");

    // ... and a DM, typed with Shift+Enter for a second line.
    await alicePage.selectOption("#compose-mode", "dm");
    await alicePage.fill("#compose-to", bob.email);
    await alicePage.fill("#compose-text", "psst, a secret");
    await alicePage.press("#compose-text", "Shift+Enter");
    await alicePage.type("#compose-text", "second line");
    await alicePage.press("#compose-text", "Enter");

    // Bob, on his Inbox, sees both arrive with counts, without reloading.
    await bobPage.locator(`${channelButton} .badge`).waitFor();
    expect(await badge(bobPage, channelButton)).toBe("1");
    const dmButton = `.sidebar button[data-dm-key='d:${alice.id}']`;
    await bobPage.locator(`${dmButton} .badge`).waitFor();
    expect(await badge(bobPage, dmButton)).toBe("1");
    expect(await badge(bobPage, ".sidebar button[data-key='view:inbox']")).toBe("2");
    await bobPage.locator(".inbox-item", { hasText: "web test" }).waitFor();
    await shot(bobPage, "inbox");

    // Opening the channel, then its topic, reads the message: the counts drop.
    await bobPage.click(channelButton);
    const topicButton = `.sidebar button.topic[data-topic='web test']`;
    await bobPage.locator(topicButton).waitFor();
    await bobPage.click(topicButton);
    const bobMsg = bobPage.locator("li.msg", { hasText: "Hello Bob" });
    await bobMsg.waitFor();
    await bobPage.locator(`${channelButton} .badge`).waitFor({ state: "detached" });
    await expect
      .poll(
        async () =>
          (await server.call(bob, "GET", `/messages/${await bobMsg.getAttribute("data-id")}`)).body["message"],
      )
      .toMatchObject({ flags: expect.arrayContaining(["read"]) as unknown });

    // Bob reacts and stars; Alice, with the topic open, sees the reaction live.
    await bobMsg.locator("button[data-action=picker]").click();
    await bobMsg.locator(".picker button[data-name=thumbs_up]").click();
    await bobMsg.locator("button.reaction[aria-pressed=true]").waitFor();
    await bobMsg.locator("button.star").click();
    await bobMsg.locator("button.star[aria-pressed=true]").waitFor();
    const aliceReaction = aliceMsg.locator("button.reaction");
    await aliceReaction.waitFor();
    expect(await aliceReaction.locator(".count").textContent()).toBe("1");
    expect(await aliceReaction.getAttribute("aria-pressed")).toBe("false");
    expect(await aliceReaction.getAttribute("aria-label")).toBe("thumbs_up by Bob");
    const id = Number(await bobMsg.getAttribute("data-id"));
    expect((await server.call(bob, "GET", `/messages/${id}`)).body["message"]).toMatchObject({
      flags: expect.arrayContaining(["read", "starred"]) as unknown,
    });
    await shot(bobPage, "channel-topic");

    // The DM: opening it reads it; Alice typing there shows on Bob's side.
    await bobPage.click(dmButton);
    await bobPage.locator("li.msg", { hasText: "second line" }).waitFor();
    await bobPage.locator(`${dmButton} .badge`).waitFor({ state: "detached" });
    expect(await badge(bobPage, ".sidebar button[data-key='view:inbox']")).toBe("");
    await alicePage.click(`.sidebar button[data-dm-key='d:${bob.id}']`);
    await alicePage.type("#compose-text", "typing…");
    await bobPage.locator(".typing", { hasText: "Alice is typing" }).waitFor();
    await shot(bobPage, "direct-message");

    // Keyboard: k selects, r replies into the DM, Esc returns to the list.
    await bobPage.locator("li.msg").first().click();
    await bobPage.keyboard.press("Escape");
    await bobPage.keyboard.press("k");
    await bobPage.keyboard.press("j");
    await bobPage.keyboard.press("r");
    expect(await bobPage.evaluate("document.activeElement && document.activeElement.id")).toBe("compose-text");
    expect(await bobPage.inputValue("#compose-to")).toBe(alice.email);
    await bobPage.keyboard.press("Escape");
    expect(await bobPage.evaluate("document.activeElement && document.activeElement.tagName")).toBe("LI");

    // Search with the narrow grammar.
    await bobPage.fill("#search", "is:starred");
    await bobPage.press("#search", "Enter");
    await bobPage.locator("li.msg", { hasText: "Hello Bob" }).waitFor();
    expect(await bobPage.locator("li.msg").count()).toBe(1);

    // Subscriptions are live too.
    await server.call(server.seed.owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "new room" }],
      principals: [bob.id],
    });
    await bobPage.locator(".sidebar button[data-channel-id]", { hasText: "new room" }).waitFor();
    await bobPage.locator("#compose-channel option", { hasText: "new room" }).waitFor({ state: "attached" });

    // A lost queue: the client registers again and keeps receiving.
    for (const q of server.server.events.save())
      if (q.userId === bob.id) server.server.events.delete(server.t.store.getUser(bob.id), q.id);
    await bobPage.click(channelButton);
    await server.call(alice, "POST", "/messages", {
      type: "stream",
      to: general.id,
      topic: "web test",
      content: "after the queue was lost",
    });
    await bobPage.locator("li.msg", { hasText: "after the queue was lost" }).waitFor();

    // Log out deletes the event queue and ends the session on the server.
    const queuesBefore = server.server.events.stats.queues;
    await bobPage.click("button.logout");
    await bobPage.locator("#key-form").waitFor();
    expect(server.server.events.stats.queues).toBe(queuesBefore - 1);
    await expect.poll(() => server.t.store.webSessionCount(bob.id)).toBe(0);
    const timings = (await alicePage.evaluate("window.parleyTimings")) as { narrowSwitches: number[] };
    expect(timings.narrowSwitches.length).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
  });

  it("keeps the DOM bounded: a long topic pages older on scroll up, dropping the newest, and back", async () => {
    const { owner, alice, general } = server.seed;
    for (let i = 0; i < 600; i++)
      server.t.store.sendMessage({
        senderId: owner.id,
        to: { type: "channel", channel: "general", topic: "history" },
        content: `history ${i}`,
      });
    await server.call(alice, "POST", "/mark_topic_as_read", { stream_id: general.id, topic_name: "history" });
    const page = await newPage();
    await loginWithKey(page, alice);
    await page.fill("#search", `channel:general topic:history`);
    await page.press("#search", "Enter");
    const msgs = page.locator("li.msg");
    await page.locator("li.msg", { hasText: "history 599" }).waitFor();
    expect(await msgs.count()).toBe(50);
    const scroll = (to: "top" | "bottom") =>
      page.evaluate(
        `(() => { const s = document.querySelector('.scroller'); s.scrollTop = ${to === "top" ? 0 : "s.scrollHeight"}; })()`,
      );
    const counts: number[] = [];
    for (let i = 0; i < 12 && (await page.locator(".content", { hasText: /^history 0$/ }).count()) === 0; i++) {
      const firstBefore = await msgs.first().getAttribute("data-id");
      await scroll("top");
      await expect.poll(() => msgs.first().getAttribute("data-id")).not.toBe(firstBefore);
      counts.push(await msgs.count());
    }
    expect(await page.locator(".content", { hasText: /^history 0$/ }).count()).toBe(1);
    expect(Math.max(...counts)).toBe(400);
    expect(await page.locator(".content", { hasText: /^history 599$/ }).count()).toBe(0);
    for (let i = 0; i < 12 && (await page.locator(".content", { hasText: /^history 599$/ }).count()) === 0; i++) {
      const lastBefore = await msgs.last().getAttribute("data-id");
      await scroll("bottom");
      await expect.poll(() => msgs.last().getAttribute("data-id")).not.toBe(lastBefore);
      expect(await msgs.count()).toBeLessThanOrEqual(400);
    }
    expect(await page.locator(".content", { hasText: /^history 599$/ }).count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it("edits in place, deletes, resolves and moves topics live for another reader; lists a channel's topics newest first", async () => {
    const { owner, alice, bob } = server.seed;
    const store = server.t.store;
    store.subscribe(owner.id, { channels: [{ name: "edits" }], principals: [owner.id, alice.id, bob.id] });
    const send = (senderId: number, topic: string, content: string): number =>
      store.sendMessage({ senderId, to: { type: "channel", channel: "edits", topic }, content }).id;
    send(bob.id, "older topic", "first");
    send(bob.id, "middle", "second");
    const lunchId = send(alice.id, "plans", "lunch at noon?");
    const replyId = send(bob.id, "plans", "sounds good");
    const channelId = store.getMessage(alice.id, lunchId).message.recipient;
    const edits = channelId.type === "channel" ? channelId.channelId : 0;
    for (const user of [alice, bob])
      for (const topic of ["older topic", "middle", "plans"])
        await server.call(user, "POST", "/mark_topic_as_read", { stream_id: edits, topic_name: topic });
    // Something unread elsewhere: both start on the Inbox, which loads no messages, so
    // no topic of #edits is known but from the channel's topic list.
    store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: "general", topic: "elsewhere" },
      content: "unread",
    });

    const alicePage = await newPage();
    const bobPage = await newPage();
    await loginWithKey(alicePage, alice);
    await loginWithKey(bobPage, bob);
    const openTopic = async (page: Page, topic: string): Promise<void> => {
      await page.fill("#search", `channel:edits topic:"${topic}"`);
      await page.press("#search", "Enter");
      await page.locator(".view-title", { hasText: `#edits › ${topic}` }).waitFor();
    };
    await openTopic(alicePage, "plans");
    await openTopic(bobPage, "plans");

    // The sidebar lists every topic of the channel, newest first, though this view
    // loaded only one topic's messages and none is unread.
    const sidebarTopics = (page: Page) =>
      page
        .locator(`.sidebar button[data-channel-id='${edits}'] + .topics button.topic`)
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-topic")));
    await expect.poll(() => sidebarTopics(alicePage)).toEqual(["plans", "middle", "older topic"]);

    // Actions follow permissions: Alice may edit and delete her own message; Bob may
    // not (he may still move and resolve the topic, as everyone may by default).
    const dialog = alicePage.locator("dialog[open]");
    const aliceLunch = alicePage.locator(`li.msg[data-id='${lunchId}']`);
    const bobLunch = bobPage.locator(`li.msg[data-id='${lunchId}']`);
    await aliceLunch.locator("button[data-action=delete]").waitFor();
    await bobLunch.locator(".recipient button[data-action=resolve]").waitFor();
    expect(await aliceLunch.locator("button[data-action=edit]").count()).toBe(1);
    expect(await bobLunch.locator("button[data-action=edit], button[data-action=delete]").count()).toBe(0);
    expect(await bobLunch.locator("button[data-action=move]").count()).toBe(1);

    // Edit in place: the Markdown comes back into a textarea; Escape leaves it unchanged.
    await aliceLunch.locator("button[data-action=edit]").click();
    const editor = aliceLunch.locator("textarea.edit-text");
    await expect.poll(() => editor.inputValue()).toBe("lunch at noon?");
    await editor.fill("never mind");
    await editor.press("Escape");
    await editor.waitFor({ state: "detached" });
    expect(await aliceLunch.locator(".content").textContent()).toBe("lunch at noon?");
    // Enter saves; Bob sees the new rendering live, marked edited.
    await aliceLunch.locator("button[data-action=edit]").click();
    await expect.poll(() => editor.inputValue()).toBe("lunch at noon?");
    await editor.fill("lunch at **one**?");
    await editor.press("Enter");
    await bobLunch.locator(".content strong", { hasText: "one" }).waitFor();
    expect(await bobLunch.locator(".edited").textContent()).toBe("edited");
    await aliceLunch.locator(".content strong", { hasText: "one" }).waitFor();
    // An edit against text changed elsewhere meanwhile is refused, and the reason shown.
    await aliceLunch.locator("button[data-action=edit]").click();
    await expect.poll(() => editor.inputValue()).toBe("lunch at **one**?");
    await server.call(alice, "PATCH", `/messages/${lunchId}`, { content: "lunch at two?" });
    await editor.fill("lunch at three?");
    await editor.press("Enter");
    await aliceLunch.locator(".edit-status", { hasText: "prev_content_sha256" }).waitFor();
    await editor.press("Escape");
    await bobLunch.locator(".content", { hasText: "lunch at two?" }).waitFor();
    await shot(bobPage, "edited");
    // The realm turns editing off: the action goes, live; and comes back.
    store.setRealmMessagePolicy(owner.id, { allowMessageEditing: false });
    await aliceLunch.locator("button[data-action=edit]").waitFor({ state: "detached" });
    store.setRealmMessagePolicy(owner.id, { allowMessageEditing: true });
    await aliceLunch.locator("button[data-action=edit]").waitFor();

    // Delete, after confirming: gone from Bob's open view.
    const oopsId = send(alice.id, "plans", "oops, wrong topic");
    const aliceOops = alicePage.locator(`li.msg[data-id='${oopsId}']`);
    await bobPage.locator(`li.msg[data-id='${oopsId}']`).waitFor();
    await aliceOops.locator("button[data-action=delete]").click();
    await dialog.locator("blockquote", { hasText: "oops, wrong topic" }).waitFor();
    await shot(alicePage, "delete-dialog");
    await dialog.locator("button[type=submit]").click();
    await dialog.waitFor({ state: "detached" });
    await bobPage.locator(`li.msg[data-id='${oopsId}']`).waitFor({ state: "detached" });
    await aliceOops.waitFor({ state: "detached" });
    // An unread message elsewhere counts for Bob until it is deleted.
    const elsewhereId = send(alice.id, "middle", "unread for bob");
    const bobChannel = `.sidebar button[data-channel-id='${edits}']`;
    await bobPage.locator(`${bobChannel} .badge`).waitFor();
    expect(await badge(bobPage, bobChannel)).toBe("1");
    await server.call(alice, "DELETE", `/messages/${elsewhereId}`);
    await bobPage.locator(`${bobChannel} .badge`).waitFor({ state: "detached" });

    // Resolve from the topic header: the topic is renamed for everyone, and Bob's view,
    // which had that topic open, follows it.
    await aliceLunch.locator(".recipient button[data-action=resolve]").click();
    await bobPage.locator(".view-title", { hasText: "#edits › ✔ plans" }).waitFor();
    await bobPage.locator(`li.msg[data-id='${lunchId}']`).waitFor();
    await expect.poll(() => sidebarTopics(bobPage)).toEqual(["✔ plans", "middle", "older topic"]);
    expect(await bobPage.locator(`li.msg[data-id='${replyId}'] .edited`).count()).toBe(0);
    await alicePage.locator(".view-title", { hasText: "#edits › ✔ plans" }).waitFor();
    expect(await aliceLunch.locator(".recipient button[data-action=resolve]").textContent()).toBe("Mark as unresolved");

    // Move through the dialog: a new name for the whole topic.
    await aliceLunch.locator(".recipient button[data-action=move-topic]").click();
    await dialog.locator("input.move-topic").fill("lunch");
    await shot(alicePage, "move-dialog");
    expect(await dialog.locator("select.move-mode").inputValue()).toBe("change_all");
    await dialog.locator("button[type=submit]").click();
    await dialog.waitFor({ state: "detached" });
    await bobPage.locator(".view-title", { hasText: "#edits › lunch" }).waitFor();
    // Marked moved (resolving alone did not count); an edited message stays marked edited.
    await bobPage.locator(`li.msg[data-id='${replyId}'] .edited`, { hasText: "moved" }).waitFor();
    expect(await bobPage.locator(`li.msg[data-id='${lunchId}'] .edited`).textContent()).toBe("edited");
    await expect.poll(() => sidebarTopics(bobPage)).toEqual(["lunch", "middle", "older topic"]);
    // And to another channel.
    await aliceLunch.locator(".recipient button[data-action=move-topic]").click();
    await dialog.locator("select.move-channel").selectOption({ label: "general" });
    await dialog.locator("button[type=submit]").click();
    await dialog.waitFor({ state: "detached" });
    await bobPage.locator(".view-title", { hasText: "#general › lunch" }).waitFor();
    await bobPage.locator(`li.msg[data-id='${replyId}']`).waitFor();
    expect(pageErrors).toEqual([]);
  });

  it("logs in with a password through POST /accounts/login/; a wrong one keeps the email typed", async () => {
    const { owner } = server.seed;
    server.t.store.setPassword(owner.id, await hashPassword("correct horse", { N: 1024, r: 8, p: 1 }));
    const page = await newPage();
    await page.fill("#login-email", owner.email);
    await page.fill("#login-password", "wrong");
    await page.click("#password-form button[type=submit]");
    await page.locator("#login-error:not(:empty)").waitFor();
    expect(await page.inputValue("#login-email")).toBe(owner.email);
    await page.fill("#login-password", "correct horse");
    await page.click("#password-form button[type=submit]");
    await page.waitForSelector("body[data-ready='1']");
    expect(await page.evaluate("document.cookie")).not.toContain("sessionid");
    expect(server.t.store.webSessionCount(owner.id)).toBeGreaterThan(0);
  });
});
