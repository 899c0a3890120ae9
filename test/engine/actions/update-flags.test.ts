import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Store, type User } from "../../../src/engine/index.js";
import { key } from "../../../src/engine/index/keys.js";
import { expectFailsUnchanged, fingerprint } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { internals } from "../../../src/engine/internal.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let carol: User;

beforeEach(() => {
  t = tempStore();
  s = t.store;
  w = seedRealm(s);
  carol = s.createUser({ realmId: w.realm.id, email: "carol@test.dev", fullName: "Carol" });
});
afterEach(() => t.cleanup());

const failsWithoutChange = (fn: () => unknown, expected: { code: string; message: string; data?: unknown }) =>
  expectFailsUnchanged(s, fn, expected);
const send = (topic: string, content = "x", senderId = w.alice.id, channel: string | number = "general") =>
  s.sendMessage({ senderId, to: { type: "channel", channel, topic }, content }).id;
const dm = (senderId: number, users: number[], content = "dm") =>
  s.sendMessage({ senderId, to: { type: "direct", users }, content }).id;
const flags = (user: User, id: number) => s.getMessage(user.id, id).flags;

describe("flag and op validation (nothing changed)", () => {
  it("invalid op, invalid flag, non-editable flags", () => {
    const id = send("t");
    failsWithoutChange(() => s.updateFlags(w.bob.id, [id], "starred", "toggle"), {
      code: "BAD_REQUEST",
      message: "Invalid message flag operation: 'toggle'",
    });
    failsWithoutChange(() => s.updateFlags(w.bob.id, [id], "bogus", "toggle"), {
      code: "BAD_REQUEST",
      message: "Invalid message flag operation: 'toggle'",
    });
    failsWithoutChange(() => s.updateFlags(w.bob.id, [id], "bogus", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid flag: 'bogus'",
    });
    failsWithoutChange(() => s.updateFlags(w.bob.id, [id], "is_private", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid flag: 'is_private'",
    });
    failsWithoutChange(() => s.updateFlags(w.bob.id, [id], "active_mobile_push_notification", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid flag: 'active_mobile_push_notification'",
    });
    for (const flag of [
      "mentioned",
      "stream_wildcard_mentioned",
      "topic_wildcard_mentioned",
      "group_mentioned",
      "has_alert_word",
      "historical",
      "wildcard_mentioned",
    ]) {
      failsWithoutChange(() => s.updateFlags(w.bob.id, [id], flag, "remove"), {
        code: "BAD_REQUEST",
        message: `Flag not editable: '${flag}'`,
      });
    }
    failsWithoutChange(
      () => s.updateFlagsForNarrow(w.bob.id, { anchor: "newest", numBefore: 1, numAfter: 0 }, "mentioned", "add"),
      { code: "BAD_REQUEST", message: "Flag not editable: 'mentioned'" },
    );
  });
  it("a deactivated caller is refused", () => {
    s.setUserActive(w.bob.id, false);
    failsWithoutChange(() => s.updateFlags(w.bob.id, [1], "read", "add"), {
      code: "NOT_FOUND",
      message: "Account is deactivated",
    });
  });
});

