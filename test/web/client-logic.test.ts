/**
 * The web client's DOM-free parts in Node: the search grammar, live narrow matching,
 * unread bookkeeping, the register + long-poll loop (against a scripted API), the
 * message permissions and the edit, move and delete events.
 */
import { describe, expect, it } from "vitest";
import { ApiError, type Api, type Json } from "../../web/src/api.js";
import { EventLoop } from "../../web/src/events.js";
import { contentEditOf, deletedIdsOf, moveOf } from "../../web/src/message-events.js";
import { matches, parseSearch, type Directory } from "../../web/src/narrow.js";
import { NO_ACTIONS, Permissions, policyFrom, ROLE, toggledTopic } from "../../web/src/permissions.js";
import { topicsToShow } from "../../web/src/topics.js";
import { ClientState } from "../../web/src/state.js";
import type { InitialState, Message, ServerEvent, Subscription } from "../../web/src/types.js";
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

describe("message permissions (what the client offers)", () => {
  const EVERYONE = 1;
  const MEMBERS = 2;
  const ADMINS = 3;
  const NOBODY = 4;
  const now = 1_000_000;
  const initial = (over: Partial<InitialState> = {}): InitialState => ({
    queue_id: "q",
    last_event_id: -1,
    user_id: 10,
    subscriptions: [],
    unread_msgs: { streams: [], pms: [], huddles: [], mentions: [] },
    recent_private_conversations: [],
    realm_allow_message_editing: true,
    realm_message_content_edit_limit_seconds: 600,
    realm_message_content_delete_limit_seconds: 600,
    realm_move_messages_within_stream_limit_seconds: 604800,
    realm_move_messages_between_streams_limit_seconds: 604800,
    realm_can_move_messages_between_topics_group: EVERYONE,
    realm_can_move_messages_between_channels_group: MEMBERS,
    realm_can_resolve_topics_group: EVERYONE,
    realm_can_delete_any_message_group: ADMINS,
    realm_can_delete_own_message_group: EVERYONE,
    ...over,
  });
  const sub: Subscription = {
    stream_id: 1,
    name: "general",
    color: "#c2c2c2",
    invite_only: false,
    can_administer_channel_group: NOBODY,
    can_move_messages_within_channel_group: NOBODY,
    can_move_messages_out_of_channel_group: NOBODY,
    can_resolve_topics_group: NOBODY,
    can_delete_any_message_group: NOBODY,
    can_delete_own_message_group: NOBODY,
  };
  /** A user of `role` in the groups their role puts them in (as the server would answer). */
  function permissions(role: number, over: Partial<InitialState> = {}): Permissions {
    const p = new Permissions(10, role, policyFrom(initial(over)));
    p.setMember(EVERYONE, true);
    p.setMember(MEMBERS, role <= ROLE.member);
    p.setMember(ADMINS, role <= ROLE.admin);
    p.setMember(NOBODY, false);
    expect(p.unknownGroups([sub])).toEqual([]);
    return p;
  }
  const mine = message({ id: 5, sender_id: 10, timestamp: now - 60 });
  const theirs = message({ id: 6, sender_id: 11, timestamp: now - 60 });

  it("offers a member edit and delete of their own recent messages, moves and resolve of any, and nothing more", () => {
    // The groups to ask the server about: the realm's and the channel's, once each.
    const asking = new Permissions(10, ROLE.member, policyFrom(initial()));
    expect(asking.unknownGroups([sub, { ...sub, stream_id: 2 }]).sort()).toEqual([EVERYONE, MEMBERS, ADMINS, NOBODY]);
    const p = permissions(ROLE.member);
    expect(p.actions(mine, sub, now)).toEqual({
      edit: true,
      delete: true,
      moveTopic: true,
      moveChannel: true,
      resolve: true,
    });
    expect(p.actions(theirs, sub, now)).toEqual({
      edit: false,
      delete: false,
      moveTopic: true,
      moveChannel: true,
      resolve: true,
    });
    // A bot's owner may delete its messages, not edit them.
    expect(p.actions(theirs, sub, now, true)).toMatchObject({ edit: false, delete: true });
    // DMs have no topic to move or resolve.
    const dm = message({ ...mine, type: "private", stream_id: undefined, display_recipient: [] });
    expect(p.actions(dm, undefined, now)).toEqual({
      edit: true,
      delete: true,
      moveTopic: false,
      moveChannel: false,
      resolve: false,
    });
    // Archived channels: nothing.
    expect(p.actions(mine, { ...sub, is_archived: true }, now)).toEqual(NO_ACTIONS);
  });

  it("applies the time limits, with moderators exempt from the move limits only", () => {
    const old = message({ id: 7, sender_id: 10, timestamp: now - 700_000 });
    const member = permissions(ROLE.member);
    expect(member.actions(message({ ...mine, timestamp: now - 600 }), sub, now)).toMatchObject({
      edit: false,
      delete: false,
    });
    expect(member.actions(message({ ...mine, timestamp: now - 599 }), sub, now)).toMatchObject({
      edit: true,
      delete: true,
    });
    expect(member.actions(old, sub, now)).toEqual({
      edit: false,
      delete: false,
      moveTopic: false,
      moveChannel: false,
      resolve: true,
    });
    const moderator = permissions(ROLE.moderator);
    expect(moderator.actions(old, sub, now)).toMatchObject({ edit: false, moveTopic: true, moveChannel: true });
    // Null limits are none; an administrator deletes anything.
    const unlimited = permissions(ROLE.member, {
      realm_message_content_edit_limit_seconds: null,
      realm_message_content_delete_limit_seconds: null,
    });
    expect(unlimited.actions(old, sub, now)).toMatchObject({ edit: true, delete: true });
    expect(permissions(ROLE.admin).actions(theirs, sub, now)).toMatchObject({ edit: false, delete: true });
  });

  it("follows the realm's switches and group settings, channel groups and guests' exclusions", () => {
    const p = permissions(ROLE.member, { realm_allow_message_editing: false });
    expect(p.actions(mine, sub, now).edit).toBe(false);
    p.updateRealm({ allow_message_editing: true, can_delete_own_message_group: NOBODY });
    expect(p.actions(mine, sub, now)).toMatchObject({ edit: true, delete: false });
    // The channel's own setting can grant what the realm's does not: an anonymous group naming the user.
    const direct = { direct_members: [10], direct_subgroups: [] };
    expect(p.actions(mine, { ...sub, can_delete_own_message_group: direct }, now).delete).toBe(true);
    p.updateRealm({ can_resolve_topics_group: NOBODY, can_move_messages_between_topics_group: NOBODY });
    expect(p.actions(theirs, sub, now)).toMatchObject({ resolve: false, moveTopic: false });
    expect(p.actions(theirs, { ...sub, can_resolve_topics_group: direct }, now).resolve).toBe(true);
    expect(p.actions(theirs, { ...sub, can_move_messages_within_channel_group: direct }, now).moveTopic).toBe(true);
    // Unknown groups grant nothing until the server says so.
    p.updateRealm({ can_resolve_topics_group: 99 });
    expect(p.unknownGroups([])).toEqual([99]);
    expect(p.actions(theirs, sub, now).resolve).toBe(false);
    p.setMember(99, true);
    expect(p.actions(theirs, sub, now).resolve).toBe(true);
    // A guest in role:everyone still may not move between channels (that setting never includes guests).
    const guest = permissions(ROLE.guest, { realm_can_move_messages_between_channels_group: EVERYONE });
    expect(guest.actions(mine, sub, now)).toMatchObject({ moveTopic: true, moveChannel: false, resolve: true });
  });

  it("toggles the resolved prefix as Zulip does", () => {
    expect(toggledTopic("lunch")).toBe("✔ lunch");
    expect(toggledTopic("✔ lunch")).toBe("lunch");
    expect(toggledTopic("✔ ✔  lunch")).toBe("lunch");
  });
});

