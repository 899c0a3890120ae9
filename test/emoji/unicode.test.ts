import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  EMOJI_API_HASH,
  EMOJI_API_JSON,
  EMOJI_API_PATH,
  isUnicodeEmojiCode,
  unicodeEmojiCode,
  unicodeEmojiNames,
} from "../../src/emoji/unicode.js";

/** What zulip-flutter's ServerEmojiData decodes: code -> names, canonical first. */
const ServerEmojiData = z.object({ code_to_names: z.record(z.string(), z.array(z.string()).min(1)) }).strict();

describe("the generated unicode emoji table", () => {
  it("has Zulip's emoji set: every emoji-datasource emoji but skin tones and 23 clock faces", () => {
    const data = ServerEmojiData.parse(JSON.parse(EMOJI_API_JSON.toString("utf8")));
    const codes = Object.keys(data.code_to_names);
    expect(codes).toHaveLength(1883);
    for (const code of codes) expect(code).toMatch(/^[0-9a-f]{4,5}(-[0-9a-f]{4,5})*$/);
    expect(codes.some((code) => code.includes("fe0f"))).toBe(false);
    expect(isUnicodeEmojiCode("1f3fb")).toBe(false);
    expect(isUnicodeEmojiCode("1f550")).toBe(false);
    expect(unicodeEmojiCode("time")).toBe("1f557");
  });

  it("maps every name to one code, and the emoji data file says the same", () => {
    const data = ServerEmojiData.parse(JSON.parse(EMOJI_API_JSON.toString("utf8")));
    const seen = new Map<string, string>();
    for (const [code, names] of Object.entries(data.code_to_names)) {
      for (const name of names) {
        expect(seen.get(name), name).toBeUndefined();
        seen.set(name, code);
        expect(unicodeEmojiCode(name)).toBe(code);
      }
    }
    expect(seen.size).toBe(unicodeEmojiNames().size);
    // Zulip's emoji_names.py has about 3,340 names for this data set.
    expect(seen.size).toBe(3338);
  });

  // Zulip's picks where emoji-datasource's short_names say otherwise (checked against
  // Zulip's tools/setup/emoji/custom_emoji_names.py, after its December 2024 remap of
  // :smile: to 😄 and :slight_smile: to 🙂).
  it.each([
    ["smile", "1f604"],
    ["slight_smile", "1f642"],
    ["smiling_face", "263a"],
    ["relaxed", "263a"],
    ["+1", "1f44d"],
    ["thumbs_up", "1f44d"],
    ["like", "1f44d"],
    ["-1", "1f44e"],
    ["octopus", "1f419"],
    ["working_on_it", "1f6e0"],
    ["heart", "2764"], // emoji-datasource: 2764-fe0f
    ["tada", "1f389"],
    ["check", "2705"], // emoji-datasource: white_check_mark
    ["stuck_out_tongue", "1f61b"], // parley's old hand list had 1f61d
    ["dog", "1f415"], // emoji-datasource: dog is 1f436 (Zulip's puppy)
    ["puppy", "1f436"],
    ["cat", "1f408"],
    ["rabbit", "1f407"],
    ["folded_hands", "1f64f"],
    ["pray", "1f64f"],
    ["gold", "1f947"],
    ["jack-o-lantern", "1f383"],
    ["hash", "0023-20e3"],
    ["100", "1f4af"],
  ])("%s is %s", (name, code) => {
    expect(unicodeEmojiCode(name)).toBe(code);
  });

  // Names Zulip takes from CLDR for emoji it has no pick for: the text-to-speech name
  // is canonical, keywords are aliases unless another emoji wants them too, and a
  // name with accents also gets its ASCII form. The accented ones are names Zulip's
  // live table is known to have.
  it.each([
    ["melting_face", "1fae0"],
    ["melt", "1fae0"],
    ["flag_türkiye", "1f1f9-1f1f7"],
    ["flag_turkiye", "1f1f9-1f1f7"],
    ["gyōza", "1f95f"],
    ["gyoza", "1f95f"],
    ["piña", "1f965"],
    ["pina", "1f965"],
    ["yuèbǐng", "1f96e"],
    ["moon_cake", "1f96e"],
    ["piñata", "1fa85"],
    ["rainbow_flag", "1f3f3-200d-1f308"],
    ["technologist", "1f9d1-200d-1f4bb"],
    ["face_with_bags_under_eyes", "1fae9"],
    ["flag_sark", "1f1e8-1f1f6"],
    ["flag_côte_divoire", "1f1e8-1f1ee"],
    ["japanese_here_button", "1f201"],
    ["copyright", "00a9"],
  ])("CLDR-derived %s is %s", (name, code) => {
    expect(unicodeEmojiCode(name)).toBe(code);
  });

  it("drops a keyword two CLDR-named emoji share, and a keyword that is another emoji's name", () => {
    // "face" is a keyword of dozens of faces; "heart" is Zulip's name for 2764.
    expect(unicodeEmojiCode("face")).toBeUndefined();
    expect(unicodeEmojiCode("heart")).toBe("2764");
  });

  it.each(["slightly_smiling_face", "thumbsup", "white_check_mark", "hankey", "big_smile", "constructor", "__proto__"])(
    "%s is not a Zulip name",
    (name) => {
      expect(unicodeEmojiCode(name)).toBeUndefined();
    },
  );

  it("serves under a path carrying the content hash", () => {
    expect(EMOJI_API_PATH).toBe(`/static/generated/emoji/emoji_api.${EMOJI_API_HASH}.json`);
    expect(EMOJI_API_HASH).toMatch(/^[0-9a-f]{16}$/);
  });
});