describe("flags by IDs", () => {
  it("counts only actual changes, ignores duplicates", () => {
    const a = send("t");
    const b = send("t");
    expect(s.updateFlags(w.bob.id, [a, b, a], "starred", "add")).toEqual({ updatedCount: 2 });
    expect(s.updateFlags(w.bob.id, [a, b], "starred", "add")).toEqual({ updatedCount: 0 });
    expect(s.updateFlags(w.bob.id, [b], "starred", "remove")).toEqual({ updatedCount: 1 });
    expect(flags(w.bob, a)).toEqual(["starred"]);
    expect(flags(w.bob, b)).toEqual([]);
    expect(s.updateFlags(w.bob.id, [a], "collapsed", "add")).toEqual({ updatedCount: 1 });
    expect(flags(w.bob, a)).toEqual(["starred", "collapsed"]);
    expect(s.updateFlags(w.bob.id, [a, b], "read", "add")).toEqual({ updatedCount: 2 });
    expect(flags(w.bob, a)).toEqual(["read", "starred", "collapsed"]);
    expect(s.updateFlags(w.bob.id, [], "read", "add")).toEqual({ updatedCount: 0 });
    // Persisted.
    expect(t.reopen().getMessage(w.bob.id, a).flags).toEqual(["read", "starred", "collapsed"]);
  });

  it("starring a never-received public message creates a historical row", () => {
    const id = send("t");
    expect(flags(carol, id)).toEqual(["read", "historical"]);
    expect(s.updateFlags(carol.id, [id], "starred", "add")).toEqual({ updatedCount: 1 });
    expect(flags(carol, id)).toEqual(["read", "starred", "historical"]);
    expect(internals(s).bitmaps.get(key.userFlag(carol.id, "historical")).toArray()).toEqual([id]);
    // Unstarring keeps the row (Zulip never deletes UserMessage rows).
    expect(s.updateFlags(carol.id, [id], "starred", "remove")).toEqual({ updatedCount: 1 });
    expect(flags(carol, id)).toEqual(["read", "historical"]);
    expect(s.verify()).toMatchObject({ differences: [], problems: [] });
  });

  it("changes that keep the read+historical default create nothing", () => {
    const id = send("t");
    const secret = send("s", "x", w.alice.id, "secret");
    const before = fingerprint(s);
    expect(s.updateFlags(carol.id, [id], "read", "add")).toEqual({ updatedCount: 0 });
    expect(s.updateFlags(carol.id, [id], "starred", "remove")).toEqual({ updatedCount: 0 });
    expect(s.updateFlags(carol.id, [id], "collapsed", "remove")).toEqual({ updatedCount: 0 });
    // Also for messages the caller may not access, or that do not exist.
    expect(s.updateFlags(w.bob.id, [secret, 99999, -1, 1.5], "read", "add")).toEqual({ updatedCount: 0 });
    expect(fingerprint(s)).toBe(before);
  });

  it("Invalid message(s) for inaccessible or missing messages (nothing changed)", () => {
    const secret = send("s", "x", w.alice.id, "secret");
    const pub = send("t");
    const privateDm = dm(w.alice.id, [w.bob.id]);
    failsWithoutChange(() => s.updateFlags(w.bob.id, [pub, secret], "starred", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid message(s)",
    });
    failsWithoutChange(() => s.updateFlags(w.bob.id, [pub, 99999], "starred", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid message(s)",
    });
    // IDs no message can have are missing messages too, not silently dropped.
    for (const impossible of [0, -1, 2 ** 32, Number.MAX_SAFE_INTEGER, 1.5]) {
      failsWithoutChange(() => s.updateFlags(w.bob.id, [pub, impossible], "starred", "add"), {
        code: "BAD_REQUEST",
        message: "Invalid message(s)",
      });
      failsWithoutChange(() => s.updateFlags(w.bob.id, [impossible], "read", "remove"), {
        code: "BAD_REQUEST",
        message: "Invalid message(s)",
      });
    }
    failsWithoutChange(() => s.updateFlags(w.owner.id, [privateDm], "starred", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid message(s)",
    });
    failsWithoutChange(() => s.updateFlags(w.guest.id, [pub], "collapsed", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid message(s)",
    });
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    failsWithoutChange(() => s.updateFlags(other.owner.id, [pub], "starred", "add"), {
      code: "BAD_REQUEST",
      message: "Invalid message(s)",
    });
  });

  it("marking unread skips channels the caller is not subscribed to, and reports them", () => {
    const a = send("t");
    const secretMsg = send("s", "x", w.alice.id, "secret");
    const d = dm(w.alice.id, [carol.id]);
    s.updateFlags(carol.id, [d], "read", "add");
    const r = s.updateFlags(carol.id, [a, d, a], "read", "remove");
    expect(r).toEqual({ updatedCount: 1, ignoredBecauseNotSubscribedChannels: [w.general.id] });
    // A message of a private channel carol cannot read is not skipped: it fails like a missing ID.
    failsWithoutChange(() => s.updateFlags(carol.id, [secretMsg, a], "read", "remove"), {
      code: "BAD_REQUEST",
      message: "Invalid message(s)",
    });
    expect(flags(carol, a)).toEqual(["read", "historical"]);
    expect(flags(carol, d)).toEqual([]);
    // A subscriber who left keeps the rows but may not mark them unread.
    s.updateFlags(w.bob.id, [a], "read", "add");
    s.unsubscribe(w.bob.id, ["general"]);
    expect(s.updateFlags(w.bob.id, [a], "read", "remove")).toEqual({
      updatedCount: 0,
      ignoredBecauseNotSubscribedChannels: [w.general.id],
    });
    expect(flags(w.bob, a)).toEqual(["read"]);
    // The field is only present for remove+read.
    expect("ignoredBecauseNotSubscribedChannels" in s.updateFlags(w.bob.id, [a], "read", "add")).toBe(false);
    expect("ignoredBecauseNotSubscribedChannels" in s.updateFlags(w.bob.id, [a], "starred", "remove")).toBe(false);
  });

  it("marking unread is no existence oracle: unreadable channel messages fail exactly like missing IDs", () => {
    const secretMsg = send("s", "x", w.alice.id, "secret");
    const pub = send("p");
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    const missing = { code: "BAD_REQUEST", message: "Invalid message(s)" };
    // Nonexistent, another user's DM, a private channel the caller is not in, another realm's message.
    const d = dm(w.alice.id, [w.owner.id]);
    for (const [user, ids] of [
      [w.bob, [99999]],
      [w.bob, [d]],
      [w.bob, [secretMsg]],
      [w.guest, [pub]],
      [other.owner, [pub]],
      [other.owner, [secretMsg]],
    ] as const) {
      failsWithoutChange(() => s.updateFlags(user.id, ids, "read", "remove"), missing);
    }
  });

  it("marking unread an old message of a channel joined later creates an unread historical row", () => {
    const old = send("t");
    s.subscribe(carol.id, { channels: [{ name: "general" }] });
    expect(s.updateFlags(carol.id, [old], "read", "remove")).toEqual({
      updatedCount: 1,
      ignoredBecauseNotSubscribedChannels: [],
    });
    expect(flags(carol, old)).toEqual(["historical"]);
    expect(s.unreadSummary(carol.id).streams).toEqual([
      { streamId: w.general.id, topic: "t", unreadMessageIds: [old] },
    ]);
    expect(s.verify()).toMatchObject({ differences: [], problems: [] });
  });
});

