/**
 * POST /messages/{message_id}/report over HTTP: Zulip's refusals in Zulip's order (each changing nothing), the
 * reporter's access to the message, and Notification Bot's report in the moderation request channel, text exact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";

let s: TestServer;
let moderationId: number;

beforeAll(async () => {
  s = await startServer();
  const { owner } = s.seed;
  s.t.store.subscribe(owner.id, {
    channels: [{ name: "moderation" }],
    principals: [owner.id],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
  });
  const r = await s.call(owner, "GET", "/get_stream_id", { stream: "moderation" });
  moderationId = r.body["stream_id"] as number;
});
afterAll(() => s.close());

async function send(user: User, params: Record<string, unknown>): Promise<number> {
  const r = await s.call(user, "POST", "/messages", params);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["id"] as number;
}

async function setModerationChannel(id: number): Promise<void> {
  const r = await s.call(s.seed.owner, "PATCH", "/realm", { moderation_request_channel_id: id });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
}

const report = (user: User, id: number | string, params: Record<string, unknown>) => () =>
  s.call(user, "POST", `/messages/${id}/report`, params);

async function newestModerationMessage(channelId = moderationId): Promise<Record<string, unknown>> {
  const r = await s.call(s.seed.owner, "GET", "/messages", {
    narrow: [{ operator: "channel", operand: channelId }],
    anchor: "newest",
    num_before: 1,
    num_after: 0,
    apply_markdown: false,
    allow_empty_topic_name: true,
  });
  const messages = r.body["messages"] as Record<string, unknown>[];
  return messages[messages.length - 1]!;
}

async function sentAt(id: number, viewer = s.seed.owner): Promise<string> {
  const r = await s.call(viewer, "GET", `/messages/${id}`);
  const seconds = (r.body["message"] as { timestamp: number }).timestamp;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

const mention = (u: User) => `@_**${u.fullName}|${u.id}**`;

describe("POST /messages/{message_id}/report", () => {
  it("refuses in Zulip's order: the explanation, the realm's channel, then the message", async () => {
    const { alice, bob } = s.seed;
    const id = await send(alice, { type: "stream", to: "general", topic: "t", content: "hi" });
    const secret = await send(alice, { type: "stream", to: "secret", topic: "t", content: "x" });
    const disabled = "Message reporting is not enabled in this organization.";
    await expectRejectedUnchanged(s, report(bob, id, { report_type: "spam" }), 400, "BAD_REQUEST", disabled);
    await expectRejectedUnchanged(s, report(bob, secret, { report_type: "spam" }), 400, "BAD_REQUEST", disabled);
    const other = report(bob, id, { report_type: "other" });
    await expectRejectedUnchanged(s, other, 400, "BAD_REQUEST", "An explanation is required.");

    await setModerationChannel(moderationId);
    await expectRejectedUnchanged(s, other, 400, "BAD_REQUEST", "An explanation is required.");
    const invalid = "Invalid message(s)";
    await expectRejectedUnchanged(s, report(bob, secret, { report_type: "spam" }), 400, "BAD_REQUEST", invalid);
    await expectRejectedUnchanged(s, report(bob, 99_999_999, { report_type: "spam" }), 400, "BAD_REQUEST", invalid);
    await expectRejectedUnchanged(s, report(bob, "abc", { report_type: "spam" }), 400, "BAD_REQUEST", invalid);
    const badType = report(bob, id, { report_type: "violence" });
    await expectRejectedUnchanged(s, badType, 400, "BAD_REQUEST", "Invalid report_type");
    const long = report(bob, id, { report_type: "other", description: "x".repeat(1001) });
    await expectRejectedUnchanged(s, long, 400, "BAD_REQUEST", /description is too long/);
    await expectRejectedUnchanged(s, report(bob, id, {}), 400, "REQUEST_VARIABLE_MISSING", /report_type/);
  });

  it("posts Notification Bot's report of a channel message in '<sender> moderation'", async () => {
    const { alice, bob } = s.seed;
    await setModerationChannel(moderationId);
    const id = await send(alice, {
      type: "stream",
      to: "general",
      topic: "greetings",
      content: "you are all **fools**",
    });
    const r = await report(bob, id, { report_type: "harassment", description: "Rude." })();
    expect(r.body).toEqual({ result: "success", msg: "" });
    const posted = await newestModerationMessage();
    expect(posted["sender_email"]).toBe("notification-bot@zulip.com");
    expect(posted["subject"]).toBe("Alice moderation");
    expect(posted["content"]).toBe(
      `${mention(bob)} reported a message sent by ${mention(alice)} at <time:${await sentAt(id)}>.\n` +
        "```quote\n**Harassment**. Rude.\n```\n\n" +
        `\`\`\` spoiler Original message at #**general>greetings@${id}**\nyou are all **fools**\n\`\`\``,
    );
  });

  it("quotes a message holding a fence in a longer fence, and names a direct message's recipients", async () => {
    const { alice, bob, owner } = s.seed;
    await setModerationChannel(moderationId);
    const fenced = await send(alice, { type: "private", to: [bob.id], content: "```\ncode\n```" });
    expect((await report(alice, fenced, { report_type: "spam" })()).status).toBe(200);
    expect((await newestModerationMessage())["content"]).toBe(
      `${mention(alice)} reported a message sent by ${mention(alice)} to ${mention(bob)} at <time:${await sentAt(fenced, alice)}>.\n` +
        "```quote\n**Spam**. \n```\n\n" +
        `\`\`\`\` spoiler [Original message](#narrow/dm/${[alice.id, bob.id].sort((a, b) => a - b).join(",")}/near/${fenced})\n` +
        "```\ncode\n```\n````",
    );

    const group = await send(bob, { type: "private", to: [alice.id, owner.id], content: "hey" });
    expect((await report(alice, group, { report_type: "norms" })()).status).toBe(200);
    const posted = await newestModerationMessage();
    expect(posted["subject"]).toBe("Bob moderation");
    const ids = [alice.id, bob.id, owner.id].sort((a, b) => a - b).join(",");
    const others = [alice, owner].sort((a, b) => a.id - b.id).map(mention);
    expect(posted["content"]).toBe(
      `${mention(alice)} reported a message sent by ${mention(bob)} to ${others.join(" and ")} at <time:${await sentAt(group)}>.\n` +
        "```quote\n**Violates community norms**. \n```\n\n" +
        `\`\`\` spoiler [Original message](#narrow/dm/${ids}-group/near/${group})\nhey\n\`\`\``,
    );
  });

  it("posts in the general chat of a channel that allows only it", async () => {
    const { alice, bob, owner } = s.seed;
    s.t.store.subscribe(owner.id, { channels: [{ name: "reports" }], principals: [owner.id] });
    const reportsId = (await s.call(owner, "GET", "/get_stream_id", { stream: "reports" })).body["stream_id"] as number;
    await setModerationChannel(reportsId);
    const patch = await s.call(owner, "PATCH", `/streams/${reportsId}`, { topics_policy: "empty_topic_only" });
    expect(patch.body, JSON.stringify(patch.body)).toMatchObject({ result: "success" });
    const id = await send(alice, { type: "stream", to: "general", topic: "t", content: "spam spam" });
    expect((await report(bob, id, { report_type: "other", description: "ads" })()).status).toBe(200);
    const posted = await newestModerationMessage(reportsId);
    expect(posted["subject"]).toBe("");
    expect(posted["content"]).toContain("**Other reason**. ads\n");
  });
});
