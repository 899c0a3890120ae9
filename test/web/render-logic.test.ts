/**
 * The web client's logic behind what test/web/rendering.test.ts shows, without a
 * browser: `sender:me`, topics muted through the API left out of the counts, and the
 * compose box's typeahead.
 */
import { describe, expect, it } from "vitest";
import { parseSearch, type Directory } from "../../web/src/narrow.js";
import { ClientState } from "../../web/src/state.js";
import type { InitialState } from "../../web/src/types.js";
import {
  bestMatches,
  channelLink,
  findTrigger,
  groupMention,
  topicLink,
  userMention,
} from "../../web/src/typeahead.js";

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

describe("compose typeahead triggers and syntax", () => {
  it("finds the trigger the text before the caret ends in", () => {
    expect(findTrigger("hi @ali")).toEqual({ kind: "mention", start: 3, query: "ali", silent: false });
    expect(findTrigger("@_**Ali")).toEqual({ kind: "mention", start: 0, query: "Ali", silent: true });
    expect(findTrigger("(#gen")).toEqual({ kind: "channel", start: 1, query: "gen" });
    expect(findTrigger("x #**general>rel")).toEqual({ kind: "topic", start: 2, channel: "general", query: "rel" });
    expect(findTrigger("so :octo")).toEqual({ kind: "emoji", start: 3, query: "octo" });
    // Not triggers: an email, a finished mention, a heading, a time, a lone colon.
    for (const text of ["mail a@b", "@**Bob** ok", "# Title", "at 10:30", "hm :o", "@ bob"])
      expect(findTrigger(text)).toBeNull();
  });

  it("ranks names matched from their start before those matched at a word", () => {
    const names = ["Maria Lopez", "Lopez Jr", "Al Lo", "Bob"];
    expect(bestMatches(names, "lo", (n) => [n])).toEqual(["Lopez Jr", "Maria Lopez", "Al Lo"]);
    expect(bestMatches(names, "zz", (n) => [n])).toEqual([]);
  });

  it("writes Zulip's mention and link syntax", () => {
    expect(userMention("Bob", 7, false, false)).toBe("@**Bob**");
    expect(userMention("Bob", 7, true, true)).toBe("@_**Bob|7**");
    expect(groupMention("support crew", false)).toBe("@*support crew*");
    expect(groupMention("support crew", true)).toBe("@_*support crew*");
    expect(channelLink("general")).toBe("#**general**");
    expect(topicLink("general", "release 1.0")).toBe("#**general>release 1.0**");
  });
});
