import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BadNarrowError, type EngineError } from "../../../src/engine/errors.js";
import type { User } from "../../../src/engine/index.js";
import { normalizeNarrow } from "../../../src/engine/narrow/normalize.js";
import { parseNarrow } from "../../../src/engine/narrow/parse.js";
import type { Term } from "../../../src/engine/narrow/terms.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { internals } from "../../../src/engine/internal.js";

let t: TempStore;
let w: ReturnType<typeof seedRealm>;
let other: { realmUser: User; channelId: number };
let msg: { general: number; generalChat: number; secret: number; dmAliceBob: number; group: number };

beforeAll(() => {
  t = tempStore();
  const s = t.store;
  w = seedRealm(s);
  const second = s.createRealm({
    subdomain: "other",
    name: "Other",
    owner: { email: "x@other.dev", fullName: "Xavier" },
  });
  s.subscribe(second.owner.id, { channels: [{ name: "elsewhere" }] });
  other = { realmUser: second.owner, channelId: internals(s).channelByName.get(`${second.realm.id}:ELSEWHERE`)! };
  msg = {
    general: s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "Lunch Plans" },
      content: "food",
    }).id,
    generalChat: s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "" },
      content: "empty topic",
    }).id,
    secret: s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "secret", topic: "hidden" },
      content: "psst",
    }).id,
    dmAliceBob: s.sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "hi bob" })
      .id,
    group: s.sendMessage({
      senderId: w.alice.id,
      to: { type: "direct", users: [w.bob.id, w.owner.id] },
      content: "hi all",
    }).id,
  };
});
afterAll(() => t.cleanup());

function norm(user: User, narrow: unknown): Term[] {
  return normalizeNarrow(internals(t.store), user, parseNarrow(narrow));
}
function one(narrow: unknown, user: User = w.alice): Term {
  const terms = norm(user, narrow);
  expect(terms).toHaveLength(1);
  return terms[0]!;
}
function narrowError(narrow: unknown, user: User = w.alice): { code: string; message: string; data: unknown } {
  try {
    norm(user, narrow);
  } catch (error) {
    expect(error).toBeInstanceOf(BadNarrowError);
    const e = error as EngineError;
    return { code: e.code, message: e.message, data: e.data };
  }
  throw new Error("expected a BadNarrowError");
}
function bad(desc: string) {
  return { code: "BAD_NARROW", message: `Invalid narrow operator: ${desc}`, data: { desc } };
}
const op = (operator: string, operand: string | number | number[], negated = false) => ({ operator, operand, negated });

describe("channel / stream", () => {
  it("resolves names case-insensitively, IDs and numeric strings", () => {
    const expected = { kind: "channel", channelId: w.general.id, negated: false };
    expect(one([op("channel", "general")])).toEqual(expected);
    expect(one([op("channel", "GENERAL")])).toEqual(expected);
    expect(one([op("stream", " General ")])).toEqual(expected);
    expect(one([op("channel", w.general.id)])).toEqual(expected);
    expect(one([op("stream", String(w.general.id))])).toEqual(expected);
    expect(one([["stream", "general"]])).toEqual(expected);
    expect(one([op("channel", "general", true)])).toEqual({ ...expected, negated: true });
  });

  it("a channel the caller cannot see is unknown, exactly like a missing one (no existence oracle)", () => {
    // bob is not in the private "secret"; the guest is in no channel.
    expect(narrowError([op("channel", "secret")], w.bob)).toEqual(bad("unknown channel secret"));
    expect(narrowError([op("channel", w.secret.id)], w.bob)).toEqual(bad(`unknown channel ${w.secret.id}`));
    expect(narrowError([op("stream", String(w.secret.id))], w.bob)).toEqual(bad(`unknown channel ${w.secret.id}`));
    expect(narrowError([op("channel", "general")], w.guest)).toEqual(bad("unknown channel general"));
    // Subscribers and administrators see it.
    expect(one([op("channel", "secret")], w.alice)).toEqual({
      kind: "channel",
      channelId: w.secret.id,
      negated: false,
    });
    expect(one([op("channel", w.secret.id)], w.owner)).toEqual({
      kind: "channel",
      channelId: w.secret.id,
      negated: false,
    });
  });

  it("a former subscriber may still name the channel (they keep what they received)", () => {
    const s = t.store;
    const carol = s.createUser({ realmId: w.realm.id, email: "carol-former@test.dev", fullName: "Carol" });
    s.subscribe(w.owner.id, { channels: [{ name: "secret" }], principals: [carol.id] });
    s.unsubscribe(carol.id, ["secret"]);
    expect(one([op("channel", "secret")], carol)).toEqual({ kind: "channel", channelId: w.secret.id, negated: false });
  });

  it("unknown channel by name, ID, or in another realm", () => {
    expect(narrowError([op("channel", "nope")])).toEqual(bad("unknown channel nope"));
    expect(narrowError([op("stream", 9999)])).toEqual(bad("unknown channel 9999"));
    expect(narrowError([op("channel", other.channelId)])).toEqual(bad(`unknown channel ${other.channelId}`));
    expect(narrowError([op("channel", "elsewhere")])).toEqual(bad("unknown channel elsewhere"));
  });
});

