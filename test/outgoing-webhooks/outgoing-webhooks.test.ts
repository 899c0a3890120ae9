/**
 * Outgoing webhook bots end to end against a real HTTP server on loopback as the
 * bot's service: which messages call the bot (mention, direct message), the request
 * in Zulip's generic and Slack formats, the bot's reply posted where it was called,
 * response_not_required, failures (retries with backoff on a manual clock, the
 * owner's notice), the address guard, and a restart in the middle of a call.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { Message, User } from "../../src/engine/index.js";
import { publicAddressesOnly, publicAndLoopbackAddresses } from "../../src/external-content/index.js";
import { WebhookSender, type WebhookSenderOptions } from "../../src/outgoing-webhooks/sender.js";
import { ManualClock } from "../../src/realtime/clock.js";
import { freePort } from "../support/smtp.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

interface Received {
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}
type Answer = { status: number; body: string } | "hang";

/** The bot's service: records each request, answers with `answer` (or never, for "hang"). */
async function startService(answer: (request: Received) => Answer) {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(request);
      const reply = answer(request);
      if (reply === "hang") {
        hanging.push(res);
        return;
      }
      res.writeHead(reply.status, { "Content-Type": "application/json" }).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/bot`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let t: TempStore | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  t?.cleanup();
  t = undefined;
});

const BASE_URL = "http://chat.example:9991";

function setUp(url: string, interfaceType = 1) {
  t = tempStore();
  const seed = seedRealm(t.store);
  const bot = t.store.createBot(seed.owner.id, {
    fullName: "Echo Bot",
    shortName: "echo",
    botType: 3,
    payloadUrl: url,
    interfaceType,
    botDomain: "test.dev",
  });
  return { ...seed, bot };
}

function sender(options: Partial<WebhookSenderOptions> = {}): WebhookSender {
  const s = new WebhookSender(t!.store, {
    baseUrl: () => BASE_URL,
    timeoutMs: 2000,
    isAllowedAddress: publicAndLoopbackAddresses,
    clock: new ManualClock(),
    ...options,
  });
  closers.push(async () => s.stop());
  return s;
}

/** The messages stored after message `id`, oldest first. */
function messagesAfter(id: number): Message[] {
  const out: Message[] = [];
  for (let next = id + 1; ; next++) {
    const message = t!.store.findMessageRecord(next);
    if (!message) return out;
    out.push(message);
  }
}

function sendToGeneral(from: User, content: string, topic = "greetings"): number {
  return t!.store.sendMessage({ senderId: from.id, to: { type: "channel", channel: "general", topic }, content }).id;
}

function sendDirect(from: User, to: readonly number[], content: string): number {
  return t!.store.sendMessage({ senderId: from.id, to: { type: "direct", users: to }, content }).id;
}

describe("what calls an outgoing webhook bot", () => {
  it("a channel message mentioning it (subscribed or not) and a direct message to it; not silent mentions, other messages, or bots", async () => {
    const { alice, bob, owner, bot, general } = setUp("http://127.0.0.1:1/");
    sendToGeneral(alice, "no mention here");
    sendToGeneral(alice, "silently @_**Echo Bot**");
    sendToGeneral(alice, "`@**Echo Bot**` in code");
    const mentioned = sendToGeneral(alice, "@**Echo Bot** hello");
    const direct = sendDirect(bob, [bot.id], "hi bot");
    const group = sendDirect(bob, [bot.id, alice.id], "hi all");
    // A bot's own messages never call bots: no loops.
    const generic = t!.store.createBot(owner.id, { fullName: "Other", shortName: "other", botDomain: "test.dev" });
    sendToGeneral(generic, "@**Echo Bot** from a bot");
    // A group mention counts for a bot subscribed to the channel only.
    const echoes = t!.store.createGroup(owner.id, { name: "echoes", members: [bot.id] });
    sendToGeneral(alice, "@*echoes* unsubscribed");
    t!.store.subscribe(owner.id, { channels: [{ name: general.name }], principals: [bot.id] });
    const viaGroup = sendToGeneral(alice, "@*echoes* subscribed");
    // An import replaying history calls no bot.
    t!.store.sendMessage({
      senderId: alice.id,
      to: { type: "channel", channel: "general", topic: "old" },
      content: "@**Echo Bot** from the past",
      callServiceBots: false,
    });
    expect(echoes.id).toBeGreaterThan(0);
    expect(t!.store.webhookOutboxItems().map((i) => [i.botId, i.messageId, i.trigger])).toEqual([
      [bot.id, mentioned, "mention"],
      [bot.id, direct, "direct_message"],
      [bot.id, group, "direct_message"],
      [bot.id, viaGroup, "mention"],
    ]);
  });
});

describe("the generic (Zulip) format", () => {
  it("posts Zulip's payload and the bot's reply goes to the same channel and topic", async () => {
    const service = await startService(() => ({ status: 200, body: JSON.stringify({ content: "pong **1**" }) }));
    closers.push(service.close);
    const { alice, bot, general } = setUp(service.url);
    const id = sendToGeneral(alice, "@**Echo Bot** ping");
    expect(await sender().runOnce()).toBe(1);

    expect(service.received).toHaveLength(1);
    const request = service.received[0]!;
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["user-agent"]).toMatch(/^ZulipOutgoingWebhook\//);
    const payload = JSON.parse(request.body) as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual(["data", "message", "bot_email", "bot_full_name", "token", "trigger"]);
    const stored = t!.store.findMessageRecord(id)!;
    expect(payload).toEqual({
      data: "@**Echo Bot** ping",
      bot_email: "echo-bot@test.dev",
      bot_full_name: "Echo Bot",
      token: bot.botConfig!.service!.token,
      trigger: "mention",
      message: {
        id,
        sender_id: alice.id,
        sender_email: "alice@test.dev",
        sender_full_name: "Alice",
        sender_realm_str: "",
        avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\//) as unknown,
        client: "API",
        content: "@**Echo Bot** ping",
        content_type: "text/x-markdown",
        rendered_content: `<p><span class="user-mention" data-user-id="${bot.id}">@Echo Bot</span> ping</p>`,
        recipient_id: general.id * 2,
        timestamp: stored.dateSent,
        is_me_message: false,
        reactions: [],
        submessages: [],
        topic_links: [],
        type: "stream",
        stream_id: general.id,
        display_recipient: "general",
        subject: "greetings",
      },
    });
    expect(payload["token"]).toMatch(/^[A-Za-z0-9]{32}$/);

    const posted = messagesAfter(id);
    expect(posted.map((m) => [m.senderId, m.recipient, m.topic, m.content, m.client])).toEqual([
      [bot.id, { type: "channel", channelId: general.id }, "greetings", "pong **1**", "OutgoingWebhookResponse"],
    ]);
    expect(t!.store.webhookOutboxItems()).toEqual([]);
  });

  it("a direct message: trigger direct_message, the reply goes to the same conversation", async () => {
    const service = await startService(() => ({ status: 200, body: JSON.stringify({ response_string: 42 }) }));
    closers.push(service.close);
    const { alice, bob, bot } = setUp(service.url);
    const id = sendDirect(bob, [bot.id, alice.id], "hello bot");
    expect(await sender().runOnce()).toBe(1);
    const payload = JSON.parse(service.received[0]!.body) as { trigger: string; message: Record<string, unknown> };
    expect(payload.trigger).toBe("direct_message");
    expect(payload.message["type"]).toBe("private");
    expect(payload.message["subject"]).toBe("");
    expect((payload.message["display_recipient"] as { id: number }[]).map((u) => u.id)).toEqual(
      [alice.id, bob.id, bot.id].sort((a, b) => a - b),
    );
    const [reply, ...rest] = messagesAfter(id);
    expect(rest).toEqual([]);
    // Python's str() of the number: response_string is older than content and still read first.
    expect([reply!.senderId, reply!.content]).toEqual([bot.id, "42"]);
    expect(reply!.recipient).toEqual(t!.store.findMessageRecord(id)!.recipient);
  });

  it("response_not_required, an empty answer and whitespace post nothing; the call is done", async () => {
    const answers = [{ response_not_required: true, content: "not posted" }, "", { content: "  \n" }, {}];
    const service = await startService(() => ({ status: 200, body: JSON.stringify(answers.shift()) }));
    closers.push(service.close);
    const { alice } = setUp(service.url);
    const first = sendToGeneral(alice, "@**Echo Bot** one");
    for (const n of ["two", "three", "four"]) sendToGeneral(alice, `@**Echo Bot** ${n}`);
    expect(await sender().runOnce()).toBe(4);
    expect(service.received).toHaveLength(4);
    expect(messagesAfter(first).map((m) => m.content)).toEqual([
      "@**Echo Bot** two",
      "@**Echo Bot** three",
      "@**Echo Bot** four",
    ]);
    expect(t!.store.webhookOutboxItems()).toEqual([]);
  });
});

describe("the Slack-compatible format", () => {
  it("posts Slack's form fields in Zulip's order and the answer's text is the reply; a DM is refused", async () => {
    const service = await startService(() => ({ status: 200, body: JSON.stringify({ text: "slack says hi" }) }));
    closers.push(service.close);
    const { realm, alice, bot, general } = setUp(service.url, 2);
    const id = sendToGeneral(alice, "@**Echo Bot** do something");
    expect(await sender().runOnce()).toBe(1);
    const request = service.received[0]!;
    expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    const stored = t!.store.findMessageRecord(id)!;
    expect([...new URLSearchParams(request.body)]).toEqual([
      ["token", bot.botConfig!.service!.token],
      ["team_id", `T${realm.id}`],
      ["team_domain", "chat.example:9991"],
      ["channel_id", `C${general.id}`],
      ["channel_name", "general"],
      ["thread_ts", String(stored.dateSent)],
      ["timestamp", String(stored.dateSent)],
      ["user_id", `U${alice.id}`],
      ["user_name", "Alice"],
      ["text", "@**Echo Bot** do something"],
      ["trigger_word", "mention"],
      ["service_id", String(bot.id)],
    ]);
    expect(messagesAfter(id).map((m) => [m.senderId, m.topic, m.content])).toEqual([
      [bot.id, "greetings", "slack says hi"],
    ]);

    const dm = sendDirect(alice, [bot.id], "psst");
    expect(await sender().runOnce()).toBe(1);
    expect(service.received).toHaveLength(1);
    expect(messagesAfter(dm).map((m) => [m.senderId, m.content])).toEqual([
      [bot.id, "Failure! Slack outgoing webhooks don't support direct messages."],
    ]);
  });
});

describe("failures", () => {
  it("a service that is down: retried with backoff, then Failure! in the conversation and a notice to the owner", async () => {
    const port = await freePort();
    const { alice, owner, bot, general } = setUp(`http://127.0.0.1:${port}/`);
    const id = sendToGeneral(alice, "@**Echo Bot** anyone?", "status");
    const clock = new ManualClock();
    const s = sender({ clock, baseBackoffMs: 1000, maxBackoffMs: 4000 });
    const pending = () => t!.store.webhookOutboxItems().map((i) => [i.attempts, i.nextAttemptAt - clock.now()]);
    expect(await s.runOnce()).toBe(0);
    expect(pending()).toEqual([[1, 1000]]);
    expect(t!.store.webhookOutboxItems()[0]!.lastError).toMatch(/ECONNREFUSED/);
    // Not due yet: no attempt.
    expect(await s.runOnce()).toBe(0);
    expect(pending()).toEqual([[1, 1000]]);
    clock.advance(1000);
    expect(await s.runOnce()).toBe(0);
    expect(pending()).toEqual([[2, 2000]]);
    clock.advance(2000);
    expect(await s.runOnce()).toBe(0);
    expect(pending()).toEqual([[3, 4000]]);
    expect(messagesAfter(id)).toEqual([]);
    // The fourth failure is the last (Zulip's MAX_REQUEST_RETRIES = 3 retries).
    clock.advance(4000);
    expect(await s.runOnce()).toBe(1);
    expect(t!.store.webhookOutboxItems()).toEqual([]);
    const posted = messagesAfter(id);
    expect(posted.map((m) => [m.senderId, m.recipient.type, m.content])).toEqual([
      [bot.id, "channel", "Failure! Bot is unavailable"],
      [
        bot.id,
        "direct",
        `[A message](${BASE_URL}/#narrow/channel/${general.id}-general/topic/status/near/${id}) ` +
          "to your bot @_**Echo Bot** triggered an outgoing webhook.\n" +
          "A connection error occurred. Is my bot server down?",
      ],
    ]);
    const notice = posted[1]!;
    expect(
      notice.recipient.type === "direct" && t!.store.findConversation(notice.recipient.conversationId)?.userIds,
    ).toEqual([owner.id, bot.id].sort((a, b) => a - b));
  });

  it("a 5xx answer is not retried: Failure! with the status, the owner sees the status and the payload", async () => {
    const service = await startService(() => ({ status: 503, body: "down for 'maintenance'\n" }));
    closers.push(service.close);
    const { alice, bot } = setUp(service.url);
    const id = sendDirect(alice, [bot.id], "status?");
    expect(await sender().runOnce()).toBe(1);
    expect(service.received).toHaveLength(1);
    const conversation = t!.store.findMessageRecord(id)!.recipient;
    const ids = [alice.id, bot.id].sort((a, b) => a - b).join(",");
    expect(messagesAfter(id).map((m) => [m.recipient.type === conversation.type, m.content])).toEqual([
      [true, "Failure! Third party responded with 503"],
      [
        true,
        `[A message](${BASE_URL}/#narrow/dm/${ids}-pm/near/${id}) to your bot @_**Echo Bot** triggered an outgoing ` +
          "webhook.\nThe webhook got a response with status code *503*.\n" +
          "The response contains the following payload:\n```\n" +
          `b"down for 'maintenance'\\n"` +
          "\n```",
      ],
    ]);
  });

  it("an answer that is not JSON: Failure! in the conversation, the owner sees the error and the text", async () => {
    const service = await startService(() => ({ status: 200, body: "<html>" }));
    closers.push(service.close);
    const { alice } = setUp(service.url);
    const id = sendToGeneral(alice, "@**Echo Bot** hi");
    expect(await sender().runOnce()).toBe(1);
    const [failure, notice] = messagesAfter(id);
    expect(failure!.content).toBe("Failure! Invalid JSON in response");
    expect(notice!.content).toMatch(
      /triggered an outgoing webhook\.\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Invalid JSON in response\nThe response contains the following payload:\n```\n'<html>'\n```$/,
    );
  });

  it("a service on a loopback address when the configuration does not allow it: no request, the private-network notice", async () => {
    const service = await startService(() => ({ status: 200, body: JSON.stringify({ content: "never" }) }));
    closers.push(service.close);
    for (const url of [service.url, service.url.replace("127.0.0.1", "localhost")]) {
      t?.cleanup();
      const { alice } = setUp(url);
      const id = sendToGeneral(alice, "@**Echo Bot** hi");
      expect(await sender({ isAllowedAddress: publicAddressesOnly }).runOnce()).toBe(1);
      const [failure, notice] = messagesAfter(id);
      expect(failure!.content).toBe("Failure! Third party responded with 407");
      expect(notice!.content).toMatch(
        /triggered an outgoing webhook\.\nThe URL configured for the webhook is for a private or disallowed network\.$/,
      );
    }
    expect(service.received).toEqual([]);
  });
});

