/**
 * Reply bodies in pieces: joined into a shared buffer right before uWS copies them out.
 * The join must be exact whatever the sizes, and a body over the shared buffer's
 * ceiling must not be cut or share memory with the next answer.
 */
import { describe, expect, it } from "vitest";
import { bodyByteLength, JsonParts, success, RawJson } from "../../src/http/respond.js";

const piece = (n: number, fill: string) => Buffer.alloc(n, fill);

describe("JsonParts", () => {
  it("joins exactly, growing the shared buffer past its first size", () => {
    for (const sizes of [[0], [1, 2, 3], [100_000, 200_000], [300_000, 1]]) {
      const parts = sizes.map((n, i) => piece(n, String.fromCharCode(97 + i)));
      const body = new JsonParts(parts);
      expect(body.byteLength).toBe(sizes.reduce((a, b) => a + b, 0));
      expect(body.joinedTransiently().equals(Buffer.concat(parts))).toBe(true);
      expect(body.joined().equals(Buffer.concat(parts))).toBe(true);
    }
  });

  it("reuses one buffer for small bodies (so a view is valid only until the next join)", () => {
    const first = new JsonParts([piece(10, "x")]).joinedTransiently();
    const copy = Buffer.from(first);
    new JsonParts([piece(10, "y")]).joinedTransiently();
    expect(first.toString()).toBe("y".repeat(10));
    expect(copy.toString()).toBe("x".repeat(10));
  });

  it("gives a body over the ceiling its own buffer", () => {
    const big = new JsonParts([piece(9 * 1024 * 1024, "b")]).joinedTransiently();
    new JsonParts([piece(10, "z")]).joinedTransiently();
    expect(big.length).toBe(9 * 1024 * 1024);
    expect(big.every((byte) => byte === 98)).toBe(true);
  });

  it("is what success() answers with raw JSON, and measures its length", () => {
    const reply = success({ messages: new RawJson([Buffer.from("[1,"), Buffer.from("2]")]), found_newest: true }, []);
    expect(reply.body).toBeInstanceOf(JsonParts);
    const text = (reply.body as JsonParts).joined().toString();
    expect(JSON.parse(text)).toEqual({ result: "success", msg: "", found_newest: true, messages: [1, 2] });
    expect(bodyByteLength(reply.body)).toBe(Buffer.byteLength(text));
  });
});