describe("channels / streams", () => {
  it("accepts public and web-public", () => {
    expect(one([op("channels", "public")])).toEqual({ kind: "channels", which: "public", negated: false });
    expect(one([op("streams", "web-public", true)])).toEqual({ kind: "channels", which: "web-public", negated: true });
  });
  it("rejects other operands", () => {
    expect(narrowError([op("channels", "private")])).toEqual(bad("unknown channels operand private"));
    expect(narrowError([op("streams", "all")])).toEqual(bad("unknown channels operand all"));
  });
});

describe("topic", () => {
  it("keeps the operand as given", () => {
    expect(one([op("topic", "Lunch Plans")])).toEqual({ kind: "topic", topic: "Lunch Plans", negated: false });
    expect(one([op("topic", "")])).toEqual({ kind: "topic", topic: "", negated: false });
  });
  it("rewrites the realm's empty-topic display name to the empty topic", () => {
    expect(one([op("topic", "general chat")])).toEqual({ kind: "topic", topic: "", negated: false });
    expect(one([op("topic", "general chat", true)])).toEqual({ kind: "topic", topic: "", negated: true });
    // Only the exact display name is rewritten.
    expect(one([op("topic", "General Chat")])).toEqual({ kind: "topic", topic: "General Chat", negated: false });
  });
});

describe("users: sender, dm-including, dm-with, group-pm-with, mentions", () => {
  it("resolve emails (case-insensitive, trimmed), IDs and numeric strings", () => {
    for (const operand of ["bob@test.dev", " BOB@test.dev ", w.bob.id, String(w.bob.id)]) {
      expect(one([op("sender", operand)])).toEqual({ kind: "sender", userId: w.bob.id, negated: false });
    }
    expect(one([op("dm-including", "bob@test.dev")])).toEqual({
      kind: "dmIncluding",
      userId: w.bob.id,
      negated: false,
    });
    expect(one([op("dm-with", w.bob.id)])).toEqual({ kind: "dmIncluding", userId: w.bob.id, negated: false });
    expect(one([op("group-pm-with", w.bob.id)])).toEqual({ kind: "groupDmWith", userId: w.bob.id, negated: false });
    expect(one([op("group_pm_with", "bob@test.dev")])).toEqual({
      kind: "groupDmWith",
      userId: w.bob.id,
      negated: false,
    });
    expect(one([op("mentions", w.bob.id, true)])).toEqual({ kind: "mentions", userId: w.bob.id, negated: true });
  });

  it("unknown users, including users of another realm", () => {
    expect(narrowError([op("sender", "nobody@test.dev")])).toEqual(bad("unknown user nobody@test.dev"));
    expect(narrowError([op("sender", 9999)])).toEqual(bad("unknown user 9999"));
    expect(narrowError([op("sender", other.realmUser.id)])).toEqual(bad(`unknown user ${other.realmUser.id}`));
    expect(narrowError([op("sender", "x@other.dev")])).toEqual(bad("unknown user x@other.dev"));
    expect(narrowError([op("dm-including", "ghost@test.dev")])).toEqual(bad("unknown user ghost@test.dev"));
    expect(narrowError([op("group-pm-with", 9999)])).toEqual(bad("unknown user 9999"));
    expect(narrowError([op("mentions", "ghost@test.dev")])).toEqual(bad("unknown user ghost@test.dev"));
  });
});

