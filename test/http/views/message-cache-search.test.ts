import { afterEach, describe, expect, it } from "vitest";
import { highlightsFor, type Store } from "../../../src/engine/index.js";
import { MessageJsonCache } from "../../../src/http/views/message-cache.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore | null = null;
afterEach(() => {
  t?.cleanup();
  t = null;
});

const OPTIONS = { applyMarkdown: true, clientGravatar: true, allowEmptyTopicName: false } as const;

/** The cache's search answer, and the one computed from each message record directly. */
function both(
  store: Store,
  cache: MessageJsonCache,
  realm: ReturnType<typeof seedRealm>["realm"],
  userId: number,
  query: string,
) {
  const window = store.getMessageWindow(userId, {
    narrow: [{ operator: "search", operand: query }],
    anchor: "newest",
    numBefore: 50,
    numAfter: 0,
  });
  const served = JSON.parse(Buffer.concat(cache.windowJson(realm, window, OPTIONS)).toString()) as Record<
    string,
    unknown
  >[];
  const direct = window.ids.map((id) => {
    const h = highlightsFor(store.findMessageRecord(id)!, window.searchTerms!);
    return { id, match_content: h.matchContent, match_subject: h.matchSubject };
  });
  return {
    served: served.map((m) => ({ id: m["id"], match_content: m["match_content"], match_subject: m["match_subject"] })),
    direct,
    messages: served,
  };
}

describe("MessageJsonCache search highlights (token forms kept per message)", () => {
  it("match the highlights computed from the records, for new, repeated and different terms", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const contents = [
      "lunch &amp; waves at **noon**",
      "Waving: WAVED! lunch <b>x</b>",
      "no match here",
      "`lunch` in code and [lunch](https://example.com/lunch)",
    ];
    contents.forEach((content, i) =>
      t!.store.sendMessage({
        senderId: w.alice.id,
        to: { type: "channel", channel: "general", topic: i % 2 ? "lunch plans" : "waves & <tides>" },
        content,
        client: "test",
      }),
    );
    const cache = new MessageJsonCache(t.store);
    for (const query of ["lunch", "lunch", "wave", "lunch wave", "wave", "tides", "noon lunch"]) {
      const r = both(t.store, cache, w.realm, w.bob.id, query);
      expect(r.served.length).toBeGreaterThan(0);
      expect(r.served).toEqual(r.direct);
    }
    // Highlighting really happened (not an unchanged copy of the content).
    expect(
      both(t.store, cache, w.realm, w.bob.id, "lunch").served.every((m) =>
        String(m.match_content).includes('<span class="highlight">'),
      ),
    ).toBe(true);
  });

  it("shows a reaction added after the message was highlighted, with the same highlights", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const id = t.store.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "food" },
      content: "lunch soon",
      client: "test",
    }).id;
    const cache = new MessageJsonCache(t.store);
    const before = both(t.store, cache, w.realm, w.bob.id, "lunch");
    expect(before.messages[0]!["reactions"]).toEqual([]);
    t.store.addReaction(w.bob.id, id, { emojiName: "octopus" });
    const after = both(t.store, cache, w.realm, w.bob.id, "lunch");
    expect((after.messages[0]!["reactions"] as unknown[]).length).toBe(1);
    expect(after.served).toEqual(after.direct);
    expect(after.served).toEqual(before.served);
  });

  it("answers the same after the store is reopened", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    t.store.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "food" },
      content: "lunch **lunch** soon",
      client: "test",
    });
    const first = both(t.store, new MessageJsonCache(t.store), w.realm, w.bob.id, "lunch");
    const reopened = t.reopen();
    const second = both(reopened, new MessageJsonCache(reopened), w.realm, w.bob.id, "lunch");
    expect(second.served).toEqual(first.served);
    expect(second.served).toEqual(second.direct);
  });
});
