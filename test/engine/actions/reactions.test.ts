import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../../src/engine/index.js";
import { expectFailsUnchanged } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let id: number;

beforeEach(() => {
  t = tempStore();
  s = t.store;
  w = seedRealm(s);
  id = s.sendMessage({
    senderId: w.alice.id,
    to: { type: "channel", channel: "general", topic: "t" },
    content: "react",
  }).id;
});
afterEach(() => t.cleanup());

const reactions = () => s.getMessage(w.bob.id, id).message.reactions;
const fails = (fn: () => unknown, message: string, code = "BAD_REQUEST") =>
  expectFailsUnchanged(s, fn, { code, message });

describe("addReaction", () => {
  it("fills code and type from the name; zulip is the extra emoji", () => {
    s.addReaction(w.bob.id, id, { emojiName: "octopus" });
    s.addReaction(w.bob.id, id, { emojiName: "zulip" });
    expect(reactions()).toEqual([
      { emojiName: "octopus", emojiCode: "1f419", reactionType: "unicode_emoji", userId: w.bob.id },
      { emojiName: "zulip", emojiCode: "zulip", reactionType: "zulip_extra_emoji", userId: w.bob.id },
    ]);
  });

  it("refuses a name and code that do not agree, with Zulip's messages", () => {
    fails(() => s.addReaction(w.bob.id, id, { emojiName: "octopus", emojiCode: "1f600" }), "Invalid emoji name.");
    fails(() => s.addReaction(w.bob.id, id, { emojiName: "octopus", emojiCode: "zzzz" }), "Invalid emoji code.");
    fails(
      () =>
        s.addReaction(w.bob.id, id, { emojiName: "octopus", emojiCode: "1f419", reactionType: "zulip_extra_emoji" }),
      "Invalid emoji code.",
    );
    fails(
      () =>
        s.addReaction(w.bob.id, id, { emojiName: "octopus", emojiCode: "zulip", reactionType: "zulip_extra_emoji" }),
      "Invalid emoji name.",
    );
    fails(
      () => s.addReaction(w.bob.id, id, { emojiName: "party", emojiCode: "1", reactionType: "realm_emoji" }),
      "Invalid custom emoji.",
    );
    fails(() => s.addReaction(w.bob.id, id, { emojiName: "no_such_emoji" }), "Emoji 'no_such_emoji' does not exist");
    fails(() => s.addReaction(w.bob.id, id, { emojiName: "constructor" }), "Emoji 'constructor' does not exist");
    expect(reactions()).toEqual([]);
  });

  it("a reaction with an existing code is a vote and keeps the first name", () => {
    s.addReaction(w.alice.id, id, { emojiName: "grinning" });
    s.addReaction(w.bob.id, id, { emojiName: "happy", emojiCode: "1f600" });
    expect(reactions().map((r) => [r.emojiName, r.userId])).toEqual([
      ["grinning", w.alice.id],
      ["grinning", w.bob.id],
    ]);
  });
});

describe("removeReaction", () => {
  it("by emoji_code alone, by name, and needs one of them", () => {
    s.addReaction(w.bob.id, id, { emojiName: "octopus" });
    s.addReaction(w.bob.id, id, { emojiName: "zulip" });
    fails(
      () => s.removeReaction(w.bob.id, id, {}),
      "At least one of the following arguments must be present: emoji_name, emoji_code",
    );
    s.removeReaction(w.bob.id, id, { emojiCode: "1f419" });
    expect(reactions().map((r) => r.emojiName)).toEqual(["zulip"]);
    fails(
      () => s.removeReaction(w.bob.id, id, { emojiName: "zulip" }),
      "Reaction doesn't exist.",
      "REACTION_DOES_NOT_EXIST",
    );
    s.removeReaction(w.bob.id, id, { emojiName: "zulip", reactionType: "zulip_extra_emoji" });
    expect(reactions()).toEqual([]);
  });
});