describe("dm / pm-with / pm_with", () => {
  it("resolves IDs and comma-separated emails, drops the caller, sorts and dedupes", () => {
    const expected = {
      kind: "dm",
      userIds: [w.owner.id, w.bob.id].sort((a, b) => a - b),
      empty: false,
      negated: false,
    };
    expect(one([op("dm", [w.bob.id, w.owner.id, w.alice.id, w.bob.id])])).toEqual(expected);
    expect(one([op("pm-with", "bob@test.dev, owner@test.dev,alice@test.dev")])).toEqual(expected);
    expect(one([op("pm_with", `${w.owner.id},bob@test.dev`)])).toEqual(expected);
    expect(one([["pm-with", "bob@test.dev"]])).toEqual({
      kind: "dm",
      userIds: [w.bob.id],
      empty: false,
      negated: false,
    });
  });
  it("DMs with oneself resolve to no other users", () => {
    expect(one([op("dm", [w.alice.id])])).toEqual({ kind: "dm", userIds: [], empty: false, negated: false });
  });
  it("an empty operand matches nothing (no error)", () => {
    expect(one([op("dm", [])])).toEqual({ kind: "dm", userIds: [], empty: true, negated: false });
    expect(one([op("dm", " , ")])).toEqual({ kind: "dm", userIds: [], empty: true, negated: false });
  });
  it("unknown users report the whole operand", () => {
    expect(narrowError([op("dm", [w.bob.id, 9999])])).toEqual(bad(`unknown user in [${w.bob.id},9999]`));
    expect(narrowError([op("dm", "bob@test.dev,ghost@test.dev")])).toEqual(
      bad("unknown user in bob@test.dev,ghost@test.dev"),
    );
    expect(narrowError([op("pm-with", [other.realmUser.id])])).toEqual(bad(`unknown user in [${other.realmUser.id}]`));
  });
});

describe("is / has / in", () => {
  it("maps every is: operand, is:private to dm", () => {
    for (const what of ["dm", "starred", "unread", "mentioned", "alerted", "resolved", "followed", "muted"]) {
      expect(one([op("is", what)])).toEqual({ kind: "is", what, negated: false });
    }
    expect(one([op("is", "private", true)])).toEqual({ kind: "is", what: "dm", negated: true });
    expect(one([["is", "private"]])).toEqual({ kind: "is", what: "dm", negated: false });
  });
  it("rejects unknown is: operands", () => {
    expect(narrowError([op("is", "bogus")])).toEqual(bad("unknown 'is' operand bogus"));
    expect(narrowError([op("is", "Starred")])).toEqual(bad("unknown 'is' operand Starred"));
  });
  it("operands named like Object.prototype members are unknown, for every operator", () => {
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      expect(narrowError([op("is", name)])).toEqual(bad(`unknown 'is' operand ${name}`));
      expect(narrowError([op("has", name)])).toEqual(bad(`unknown 'has' operand ${name}`));
      expect(narrowError([op("in", name)])).toEqual(bad(`unknown 'in' operand ${name}`));
      expect(narrowError([op("channels", name)])).toEqual(bad(`unknown channels operand ${name}`));
      expect(narrowError([op("channel", name)])).toEqual(bad(`unknown channel ${name}`));
      expect(narrowError([op("sender", name)])).toEqual(bad(`unknown user ${name}`));
      expect(narrowError([op("dm", name)])).toEqual(bad(`unknown user in ${name}`));
      expect(narrowError([op("mentions", name)])).toEqual(bad(`unknown user ${name}`));
      expect(narrowError([op(name, "x")])).toEqual(bad(`unknown operator ${name}`));
    }
  });
  it("maps has: operands and rejects others", () => {
    for (const what of ["link", "image", "attachment", "reaction"])
      expect(one([op("has", what)])).toEqual({ kind: "has", what, negated: false });
    expect(narrowError([op("has", "video")])).toEqual(bad("unknown 'has' operand video"));
  });
  it("in:home is a term, in:all is dropped, others are errors", () => {
    expect(one([op("in", "home", true)])).toEqual({ kind: "inHome", negated: true });
    expect(norm(w.alice, [op("in", "all")])).toEqual([]);
    expect(narrowError([op("in", "everywhere")])).toEqual(bad("unknown 'in' operand everywhere"));
  });
});

