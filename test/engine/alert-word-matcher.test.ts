/**
 * Alert word matching by Zulip's AlertWordNotificationProcessor rules: lower-cased
 * text, a word counts between whitespace or Zulip's listed punctuation (not any
 * non-word character), fenced code left out, links and inline code kept.
 */
import { describe, expect, it } from "vitest";
import { AlertWordMatcher, withoutCodeFences } from "../../src/engine/alert-words/matcher.js";

const matcher = new AlertWordMatcher(
  new Map<string, readonly number[]>([
    ["deploy", [1, 2]],
    ["on call", [3]],
    ["c++", [4]],
    ["ploy", [5]],
    ["café", [6]],
  ]),
);
const alerted = (content: string) => [...matcher.usersAlerted(content)].sort((a, b) => a - b);

describe("AlertWordMatcher", () => {
  it("matches whole words case-insensitively at the start, the end and between spaces", () => {
    expect(alerted("Deploy now")).toEqual([1, 2]);
    expect(alerted("we DEPLOY")).toEqual([1, 2]);
    expect(alerted("who is On Call today")).toEqual([3]);
    expect(alerted("learning C++ now")).toEqual([4]);
    expect(alerted("un café noir")).toEqual([6]);
  });

  it("accepts Zulip's punctuation around a word and nothing else", () => {
    for (const text of [
      "(deploy)",
      '"deploy it',
      "[deploy]",
      "*deploy*",
      "`deploy`",
      "> deploy!",
      "so, deploy; ok",
      "x deploy?",
    ])
      expect(alerted(text)).toEqual([1, 2]);
    // Hyphens, slashes, underscores and letters are not boundaries in Zulip's lists.
    for (const text of [
      "re-deploy now",
      "a /deploy b",
      "redeploy it",
      "deploys it",
      "deploy-now",
      "x deploy_x",
      "x deploy/",
    ])
      expect(alerted(text)).toEqual([]);
    // Zulip lists '",' as one "character" after a word, so a closing double quote never ends one.
    expect(alerted('x "deploy"')).toEqual([]);
    // '>' may precede a word but not follow it; '?' may follow but not precede.
    expect(alerted("x deploy>")).toEqual([]);
    expect(alerted("x ?deploy")).toEqual([]);
  });

  it("reports every word that ends at a place, overlapping ones too", () => {
    // "ploy" inside "deploy" is preceded by "e": not a match; alone it is.
    expect(alerted("x deploy")).toEqual([1, 2]);
    expect(alerted("x ploy")).toEqual([5]);
  });

  it("keeps Zulip's quirk: a word starting at the second character matches whatever precedes it", () => {
    expect(alerted("xdeploy")).toEqual([1, 2]);
    expect(alerted("xxdeploy")).toEqual([]);
  });

  it("leaves fenced code out but reads links, inline code and quote fences", () => {
    expect(alerted("see\n```\ndeploy\n```\nend")).toEqual([]);
    expect(alerted("see\n~~~ python\nx = 1\ndeploy\n~~~")).toEqual([]);
    // An unclosed fence runs to the end.
    expect(alerted("see\n```\n\ndeploy")).toEqual([]);
    expect(alerted("see\n```quote\ndeploy\n```\n")).toEqual([1, 2]);
    expect(alerted("```spoiler Title\ndeploy\n```")).toEqual([1, 2]);
    expect(alerted("[deploy](https://example.com)")).toEqual([1, 2]);
    expect(alerted("run `deploy` now")).toEqual([1, 2]);
    // A code fence inside a quote fence; the quote's closing fence does not open another.
    expect(alerted("```quote\n```python\ndeploy\n```\n```\non call")).toEqual([3]);
  });

  it("strips nothing from content without fences", () => {
    expect(withoutCodeFences("a\nb ``x``")).toBe("a\nb ``x``");
  });
});
