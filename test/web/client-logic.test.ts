/**
 * The web client's DOM-free parts in Node: the search grammar, live narrow matching,
 * unread bookkeeping and the register + long-poll loop (against a scripted API).
 */
import { describe, expect, it } from "vitest";
import { ApiError, type Api, type Json } from "../../web/src/api.js";
import { EventLoop } from "../../web/src/events.js";
import { matches, parseSearch, type Directory } from "../../web/src/narrow.js";
import type { InitialState, Message, ServerEvent } from "../../web/src/types.js";
import { Unreads } from "../../web/src/unread.js";

const dir: Directory = {
  channelIdByName: (name) => ({ general: 1, "release notes": 2 })[name.toLowerCase()],
  userIdByEmail: (email) => ({ "alice@x.dev": 10, "bob@x.dev": 11 })[email.toLowerCase()],
};

function message(over: Partial<Message>): Message {
  return {
    id: 1,
    sender_id: 10,
    sender_full_name: "Alice",
    sender_email: "alice@x.dev",
    content: "<p>x</p>",
    timestamp: 0,
    type: "stream",
    stream_id: 1,
    subject: "Lunch",
    display_recipient: "general",
    reactions: [],
    flags: [],
    ...over,
  };
}

describe("search grammar", () => {
  it("turns a plain channel, topic or DM search into that narrow (so it stays live)", () => {
    expect(parseSearch("channel:general", dir)).toEqual({ kind: "channel", streamId: 1 });
    expect(parseSearch('stream:General topic:"big plans"', dir)).toEqual({
      kind: "topic",
      streamId: 1,
      topic: "big plans",
    });
    expect(parseSearch("dm:alice@x.dev,bob@x.dev", dir)).toEqual({ kind: "dm", userIds: [10, 11] });
    expect(parseSearch("   ", dir)).toEqual({ kind: "all" });
  });

  it("keeps operators, negation, quoted operands and free text for the server", () => {
    const n = parseSearch('channel:"release notes" -sender:bob@x.dev is:starred deploy failed', dir);
    expect(n).toEqual({
      kind: "search",
      query: 'channel:"release notes" -sender:bob@x.dev is:starred deploy failed',
      terms: [
        { operator: "channel", operand: 2 },
        { operator: "sender", operand: "bob@x.dev", negated: true },
        { operator: "is", operand: "starred" },
        { operator: "search", operand: "deploy failed" },
      ],
    });
    // Unknown channel names and emails go to the server as written; unknown operators are words.
    expect(parseSearch("channel:nowhere dm:zed@x.dev http://a.b", dir)).toMatchObject({
      terms: [
        { operator: "channel", operand: "nowhere" },
        { operator: "dm", operand: "zed@x.dev" },
        { operator: "search", operand: "http://a.b" },
      ],
    });
  });
});

describe("live narrow matching", () => {
  it("matches channel, topic (case-insensitively), DM and flag views; leaves searches to the server", () => {
    const m = message({});
    expect(matches({ kind: "channel", streamId: 1 }, m, 10)).toBe(true);
    expect(matches({ kind: "topic", streamId: 1, topic: "lunch" }, m, 10)).toBe(true);
    expect(matches({ kind: "topic", streamId: 1, topic: "dinner" }, m, 10)).toBe(false);
    const dm = message({
      type: "private",
      stream_id: undefined,
      subject: "",
      display_recipient: [
        { id: 10, email: "alice@x.dev", full_name: "Alice" },
        { id: 11, email: "bob@x.dev", full_name: "Bob" },
      ],
    });
    expect(matches({ kind: "dm", userIds: [10] }, dm, 11)).toBe(true);
    expect(matches({ kind: "dm", userIds: [10] }, m, 11)).toBe(false);
    expect(matches({ kind: "starred" }, message({ flags: ["starred"] }), 10)).toBe(true);
    expect(matches({ kind: "mentions" }, message({ flags: ["read"] }), 10)).toBe(false);
    expect(matches({ kind: "search", query: "x", terms: [] }, m, 10)).toBeNull();
  });
});

