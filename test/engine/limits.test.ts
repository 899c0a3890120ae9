import { describe, expect, it } from "vitest";
import { clip } from "../../src/engine/errors.js";
import { BadRequestError } from "../../src/engine/index.js";
import { codePointPrefix, exceedsCodePoints } from "../../src/engine/limits.js";

describe("exceedsCodePoints", () => {
  it("counts code points, not UTF-16 units", () => {
    expect(exceedsCodePoints("😀".repeat(60), 60)).toBe(false);
    expect(exceedsCodePoints("😀".repeat(61), 60)).toBe(true);
    expect(exceedsCodePoints("a".repeat(60), 60)).toBe(false);
    expect(exceedsCodePoints("a".repeat(61), 60)).toBe(true);
    expect(exceedsCodePoints("a".repeat(1_000_000), 60)).toBe(true);
  });
});

describe("codePointPrefix", () => {
  it("cuts between code points", () => {
    expect(codePointPrefix("a😀b😀c", 3)).toBe("a😀b");
    expect(codePointPrefix("abc", 3)).toBe("abc");
    expect(codePointPrefix("abc", 5)).toBe("abc");
  });
});

describe("clip", () => {
  it("quotes at most the limit, marks the cut and never splits a surrogate pair", () => {
    expect(clip("short")).toBe("short");
    expect(clip("x".repeat(101))).toBe(`${"x".repeat(100)}…`);
    expect(clip(`${"x".repeat(99)}😀`)).toBe(`${"x".repeat(99)}…`);
  });

  it("bounds every engine error message and data string", () => {
    const e = new BadRequestError("y".repeat(50_000), { name: "z".repeat(50_000) });
    expect(e.message.length).toBeLessThanOrEqual(1001);
    expect(String(e.data["name"]).length).toBeLessThanOrEqual(1001);
  });
});
