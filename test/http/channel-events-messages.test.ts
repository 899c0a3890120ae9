/**
 * The realm's send_channel_events_messages (Zulip's maybe_send_channel_events_notice):
 * off, the Notification Bot posts nothing to a channel's "channel events" topic (its
 * creation notice, renames, descriptions, permissions, archiving); the new-channel
 * announcement elsewhere still goes. On again, the notices come back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

const ok = async (user: User, method: string, path: string, params: Record<string, unknown> = {}) => {
  const r = await s.call(user, method, path, params);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body;
};
const contents = async (channelId: number, topic?: string): Promise<string[]> => {
  const narrow: unknown[] = [{ operator: "channel", operand: channelId }];
  if (topic !== undefined) narrow.push({ operator: "topic", operand: topic });
  const body = await ok(s.seed.owner, "GET", "/messages", {
    anchor: "newest",
    num_before: 100,
    num_after: 0,
    narrow: JSON.stringify(narrow),
    apply_markdown: "false",
  });
  return (body["messages"] as { content: string }[]).map((m) => m.content);
};

describe("send_channel_events_messages", () => {
  it("off: no notice in the channel's own topic, the announcement elsewhere still posted", async () => {
    const { owner, alice, general } = s.seed;
    await ok(owner, "PATCH", "/realm", {
      send_channel_events_messages: false,
      new_stream_announcements_stream_id: general.id,
    });
    const created = await ok(owner, "POST", "/channels/create", {
      name: "quiet",
      description: "nothing to see",
      subscribers: JSON.stringify([owner.id, alice.id]),
      announce: true,
    });
    const quiet = created["id"] as number;
    await ok(owner, "PATCH", `/streams/${quiet}`, { new_name: "quieter", description: "still nothing" });
    await ok(owner, "PATCH", `/streams/${quiet}`, { is_private: true });
    expect(await contents(quiet)).toEqual([]);
    const announcements = await contents(general.id, "new channels");
    expect(announcements.at(-1)).toContain("created a new channel #**quiet**.");
    await ok(owner, "DELETE", `/streams/${quiet}`);
    expect(await contents(quiet)).toEqual([]);
  });

  it("on again: the notices are posted to 'channel events'", async () => {
    const { owner, alice } = s.seed;
    await ok(owner, "PATCH", "/realm", { send_channel_events_messages: true });
    const created = await ok(owner, "POST", "/channels/create", {
      name: "loud",
      subscribers: JSON.stringify([owner.id, alice.id]),
    });
    const loud = created["id"] as number;
    await ok(owner, "PATCH", `/streams/${loud}`, { description: "now described" });
    const notices = await contents(loud, "channel events");
    expect(notices).toHaveLength(2);
    expect(notices[0]).toMatch(/^\*\*Public\*\* channel created by @_\*\*Olive Owner\|\d+\*\*/);
    expect(notices[1]).toContain("changed the description for this channel");
  });
});
