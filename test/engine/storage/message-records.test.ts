import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message, Store } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { getMessageRecord, messageRecords, putMessageRecord } from "../../../src/engine/storage/message-records.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;

beforeEach(() => {
  t = tempStore();
  s = t.store;
  w = seedRealm(s);
});
afterEach(() => t.cleanup());

/**
 * 10,000 UTF-16 units of multi-byte text: CJK (3 bytes each in UTF-8), astral emoji
 * (surrogate pairs, 4 bytes) at every offset so that some straddle a part boundary,
 * and one searchable word.
 */
function multiByteText(word: string): string {
  const pieces = ["日本語のテキスト", "😀", "é", "𝄞", "中文", " "];
  let out = `${word} `;
  for (let i = 0; out.length < 9_990; i++) out += pieces[i % pieces.length]!;
  return out.slice(0, 9_990).replace(/[\uD800-\uDBFF]$/, "x");
}

const send = (content: string) =>
  s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "large" }, content }).id;
const fetch = (id: number) => s.getMessage(w.bob.id, id).message;
const search = (word: string) =>
  s
    .getMessages(w.bob.id, {
      narrow: [{ operator: "search", operand: word }],
      anchor: "newest",
      numBefore: 100,
      numAfter: 0,
    })
    .messages.map((m) => m.message.id);
const overflowPages = (name: "messages" | "messageParts") =>
  (internals(s).tables[name] as unknown as { getStats(): { overflowPages: number } }).getStats().overflowPages;

describe("large message records", () => {
  it("round-trip exactly through send and fetch, are found by search, and leave no overflow pages", () => {
    const text = multiByteText("zebracorn");
    // HTML far bigger than the content: each emoji name renders to a ~100-byte span, each & to &amp;.
    const emoji = ":octopus: & ".repeat(800).trimEnd();
    const a = send(text);
    const b = send(emoji);
    const small = send("just a short one");
    expect(fetch(a).content).toBe(text);
    expect(fetch(b).content).toBe(emoji);
    expect(fetch(b).renderedContent.length).toBeGreaterThan(50_000);
    expect(fetch(small).content).toBe("just a short one");
    expect(search("zebracorn")).toEqual([a]);
    expect(search("octopus")).toEqual([b]);
    expect(overflowPages("messages")).toBe(0);
    expect(overflowPages("messageParts")).toBe(0);

    const before = [a, b, small].map(fetch);
    s = t.reopen();
    expect([a, b, small].map(fetch)).toEqual(before);
    expect(search("zebracorn")).toEqual([a]);
    const report = s.verify();
    expect(report.differences).toEqual([]);
    expect(report.problems).toEqual([]);
  });

  it("a rewritten large record (reactions) keeps its content and leaves no stale parts", () => {
    const text = multiByteText("quokka");
    const id = send(text);
    const parts = () => [...internals(s).tables.messageParts.getKeys()].filter(([m]) => m === id).length;
    const initialParts = parts();
    expect(initialParts).toBeGreaterThan(1);
    s.addReaction(w.bob.id, id, { emojiName: "octopus" });
    expect(fetch(id).content).toBe(text);
    expect(fetch(id).reactions.map((r) => r.emojiName)).toEqual(["octopus"]);
    s.removeReaction(w.bob.id, id, { emojiName: "octopus" });
    expect(fetch(id).reactions).toEqual([]);
    expect(fetch(id).content).toBe(text);
    expect(parts()).toBe(initialParts);
    expect(overflowPages("messages")).toBe(0);
    expect(overflowPages("messageParts")).toBe(0);
    s = t.reopen();
    expect(s.verify().problems).toEqual([]);
  });

  it("a rewrite from a version in parts to an inline one removes the parts", () => {
    const tables = internals(s).tables;
    const partsOf = (id: number) => [...tables.messageParts.getKeys()].filter(([m]) => m === id).length;
    const id = send(multiByteText("axolotl"));
    expect(partsOf(id)).toBeGreaterThan(1);
    const previous = getMessageRecord(tables, id)!;
    const small = { ...previous, content: "short now", renderedContent: "<p>short now</p>" } satisfies Message;
    tables.env.transactionSync(() => putMessageRecord(tables, small, previous));
    expect(partsOf(id)).toBe(0);
    expect(getMessageRecord(tables, id)?.content).toBe("short now");
  });

  it("a record in parts moved with its topic keeps exactly its parts", () => {
    const partsOf = (id: number) => [...internals(s).tables.messageParts.getKeys()].filter(([m]) => m === id).length;
    const large = multiByteText("axolotl");
    const id = send("short first");
    const other = send("a neighbour");
    expect(partsOf(id)).toBe(0);
    s.updateMessage(w.alice.id, id, { content: large });
    const parts = partsOf(id);
    expect(parts).toBeGreaterThan(1);
    s.updateMessage(w.alice.id, id, { topic: "moved", propagateMode: "change_all" });
    expect(partsOf(id)).toBe(parts);
    expect(partsOf(other)).toBe(0);
    expect(fetch(id).content).toBe(large);
    expect([fetch(id).topic, fetch(other).topic]).toEqual(["moved", "moved"]);
    s = t.reopen();
    expect(fetch(id).content).toBe(large);
    expect(s.verify().problems).toEqual([]);
  });

  it("a deleted record in parts leaves none of its parts, and an inline neighbour's deletion takes none", async () => {
    const partsOf = (id: number) => [...internals(s).tables.messageParts.getKeys()].filter(([m]) => m === id).length;
    const large = send(multiByteText("axolotl"));
    const small = send("a neighbour");
    const kept = send(multiByteText("narwhal"));
    const parts = partsOf(kept);
    expect(partsOf(large)).toBeGreaterThan(1);
    await s.deleteMessage(w.owner.id, small);
    expect(partsOf(large)).toBeGreaterThan(1);
    await s.deleteMessage(w.owner.id, large);
    expect(partsOf(large)).toBe(0);
    expect(partsOf(kept)).toBe(parts);
    expect(search("axolotl")).toEqual([]);
    expect(fetch(kept).content).toBe(multiByteText("narwhal"));
    expect(s.verify().problems).toEqual([]);
  });

  it("reads a large record stored inline, as stores written before the split hold them", () => {
    const id = send("placeholder");
    const text = multiByteText("narwhal");
    const tables = internals(s).tables;
    const old = {
      ...getMessageRecord(tables, id)!,
      content: text,
      renderedContent: `<p>${text}</p>`,
    } satisfies Message;
    tables.env.transactionSync(() => tables.messages.putSync(id, old));
    expect(overflowPages("messages")).toBeGreaterThan(0);
    expect(fetch(id).content).toBe(text);
    expect([...messageRecords(tables)].find((m) => m.id === id)?.content).toBe(text);
    // Its next rewrite moves it to parts.
    s.addReaction(w.bob.id, id, { emojiName: "octopus" });
    expect(fetch(id).content).toBe(text);
    expect([...internals(s).tables.messageParts.getKeys()].some(([m]) => m === id)).toBe(true);
  });

  it("verify reports a part without its record", () => {
    const tables = internals(s).tables;
    const id = send("short");
    tables.env.transactionSync(() => tables.messageParts.putSync([id, 0], new Uint8Array([1, 2, 3])));
    expect(s.verify().problems).toEqual([`message_parts has part 0 of message ${id}, whose record has 0 parts`]);
  });
});