describe("flags by narrow", () => {
  it("processes the window and reports it", () => {
    const ids = [send("a"), send("b"), send("a"), send("a")];
    const r = s.updateFlagsForNarrow(
      w.bob.id,
      { anchor: "oldest", numBefore: 0, numAfter: 2, narrow: [{ operator: "topic", operand: "a" }] },
      "read",
      "add",
    );
    expect(r).toEqual({
      updatedCount: 2,
      processedCount: 2,
      firstProcessedId: ids[0],
      lastProcessedId: ids[2],
      foundOldest: true,
      foundNewest: false,
    });
    const next = s.updateFlagsForNarrow(
      w.bob.id,
      { anchor: ids[2]!, includeAnchor: false, numBefore: 0, numAfter: 5, narrow: [["topic", "a"]] },
      "read",
      "add",
    );
    expect(next).toEqual({
      updatedCount: 1,
      processedCount: 1,
      firstProcessedId: ids[3],
      lastProcessedId: ids[3],
      foundOldest: false,
      foundNewest: true,
    });
    const again = s.updateFlagsForNarrow(
      w.bob.id,
      { anchor: "newest", numBefore: 10, numAfter: 0, narrow: [["topic", "a"]] },
      "read",
      "add",
    );
    expect(again).toEqual({
      updatedCount: 0,
      processedCount: 3,
      firstProcessedId: ids[0],
      lastProcessedId: ids[3],
      foundOldest: true,
      foundNewest: true,
    });
    const none = s.updateFlagsForNarrow(
      w.bob.id,
      { anchor: "newest", numBefore: 10, numAfter: 0, narrow: [["topic", "zzz"]] },
      "starred",
      "add",
    );
    expect(none).toEqual({
      updatedCount: 0,
      processedCount: 0,
      firstProcessedId: null,
      lastProcessedId: null,
      foundOldest: true,
      foundNewest: true,
    });
  });

  it("marking unread by narrow reports skipped channels", () => {
    const a = send("t");
    const r = s.updateFlagsForNarrow(
      carol.id,
      { anchor: "newest", numBefore: 10, numAfter: 0, narrow: [["stream", "general"]] },
      "read",
      "remove",
    );
    expect(r).toEqual({
      updatedCount: 0,
      ignoredBecauseNotSubscribedChannels: [w.general.id],
      processedCount: 1,
      firstProcessedId: a,
      lastProcessedId: a,
      foundOldest: true,
      foundNewest: true,
    });
  });

  it("clamps the window to 5000 messages like Zulip (MAX_MESSAGES_PER_UPDATE)", () => {
    const ids: number[] = s.batch(() => Array.from({ length: 6001 }, (_, i) => send("bulk", `m${i}`, w.alice.id)));
    const narrow = [{ operator: "channel", operand: "general" }];
    const run = (anchor: number | "newest" | "oldest", numBefore: number, numAfter: number) =>
      s.updateFlagsForNarrow(w.bob.id, { anchor, numBefore, numAfter, narrow }, "starred", "add");
    // num_before alone: min(6000, max(5000 - 0, 2500)) = 5000.
    let r = run("newest", 6000, 0);
    expect([r.processedCount, r.firstProcessedId, r.lastProcessedId, r.foundOldest, r.foundNewest]).toEqual([
      5000,
      ids[1001],
      ids[6000],
      false,
      true,
    ]);
    expect(r.updatedCount).toBe(5000);
    // num_after alone: num_before 0, num_after min(9000, 5000) = 5000 (+ the anchor row: Zulip allows num_before + 1 +
    // num_after).
    r = run(ids[0]!, 0, 9000);
    expect([r.processedCount, r.firstProcessedId, r.lastProcessedId, r.foundOldest, r.foundNewest]).toEqual([
      5001,
      ids[0],
      ids[5000],
      false,
      false,
    ]);
    // Both large: num_before = min(4000, max(1000, 2500)) = 2500, num_after = min(4000, 2500) = 2500.
    r = run(ids[3000]!, 4000, 4000);
    expect([r.processedCount, r.firstProcessedId, r.lastProcessedId]).toEqual([5001, ids[500], ids[5500]]);
    // Both huge: num_before = min(9000, max(-4000, 2500)) = 2500, num_after = 2500.
    r = run(ids[3000]!, 9000, 9000);
    expect([r.processedCount, r.firstProcessedId, r.lastProcessedId]).toEqual([5001, ids[500], ids[5500]]);
    // Uneven: num_before = min(1000, max(1000, 2500)) = 1000, num_after = min(4000, 4000) = 4000.
    r = run(ids[1000]!, 1000, 4000);
    expect([r.processedCount, r.firstProcessedId, r.lastProcessedId, r.foundOldest, r.foundNewest]).toEqual([
      5001,
      ids[0],
      ids[5000],
      false,
      false,
    ]);
    // Not clamped below the limit.
    r = run("oldest", 0, 100);
    expect([r.processedCount, r.firstProcessedId, r.lastProcessedId, r.foundOldest, r.foundNewest]).toEqual([
      100,
      ids[0],
      ids[99],
      true,
      false,
    ]);
  });

  it("range and narrow errors (nothing changed)", () => {
    send("t");
    failsWithoutChange(() => s.updateFlagsForNarrow(w.bob.id, { numBefore: 1, numAfter: 0 }, "read", "add"), {
      code: "REQUEST_VARIABLE_MISSING",
      message: "Missing 'anchor' argument",
      data: { var_name: "anchor" },
    });
    failsWithoutChange(() => s.updateFlagsForNarrow(w.bob.id, { anchor: "newest", numAfter: 0 }, "read", "add"), {
      code: "REQUEST_VARIABLE_MISSING",
      message: "Missing 'num_before' argument",
    });
    failsWithoutChange(() => s.updateFlagsForNarrow(w.bob.id, { anchor: "newest", numBefore: 0 }, "read", "add"), {
      code: "REQUEST_VARIABLE_MISSING",
      message: "Missing 'num_after' argument",
    });
    failsWithoutChange(
      () => s.updateFlagsForNarrow(w.bob.id, { anchor: "newest", numBefore: -1, numAfter: 0 }, "read", "add"),
      { code: "BAD_REQUEST", message: "num_before is too small" },
    );
    failsWithoutChange(
      () =>
        s.updateFlagsForNarrow(
          w.bob.id,
          { anchor: "date", anchorDate: "2024-01-01", numBefore: 1, numAfter: 0 },
          "read",
          "add",
        ),
      { code: "BAD_REQUEST", message: "Invalid anchor" },
    );
    failsWithoutChange(
      () =>
        s.updateFlagsForNarrow(w.bob.id, { anchor: 5, includeAnchor: false, numBefore: 1, numAfter: 1 }, "read", "add"),
      { code: "BAD_REQUEST", message: "The anchor can only be excluded at an end of the range" },
    );
    failsWithoutChange(
      () =>
        s.updateFlagsForNarrow(
          w.bob.id,
          { anchor: "newest", numBefore: 1, numAfter: 0, narrow: [["stream", "nope"]] },
          "read",
          "add",
        ),
      {
        code: "BAD_NARROW",
        message: "Invalid narrow operator: unknown channel nope",
        data: { desc: "unknown channel nope" },
      },
    );
    failsWithoutChange(
      () =>
        s.updateFlagsForNarrow(
          w.bob.id,
          { anchor: "newest", numBefore: 1, numAfter: 0, narrow: "is:starred" },
          "read",
          "add",
        ),
      { code: "BAD_REQUEST", message: "narrow is not a list" },
    );
  });
});

