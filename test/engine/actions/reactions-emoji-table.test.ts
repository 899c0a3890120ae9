import { afterEach, describe, expect, it } from "vitest";
import { unicodeEmojiNames } from "../../../src/emoji/unicode.js";
import { expectFailsUnchanged } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore | undefined;
afterEach(() => t?.cleanup());

describe("reactions accept every name in the table", () => {
  it("by name alone and by name with its code; the code is the table's", () => {
    t = tempStore();
    const s = t.store;
    const w = seedRealm(s);
    const id = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "react",
    }).id;
    for (const [name, code] of unicodeEmojiNames()) {
      s.addReaction(w.bob.id, id, { emojiName: name });
      const [reaction] = s.getMessage(w.bob.id, id).message.reactions;
      expect(reaction, name).toEqual({
        emojiName: name,
        emojiCode: code,
        reactionType: "unicode_emoji",
        userId: w.bob.id,
      });
      s.removeReaction(w.bob.id, id, { emojiName: name });
      s.addReaction(w.alice.id, id, { emojiName: name, emojiCode: code, reactionType: "unicode_emoji" });
      s.removeReaction(w.alice.id, id, { emojiCode: code });
    }
    expect(s.getMessage(w.bob.id, id).message.reactions).toEqual([]);
  });

  it("refuses a real name with another emoji's code, and an unknown code", () => {
    t = tempStore();
    const s = t.store;
    const w = seedRealm(s);
    const id = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "react",
    }).id;
    const fails = (input: Parameters<typeof s.addReaction>[2], message: string) =>
      expectFailsUnchanged(s, () => s.addReaction(w.bob.id, id, input), { code: "BAD_REQUEST", message });
    fails({ emojiName: "smile", emojiCode: "1f642" }, "Invalid emoji name.");
    fails({ emojiName: "slight_smile", emojiCode: "1f604" }, "Invalid emoji name.");
    fails({ emojiName: "heart", emojiCode: "2764-fe0f" }, "Invalid emoji code.");
    fails({ emojiName: "smile", emojiCode: "1f3fb" }, "Invalid emoji code.");
    fails({ emojiName: "slightly_smiling_face" }, "Emoji 'slightly_smiling_face' does not exist");
    fails({ emojiName: "party", emojiCode: "1", reactionType: "realm_emoji" }, "Invalid custom emoji.");
  });
});