describe("id / near / search / unknown operators", () => {
  it("id accepts numbers and digit strings up to 2^31-1", () => {
    expect(one([op("id", 42)])).toEqual({ kind: "id", messageId: 42, negated: false });
    expect(one([op("id", " 42 ")])).toEqual({ kind: "id", messageId: 42, negated: false });
    expect(one([op("id", 2147483647)])).toEqual({ kind: "id", messageId: 2147483647, negated: false });
  });
  it("Invalid message ID", () => {
    for (const operand of ["abc", "1.5", "-1", "", 2147483648, "2147483648", -3]) {
      expect(narrowError([op("id", operand)])).toEqual(bad("Invalid message ID"));
    }
  });
  it("near is a no-op; search keeps its query", () => {
    expect(norm(w.alice, [op("near", "12")])).toEqual([]);
    expect(one([op("search", "lunch plans")])).toEqual({ kind: "search", query: "lunch plans", negated: false });
  });
  it("unknown operators", () => {
    expect(narrowError([op("bogus", "x")])).toEqual(bad("unknown operator bogus"));
    expect(narrowError([op("Stream", "general")])).toEqual(bad("unknown operator Stream"));
    expect(narrowError([op("channel", "general"), op("from", "x")])).toEqual(bad("unknown operator from"));
  });
});