describe("markTopicAsRead", () => {
  it("marks one topic, case-insensitively, or the whole channel", () => {
    const a1 = send("Lunch");
    const a2 = send("LUNCH");
    const b = send("other");
    const e = send("");
    expect(s.markTopicAsRead(w.bob.id, w.general.id, "lunch")).toEqual({ updatedCount: 2 });
    expect(flags(w.bob, a1)).toEqual(["read"]);
    expect(flags(w.bob, a2)).toEqual(["read"]);
    expect(flags(w.bob, b)).toEqual([]);
    expect(s.markTopicAsRead(w.bob.id, w.general.id, "general chat")).toEqual({ updatedCount: 1 });
    expect(flags(w.bob, e)).toEqual(["read"]);
    expect(s.markTopicAsRead(w.bob.id, w.general.id, "")).toEqual({ updatedCount: 0 });
    expect(s.markTopicAsRead(w.bob.id, w.general.id, null)).toEqual({ updatedCount: 1 });
    expect(s.unreadSummary(w.bob.id).count).toBe(0);
  });

  it("only touches the caller's own rows (no historical rows created)", () => {
    const a = send("t");
    expect(s.markTopicAsRead(carol.id, w.general.id, null)).toEqual({ updatedCount: 0 });
    expect(flags(carol, a)).toEqual(["read", "historical"]);
    expect(internals(s).bitmaps.get(key.userFlag(carol.id, "historical")).size).toBe(0);
  });

  it("errors (nothing changed)", () => {
    send("t");
    failsWithoutChange(() => s.markTopicAsRead(w.bob.id, w.general.id, "nope"), {
      code: "BAD_REQUEST",
      message: "No such topic 'nope'",
    });
    // A topic with messages the caller never received does not exist for them.
    failsWithoutChange(() => s.markTopicAsRead(carol.id, w.general.id, "t"), {
      code: "BAD_REQUEST",
      message: "No such topic 't'",
    });
    failsWithoutChange(() => s.markTopicAsRead(w.bob.id, 9999, "t"), {
      code: "BAD_REQUEST",
      message: "Invalid channel ID",
    });
    failsWithoutChange(() => s.markTopicAsRead(w.bob.id, w.secret.id, null), {
      code: "BAD_REQUEST",
      message: "Invalid channel ID",
    });
    failsWithoutChange(() => s.markTopicAsRead(w.guest.id, w.general.id, null), {
      code: "BAD_REQUEST",
      message: "Invalid channel ID",
    });
  });
});

