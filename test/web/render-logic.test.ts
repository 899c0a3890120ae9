/**
 * The web client's logic behind what test/web/rendering.test.ts shows, without a
 * browser: `sender:me`, and topics muted through the API left out of the counts.
 */
import { describe, expect, it } from "vitest";
import { parseSearch, type Directory } from "../../web/src/narrow.js";
import { ClientState } from "../../web/src/state.js";
import type { InitialState } from "../../web/src/types.js";

const dir: Directory = { channelIdByName: () => undefined, userIdByEmail: () => undefined, me: 10 };

describe("sender:me", () => {
  it("becomes the reader's ID (the server takes no 'me'), negated too", () => {
    const narrow = parseSearch("sender:me hello", dir);
    expect(narrow).toEqual({
      kind: "search",
      query: "sender:me hello",
      terms: [
        { operator: "sender", operand: 10 },
        { operator: "search", operand: "hello" },
      ],
    });
    const only = parseSearch("from:Me", dir);
    expect(only.kind === "search" && only.terms).toEqual([{ operator: "sender", operand: 10 }]);
    expect(parseSearch("-sender:me", dir)).toMatchObject({
      terms: [{ operator: "sender", operand: 10, negated: true }],
    });
  });
});

describe("muted topics", () => {
  const initial = (over: Partial<InitialState> = {}): InitialState => ({
    queue_id: "q",
    last_event_id: -1,
    user_id: 10,
    subscriptions: [{ stream_id: 1, name: "general", color: "#c2c2c2", invite_only: false }],
    unread_msgs: {
      streams: [
        { stream_id: 1, topic: "Noisy", unread_message_ids: [1, 2, 3] },
        { stream_id: 1, topic: "quiet", unread_message_ids: [4] },
      ],
      pms: [],
      huddles: [],
      mentions: [],
    },
    recent_private_conversations: [],
    ...over,
  });

  it("register's user_topics and user_topic events take a muted topic out of the channel's count", () => {
    const state = new ClientState(
      initial({ user_topics: [{ stream_id: 1, topic_name: "noisy", visibility_policy: 1 }] }),
      { email: "a@x.dev", full_name: "A" },
    );
    expect(state.isMutedTopic(1, "NOISY")).toBe(true);
    expect(state.channelUnread(1)).toBe(1);
    // Unmuted (0: inherit), then followed (3): counted again.
    state.apply({ id: 1, type: "user_topic", stream_id: 1, topic_name: "Noisy", visibility_policy: 0 });
    expect(state.channelUnread(1)).toBe(4);
    state.apply({ id: 2, type: "user_topic", stream_id: 1, topic_name: "quiet", visibility_policy: 1 });
    expect(state.channelUnread(1)).toBe(3);
    state.apply({ id: 3, type: "user_topic", stream_id: 1, topic_name: "quiet", visibility_policy: 3 });
    expect(state.channelUnread(1)).toBe(4);
  });
});