describe("update_message and delete_message events", () => {
  it("reads content edits, moves and both forms of deletion", () => {
    const edit: ServerEvent = {
      id: 1,
      type: "update_message",
      message_id: 5,
      message_ids: [5],
      rendered_content: "<p>new</p>",
      content: "new",
      flags: ["read", "mentioned"],
      edit_timestamp: 100,
      rendering_only: false,
      stream_id: 1,
    };
    expect(contentEditOf(edit)).toEqual({
      id: 5,
      renderedContent: "<p>new</p>",
      flags: ["read", "mentioned"],
      editedAt: 100,
      renderingOnly: false,
    });
    expect(moveOf(edit)).toBeNull();
    const move: ServerEvent = {
      id: 2,
      type: "update_message",
      message_id: 5,
      message_ids: [5, 6],
      stream_id: 1,
      new_stream_id: 2,
      orig_subject: "Lunch",
      propagate_mode: "change_all",
      edit_timestamp: 100,
    };
    expect(moveOf(move)).toEqual({
      ids: [5, 6],
      fromStream: 1,
      toStream: 2,
      fromTopic: "Lunch",
      toTopic: "Lunch",
      mode: "change_all",
      movedAt: 100,
    });
    expect(contentEditOf(move)).toBeNull();
    expect(moveOf({ ...move, new_stream_id: undefined, subject: "✔ Lunch" })).toMatchObject({
      toStream: 1,
      toTopic: "✔ Lunch",
    });
    expect(deletedIdsOf({ id: 3, type: "delete_message", message_ids: [5, 6], message_type: "stream" })).toEqual([
      5, 6,
    ]);
    expect(deletedIdsOf({ id: 4, type: "delete_message", message_id: 7, message_type: "private" })).toEqual([7]);
  });

  it("moves unread counts and topics with the messages, and drops deleted ones", () => {
    const state = new ClientState(
      {
        queue_id: "q",
        last_event_id: -1,
        user_id: 12,
        subscriptions: [
          { stream_id: 1, name: "general", color: "#c2c2c2", invite_only: false },
          { stream_id: 2, name: "release notes", color: "#c2c2c2", invite_only: false },
        ],
        unread_msgs: {
          streams: [
            { stream_id: 1, topic: "Lunch", unread_message_ids: [5, 6] },
            { stream_id: 1, topic: "deploys", unread_message_ids: [8] },
          ],
          pms: [],
          huddles: [],
          mentions: [6],
        },
        recent_private_conversations: [],
      },
      { email: "c@x.dev", full_name: "C" },
    );
    state.setChannelTopics(1, [
      { name: "deploys", max_id: 8 },
      { name: "Lunch", max_id: 6 },
      { name: "old", max_id: 2 },
    ]);
    expect(topicsToShow(state, 1, false).shown.map((t) => t.name)).toEqual(["deploys", "Lunch", "old"]);
    state.apply({
      id: 1,
      type: "update_message",
      message_id: 5,
      message_ids: [5, 6],
      stream_id: 1,
      orig_subject: "Lunch",
      subject: "✔ Lunch",
      propagate_mode: "change_all",
    });
    expect([state.unreads.conversation("s:1:lunch"), state.unreads.conversation("s:1:✔ lunch")]).toEqual([0, 2]);
    expect([state.unreads.channel(1), state.unreads.mentions]).toEqual([3, 1]);
    expect(topicsToShow(state, 1, false).shown.map((t) => t.name)).toEqual(["deploys", "✔ Lunch", "old"]);
    expect(state.topicsStale.has(1)).toBe(true);
    // To another channel: the counts follow.
    state.apply({
      id: 2,
      type: "update_message",
      message_id: 6,
      message_ids: [6],
      stream_id: 1,
      new_stream_id: 2,
      orig_subject: "✔ Lunch",
      propagate_mode: "change_one",
    });
    expect([state.unreads.channel(1), state.unreads.channel(2), state.unreads.conversation("s:2:✔ lunch")]).toEqual([
      2, 1, 1,
    ]);
    // A new answer from the server replaces the list (keeping topics newer than it).
    state.setChannelTopics(1, [
      { name: "deploys", max_id: 8 },
      { name: "✔ Lunch", max_id: 5 },
    ]);
    expect(state.topicsStale.has(1)).toBe(false);
    expect(topicsToShow(state, 1, false).shown.map((t) => t.name)).toEqual(["deploys", "✔ Lunch"]);
    state.apply({ id: 3, type: "delete_message", message_ids: [5, 8], message_type: "stream", stream_id: 1 });
    expect([state.unreads.total, state.unreads.channel(1), state.unreads.mentions]).toEqual([1, 0, 1]);
    expect(state.topicsStale.has(1)).toBe(true);
    // An edit that takes the mention of the reader out takes it out of the mention count.
    state.apply({ id: 4, type: "update_message", message_id: 6, rendered_content: "<p>@C</p>", flags: [] });
    expect(state.unreads.mentions).toBe(0);
  });
});