describe("unread counts", () => {
  it("seeds from unread_msgs and moves channel, topic, DM and mention counts together", () => {
    const u = new Unreads(
      {
        streams: [
          { stream_id: 1, topic: "Lunch", unread_message_ids: [1, 2] },
          { stream_id: 1, topic: "deploys", unread_message_ids: [5] },
        ],
        pms: [{ other_user_id: 10, unread_message_ids: [3] }],
        huddles: [{ user_ids_string: "10,11,12", unread_message_ids: [4] }],
        mentions: [2, 99],
      },
      12,
    );
    expect([
      u.total,
      u.channel(1),
      u.conversation("s:1:lunch"),
      u.conversation("d:10"),
      u.conversation("d:10,11"),
      u.mentions,
    ]).toEqual([5, 3, 2, 1, 1, 1]);
    expect(u.remove(2)).toBe(true);
    expect(u.remove(2)).toBe(false);
    expect([u.total, u.channel(1), u.conversation("s:1:lunch"), u.mentions]).toEqual([4, 2, 1, 0]);
    expect(u.conversations().map((c) => [c.conv.key, c.count])).toEqual([
      ["s:1:deploys", 1],
      ["d:10,11", 1],
      ["d:10", 1],
      ["s:1:lunch", 1],
    ]);
    u.clear();
    expect([u.total, u.channel(1), u.conversations()]).toEqual([0, 0, []]);
  });
});

describe("register + long-poll loop", () => {
  const state = (queue: string): InitialState => ({
    queue_id: queue,
    last_event_id: -1,
    user_id: 1,
    subscriptions: [],
    unread_msgs: { streams: [], pms: [], huddles: [], mentions: [] },
    recent_private_conversations: [],
  });

  it("backs off on errors, registers again on BAD_EVENT_QUEUE_ID, passes events on, and deletes its queue on stop", async () => {
    const calls: string[] = [];
    const polls: (() => Json)[] = [
      () => {
        throw new ApiError(0, "NETWORK", "down", null);
      },
      () => {
        throw new ApiError(400, "BAD_EVENT_QUEUE_ID", "Bad event queue ID: q1", null);
      },
      () => ({
        result: "success",
        events: [
          { id: 0, type: "heartbeat" },
          { id: 1, type: "message" },
        ],
      }),
    ];
    let registers = 0;
    let stopWaiting: (() => void) | null = null;
    const api = {
      post: async (path: string) => {
        calls.push(`POST ${path}`);
        registers++;
        return state(`q${registers}`) as unknown as Json;
      },
      get: async (path: string, params: Record<string, unknown>) => {
        calls.push(`GET ${path} ${String(params["queue_id"])} ${String(params["last_event_id"])}`);
        const next = polls.shift();
        if (next) return next();
        // Then hang like a long-poll until stopped.
        return new Promise<Json>((_, reject) => (stopWaiting = () => reject(new Error("aborted"))));
      },
      delete: async (path: string, params: Record<string, unknown>) => {
        calls.push(`DELETE ${path} ${String(params["queue_id"])}`);
        return { result: "success" };
      },
    } as unknown as Api;
    const states: string[] = [];
    const events: ServerEvent[] = [];
    const statuses: string[] = [];
    const loop = new EventLoop(api, {
      onState: (s) => void states.push(s.queue_id),
      onEvents: (e) => void events.push(...e),
      onStatus: (t) => void statuses.push(t),
      onUnauthorized: () => undefined,
    });
    await loop.start();
    await expect.poll(() => events.length, { timeout: 5000 }).toBe(1);
    expect(events).toEqual([{ id: 1, type: "message" }]);
    expect(states).toEqual(["q1", "q2"]);
    expect(statuses[0]).toMatch(/^Reconnecting in \d+ s…$/);
    expect(statuses.at(-1)).toBe("");
    expect(calls).toEqual([
      "POST /register",
      "GET /events q1 -1",
      "GET /events q1 -1",
      "POST /register",
      "GET /events q2 -1",
      "GET /events q2 1",
    ]);
    const stopping = loop.stop();
    (stopWaiting as (() => void) | null)?.();
    await stopping;
    expect(calls.at(-1)).toBe("DELETE /events q2");
  });
});
