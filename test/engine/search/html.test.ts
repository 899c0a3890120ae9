import { describe, expect, it } from "vitest";
import { escapeHtml, htmlToText } from "../../../src/engine/search/index.js";
import { decodeEntitiesWithOffsets } from "../../../src/engine/search/html.js";

describe("htmlToText", () => {
  it("drops tags and comments, separating elements with spaces", () => {
    expect(htmlToText("<p>one</p><p>two <a href=\"x>y\" title='z'>three</a></p><!-- four > five -->")).toBe(
      "one two  three",
    );
  });

  it("decodes named, decimal and hexadecimal references", () => {
    expect(htmlToText("&amp;&lt;&gt;&quot;&apos;&#39;&eacute;&yuml;&nbsp;&hellip;&#233;&#x1F600;")).toBe(
      "&<>\"''éÿ\u00a0…é😀",
    );
  });

  it("leaves unknown names and malformed references as text", () => {
    expect(htmlToText("&bogus; &amp &#xZZ; a < b")).toBe("&bogus; &amp &#xZZ; a < b");
  });

  it("replaces invalid code points with U+FFFD", () => {
    expect(htmlToText("&#0;&#xD800;&#x110000;")).toBe("\ufffd\ufffd\ufffd");
  });
});

describe("decodeEntitiesWithOffsets", () => {
  it("maps every decoded unit back to where it starts in the source", () => {
    expect(decodeEntitiesWithOffsets("<p>x caf&eacute; &amp; y</p>", 3, 24)).toEqual({
      text: "x café & y",
      offsets: [0, 1, 2, 3, 4, 5, 13, 14, 19, 20, 21],
    });
  });

  it("skips the map when nothing was decoded", () => {
    expect(decodeEntitiesWithOffsets("a &bogus; b", 0, 11)).toEqual({ text: "a &bogus; b", offsets: null });
  });
});

describe("escapeHtml", () => {
  it("escapes the five characters Zulip escapes in topics", () => {
    expect(escapeHtml(`<a href="x">Tom & Jerry's</a>`)).toBe(
      "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;",
    );
  });
});