describe("with", () => {
  it("rewrites to the message's channel and topic, replacing conversation terms and keeping others", () => {
    expect(
      norm(w.bob, [op("channel", "secret"), op("topic", "other"), op("is", "starred"), op("with", msg.general)]),
    ).toEqual([
      { kind: "is", what: "starred", negated: false },
      { kind: "channel", channelId: w.general.id, negated: false },
      { kind: "topic", topic: "Lunch Plans", negated: false },
    ]);
    expect(norm(w.bob, [op("with", String(msg.generalChat))])).toEqual([
      { kind: "channel", channelId: w.general.id, negated: false },
      { kind: "topic", topic: "", negated: false },
    ]);
  });

  it("a public channel message is accessible through shared history even to a user who never received it", () => {
    // The guest cannot access public history: `with` fails for them.
    expect(norm(w.owner, [op("with", msg.general)])).toHaveLength(2);
    expect(narrowError([op("with", msg.general)], w.guest)).toEqual(bad("Invalid 'with' operator"));
  });

  it("rewrites to the message's direct-message conversation", () => {
    expect(norm(w.bob, [op("dm", [w.owner.id]), op("with", msg.dmAliceBob)])).toEqual([
      { kind: "dm", userIds: [w.alice.id], empty: false, negated: false },
    ]);
    expect(norm(w.owner, [op("sender", w.alice.id), op("with", msg.group)])).toEqual([
      { kind: "sender", userId: w.alice.id, negated: false },
      { kind: "dm", userIds: [w.alice.id, w.bob.id], empty: false, negated: false },
    ]);
  });

  it("an inaccessible or missing message: dropped when the rest defines a conversation", () => {
    // bob is not subscribed to the private "secret" channel (protected history).
    expect(norm(w.bob, [op("channel", "general"), op("topic", "t"), op("with", msg.secret)])).toEqual([
      { kind: "channel", channelId: w.general.id, negated: false },
      { kind: "topic", topic: "t", negated: false },
    ]);
    expect(norm(w.bob, [op("dm", [w.alice.id]), op("with", 99999)])).toEqual([
      { kind: "dm", userIds: [w.alice.id], empty: false, negated: false },
    ]);
    expect(norm(w.owner, [op("stream", "general"), op("topic", "x"), op("with", msg.dmAliceBob)])).toHaveLength(2);
  });

  it("an inaccessible or missing message otherwise: Invalid 'with' operator", () => {
    expect(narrowError([op("with", msg.secret)], w.bob)).toEqual(bad("Invalid 'with' operator"));
    expect(narrowError([op("channel", "general"), op("with", msg.secret)], w.bob)).toEqual(
      bad("Invalid 'with' operator"),
    );
    expect(narrowError([op("channel", "general"), op("topic", "t", true), op("with", msg.secret)], w.bob)).toEqual(
      bad("Invalid 'with' operator"),
    );
    expect(narrowError([op("dm", [w.alice.id], true), op("with", msg.secret)], w.bob)).toEqual(
      bad("Invalid 'with' operator"),
    );
    expect(narrowError([op("with", 99999)])).toEqual(bad("Invalid 'with' operator"));
    expect(narrowError([op("with", 4294967296)])).toEqual(bad("Invalid 'with' operator"));
  });

  it("a non-integer operand: Invalid 'with' operator", () => {
    expect(narrowError([op("with", "abc")])).toEqual(bad("Invalid 'with' operator"));
    expect(narrowError([op("with", "-4")])).toEqual(bad("Invalid 'with' operator"));
  });

  it("duplicate with: an operator-combination error", () => {
    const desc = "Duplicate 'with' operators.";
    const expected = { code: "BAD_NARROW", message: `Invalid narrow operator combination: ${desc}`, data: { desc } };
    expect(narrowError([op("with", msg.general), op("with", msg.general)])).toEqual(expected);
    // Checked before any other term is interpreted.
    expect(narrowError([op("bogus", "x"), op("with", 1), op("with", "abc")])).toEqual(expected);
  });
});

describe("channel/DM conflict", () => {
  const conflict = bad("No message can be both a channel message and direct message");
  const dmTerms = [
    op("dm", [2]),
    op("is", "dm"),
    op("is", "private"),
    op("dm-including", 2),
    op("dm-with", 2),
    op("group-pm-with", 2),
    op("pm-with", [2]),
  ];
  const channelTerms = [
    op("channel", "general"),
    op("stream", "general"),
    op("channels", "public"),
    op("topic", "x"),
    op("is", "dm", true),
  ];

  it("every non-negated channel-ish term with every non-negated DM term", () => {
    for (const c of channelTerms) {
      for (const d of dmTerms) {
        if (c.operator === "is" && d.operator === "is") continue; // is:dm and -is:dm: see below
        expect(narrowError([c, d])).toEqual(conflict);
        expect(narrowError([d, c])).toEqual(conflict);
      }
    }
  });

  it("negated is:dm counts as a channel term", () => {
    expect(narrowError([op("is", "dm", true), op("dm", [w.bob.id])])).toEqual(conflict);
    expect(narrowError([op("is", "dm", true), op("is", "dm")])).toEqual(conflict);
  });

  it("other negated terms are ignored for the check", () => {
    expect(norm(w.alice, [op("channel", "general", true), op("dm", [w.bob.id])])).toHaveLength(2);
    expect(norm(w.alice, [op("channel", "general"), op("dm", [w.bob.id], true)])).toHaveLength(2);
    expect(norm(w.alice, [op("topic", "x", true), op("is", "dm")])).toHaveLength(2);
    expect(norm(w.alice, [op("is", "dm", true), op("channel", "general"), op("topic", "t")])).toHaveLength(3);
    expect(norm(w.alice, [op("is", "dm"), op("sender", w.bob.id), op("is", "starred")])).toHaveLength(3);
  });

  it("with rewrites are checked too", () => {
    expect(narrowError([op("is", "dm"), op("with", msg.general)], w.bob)).toEqual(conflict);
  });
});