describe("restarts", () => {
  it("a call in flight when the process stops is made again after the restart, and its reply is posted once", async () => {
    let hang = true;
    const service = await startService(() =>
      hang ? "hang" : { status: 200, body: JSON.stringify({ content: "ok" }) },
    );
    closers.push(service.close);
    const { alice, bot } = setUp(service.url);
    const id = sendToGeneral(alice, "@**Echo Bot** once");
    const first = sender({ timeoutMs: 300 });
    const round = first.runOnce();
    await expect.poll(() => service.received.length).toBe(1);
    // The process stops mid-call: the outcome is not recorded, the store closes and opens again.
    first.stop();
    t!.reopen();
    hang = false;
    await round;
    expect(t!.store.webhookOutboxItems().map((i) => i.messageId)).toEqual([id]);
    expect(await sender().runOnce()).toBe(1);
    expect(service.received).toHaveLength(2);
    expect(service.received[0]!.body).toBe(service.received[1]!.body);
    expect(messagesAfter(id).map((m) => [m.senderId, m.content])).toEqual([[bot.id, "ok"]]);
    expect(await sender().runOnce()).toBe(0);
    expect(messagesAfter(id)).toHaveLength(1);
  });

  it("calls written before a restart are made after it, once", async () => {
    const service = await startService(() => ({ status: 200, body: JSON.stringify({ content: "back" }) }));
    closers.push(service.close);
    const { alice, bob, bot } = setUp(service.url);
    const a = sendToGeneral(alice, "@**Echo Bot** a");
    sendDirect(bob, [bot.id], "b");
    t!.reopen();
    const s = sender();
    expect(await s.runOnce()).toBe(2);
    expect(await s.runOnce()).toBe(0);
    expect(service.received).toHaveLength(2);
    expect(
      messagesAfter(a)
        .filter((m) => m.senderId === bot.id)
        .map((m) => m.content),
    ).toEqual(["back", "back"]);
  });
});