describe("unreadSummary", () => {
  it("groups DMs, group DMs, channel topics and mentions", () => {
    const p1 = dm(w.bob.id, [w.alice.id]);
    const self = dm(w.alice.id, [w.alice.id]);
    const g = dm(w.bob.id, [w.alice.id, w.owner.id]);
    const t1 = send("Lunch", "x", w.bob.id);
    const t2 = send("LUNCH", "hey @**Alice**", w.bob.id);
    const t3 = send("plans", "@**all** meeting", w.bob.id);
    const mine = send("plans", "my own", w.alice.id);
    const sec = send("s", "x", w.owner.id, "secret");
    const sorted = [w.owner.id, w.alice.id, w.bob.id].sort((a, b) => a - b).join(",");
    expect(s.unreadSummary(w.alice.id)).toEqual({
      count: 8,
      pms: [
        { otherUserId: w.bob.id, unreadMessageIds: [p1] },
        { otherUserId: w.alice.id, unreadMessageIds: [self] },
      ],
      streams: [
        { streamId: w.general.id, topic: "Lunch", unreadMessageIds: [t1, t2] },
        { streamId: w.general.id, topic: "plans", unreadMessageIds: [t3, mine] },
        { streamId: w.secret.id, topic: "s", unreadMessageIds: [sec] },
      ],
      huddles: [{ userIdsString: sorted, unreadMessageIds: [g] }],
      mentions: [t2, t3],
      oldUnreadsMissing: false,
    });
  });

  it("muted topics and channels are listed but not counted; wildcard mentions in them are dropped", () => {
    const muted = send("muted topic", "@**all** hi", w.bob.id);
    const mutedPersonal = send("muted topic", "@**Alice** hi", w.bob.id);
    const open = send("open", "x", w.bob.id);
    s.setTopicPolicy(w.alice.id, w.general.id, "Muted Topic", 1);
    const inSecret = send("s", "@**all** x", w.owner.id, "secret");
    s.setChannelMuted(w.alice.id, w.secret.id, true);
    const u = s.unreadSummary(w.alice.id);
    expect(u.count).toBe(1);
    expect(u.streams).toEqual([
      { streamId: w.general.id, topic: "muted topic", unreadMessageIds: [muted, mutedPersonal] },
      { streamId: w.general.id, topic: "open", unreadMessageIds: [open] },
      { streamId: w.secret.id, topic: "s", unreadMessageIds: [inSecret] },
    ]);
    expect(u.mentions).toEqual([mutedPersonal]);
    // An unmuted topic inside a muted channel counts again.
    s.setTopicPolicy(w.alice.id, w.secret.id, "s", 2);
    expect(s.unreadSummary(w.alice.id).count).toBe(2);
    expect(s.unreadSummary(w.alice.id).mentions).toEqual([mutedPersonal, inSecret]);
  });

  it("unread messages of channels the user left are not listed", () => {
    send("t", "x", w.bob.id);
    s.unsubscribe(w.alice.id, ["general"]);
    expect(s.unreadSummary(w.alice.id)).toEqual({
      count: 0,
      pms: [],
      streams: [],
      huddles: [],
      mentions: [],
      oldUnreadsMissing: false,
    });
  });
});
