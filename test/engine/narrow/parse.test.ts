import { describe, expect, it } from "vitest";
import { BadRequestError, EngineError } from "../../../src/engine/errors.js";
import { parseNarrow } from "../../../src/engine/narrow/parse.js";

function badRequest(value: unknown): { code: string; message: string } {
  try {
    parseNarrow(value);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    const e = error as EngineError;
    return { code: e.code, message: e.message };
  }
  throw new Error("expected parseNarrow to throw");
}

describe("parseNarrow: accepted shapes", () => {
  it("treats null/undefined as no narrow and [] as empty", () => {
    expect(parseNarrow(null)).toEqual([]);
    expect(parseNarrow(undefined)).toEqual([]);
    expect(parseNarrow([])).toEqual([]);
  });

  it("object form, negated defaulting to false", () => {
    expect(parseNarrow([{ operator: "topic", operand: "lunch" }])).toEqual([
      { operator: "topic", operand: "lunch", negated: false },
    ]);
    expect(parseNarrow([{ operator: "topic", operand: "lunch", negated: true }])).toEqual([
      { operator: "topic", operand: "lunch", negated: true },
    ]);
    expect(parseNarrow([{ operator: "topic", operand: "lunch", negated: null }])).toEqual([
      { operator: "topic", operand: "lunch", negated: false },
    ]);
  });

  it("legacy pair form, never negated", () => {
    expect(
      parseNarrow([
        ["stream", "general"],
        ["is", "starred"],
      ]),
    ).toEqual([
      { operator: "stream", operand: "general", negated: false },
      { operator: "is", operand: "starred", negated: false },
    ]);
  });

  it("string-or-integer operators take names or IDs", () => {
    for (const operator of [
      "channel",
      "stream",
      "id",
      "sender",
      "group-pm-with",
      "group_pm_with",
      "dm-including",
      "dm-with",
      "with",
      "mentions",
    ]) {
      expect(parseNarrow([{ operator, operand: 12 }])).toEqual([{ operator, operand: 12, negated: false }]);
      expect(parseNarrow([{ operator, operand: "x@y.z" }])).toEqual([{ operator, operand: "x@y.z", negated: false }]);
    }
  });

  it("dm operators take a string or a list of integer IDs", () => {
    for (const operator of ["dm", "pm-with", "pm_with"]) {
      expect(parseNarrow([{ operator, operand: [3, 4] }])).toEqual([{ operator, operand: [3, 4], negated: false }]);
      expect(parseNarrow([{ operator, operand: "a@x.y,b@x.y" }])).toEqual([
        { operator, operand: "a@x.y,b@x.y", negated: false },
      ]);
      expect(parseNarrow([{ operator, operand: [] }])).toEqual([{ operator, operand: [], negated: false }]);
    }
  });

  it("does not judge unknown operators (that is normalize's job)", () => {
    expect(parseNarrow([{ operator: "bogus", operand: "x" }])).toEqual([
      { operator: "bogus", operand: "x", negated: false },
    ]);
  });
});

describe("parseNarrow: structural errors are BAD_REQUEST", () => {
  const cases: [string, unknown, string][] = [
    ["not a list", { operator: "is", operand: "dm" }, "narrow is not a list"],
    ["string narrow", "is:dm", "narrow is not a list"],
    ["pair of three", [["is", "dm", "x"]], "element is not a string pair"],
    ["pair of one", [["is"]], "element is not a string pair"],
    ["pair with a number", [["id", 5]], "element is not a string pair"],
    ["number element", [5], "dict or list required"],
    ["string element", ["is:dm"], "dict or list required"],
    ["null element", [null], "dict or list required"],
    ["missing operator", [{ operand: "x" }], "operator is missing"],
    ["null operator", [{ operator: null, operand: "x" }], "operator is missing"],
    ["missing operand", [{ operator: "is" }], "operand is missing"],
    ["null operand", [{ operator: "is", operand: null }], "operand is missing"],
    ["operator not a string", [{ operator: 3, operand: "x" }], "operator is not a string"],
    ["negated not a boolean", [{ operator: "is", operand: "dm", negated: "yes" }], "negated is not a boolean"],
    ["object operand", [{ operator: "topic", operand: { a: 1 } }], "Invalid operand for operator 'topic'"],
    ["boolean operand", [{ operator: "topic", operand: true }], "Invalid operand for operator 'topic'"],
    ["number for a string operator", [{ operator: "topic", operand: 5 }], "Invalid operand for operator 'topic'"],
    ["list for a string operator", [{ operator: "is", operand: [1] }], "Invalid operand for operator 'is'"],
    ["non-integer channel ID", [{ operator: "channel", operand: 1.5 }], "Invalid operand for operator 'channel'"],
    ["list for channel", [{ operator: "channel", operand: [1] }], "Invalid operand for operator 'channel'"],
    ["list for sender", [{ operator: "sender", operand: [1] }], "Invalid operand for operator 'sender'"],
    ["non-integer in dm list", [{ operator: "dm", operand: [1, 2.5] }], "Invalid operand for operator 'dm'"],
    ["string in dm list", [{ operator: "pm-with", operand: ["a@b.c"] }], "Invalid operand for operator 'pm-with'"],
    ["number for dm", [{ operator: "dm", operand: 4 }], "Invalid operand for operator 'dm'"],
    ["number for search", [{ operator: "search", operand: 4 }], "Invalid operand for operator 'search'"],
    ["blank search", [{ operator: "search", operand: "   " }], "operand cannot be blank"],
    ["empty search", [{ operator: "search", operand: "" }], "operand cannot be blank"],
  ];
  for (const [name, value, message] of cases) {
    it(name, () => {
      expect(badRequest(value)).toEqual({ code: "BAD_REQUEST", message });
    });
  }

  it("reports the first bad element", () => {
    expect(badRequest([{ operator: "is", operand: "dm" }, ["x"], { operator: "is" }])).toEqual({
      code: "BAD_REQUEST",
      message: "element is not a string pair",
    });
  });
});
