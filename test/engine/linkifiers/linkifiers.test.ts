/**
 * Linkifiers in the engine: Zulip's checks with its messages and `errors` by field,
 * administrators only, Zulip's order (new ones last, reorder, ties by ID), the
 * complete list to every user of the realm, topic_links with Zulip's precedence, the
 * rendering of new messages (old ones keep their HTML), and survival across a reopen.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BadRequestError, EngineError, type EventBatch } from "../../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t?.cleanup());

const TRAC = { pattern: "#(?P<id>[0-9]{2,8})", urlTemplate: "https://trac.example.com/ticket/{id}" };

function refusal(run: () => unknown): { msg: string; code: string; data: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof EngineError) return { msg: error.message, code: error.code, data: error.data };
    throw error;
  }
  throw new Error("not refused");
}

describe("linkifier checks", () => {
  it("refuses with Zulip's first message and every message by field, and stores nothing", () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    const add = (pattern: string, urlTemplate: string) =>
      refusal(() => t.store.addLinkifier(owner.id, { pattern, urlTemplate }));
    expect(add("", "https://realm.com/my_realm_filter/{id}")).toEqual({
      msg: "This field cannot be blank.",
      code: "BAD_REQUEST",
      data: {
        errors: {
          pattern: ["This field cannot be blank."],
          __all__: ["Group 'id' in URL template is not present in linkifier pattern."],
        },
      },
    });
    expect(add("(foo", "https://x.example/").msg).toBe("Bad regular expression: missing ): (foo");
    expect(add("ZUL-(?P<id>\\d????)", "https://x.example/{id}").msg).toBe(
      "Bad regular expression: bad repetition operator: ????",
    );
    expect(add("(?P<id>\\d+)(?=x)", "https://x.example/{id}").msg).toBe(
      "Bad regular expression: invalid perl operator: (?=",
    );
    expect(add("(?P<id>\\d+)(?<!x)", "https://x.example/{id}").msg).toBe(
      "Bad regular expression: invalid perl operator: (?<!",
    );
    expect(add("(?P<id>\\d+)-\\1", "https://x.example/{id}").msg).toBe(
      "Bad regular expression: invalid escape sequence: \\1",
    );
    expect(add("ZUL-(?P<id>\\d+)", "$fgfg").msg).toBe(
      "Group 'id' in linkifier pattern is not present in URL template.",
    );
    expect(add("ZUL-(?P<id>\\d+)", "https://realm.com/my_realm_filter/{hello}").msg).toBe(
      "Group 'hello' in URL template is not present in linkifier pattern.",
    );
    expect(add("ZUL-(?P<id>\\d+)-(?P<hello>\\d+)", "https://realm.com/{hello}").msg).toBe(
      "Group 'id' in linkifier pattern is not present in URL template.",
    );
    expect(add("#(?P<id>[123])", "{id")).toEqual({
      msg: "Invalid URL template.",
      code: "BAD_REQUEST",
      data: { errors: { url_template: ["Invalid URL template."] } },
    });
    expect(add("(?P<id>a{1000}){1000}", "https://x.example/{id}").msg).toBe(
      "Bad regular expression: invalid repetition size: {1000}",
    );
    expect(add("(?P<id>[a-z]{1000}[0-9]{1000}[A-Z]{1000}[a-f]{1000}[0-7]{1000})", "https://x.example/{id}").msg).toBe(
      "Bad regular expression: pattern too large - compile failed",
    );
    expect(t.store.linkifiers(owner.id)).toEqual([]);
  });

  it("accepts Zulip's examples, strips both fields, and refuses a pattern the realm has", () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    const ok = (pattern: string, urlTemplate: string) => t.store.addLinkifier(owner.id, { pattern, urlTemplate });
    ok("  _code=(?P<id>[0-9a-zA-Z]+)  ", " https://example.com/product/{id}/details\n");
    ok("PR (?P<id>[0-9]+)", "https://example.com/~user/web#view_type=type&model=model&action=12345&id={id}");
    ok("ZUL-URL-(?P<id>\\d+)", "https://example.com/%ba/{id}");
    ok("(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)", "https://github.com/{org}/{repo}/issue/{id}");
    ok(
      "FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})",
      "https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}",
    );
    ok("3#123", "https://example.com");
    expect(t.store.linkifiers(owner.id)[0]).toMatchObject({
      pattern: "_code=(?P<id>[0-9a-zA-Z]+)",
      urlTemplate: "https://example.com/product/{id}/details",
    });
    expect(refusal(() => ok("PR (?P<id>[0-9]+)", "https://other.example/{id}")).msg).toBe(
      "Realm filter with this Realm and Pattern already exists.",
    );
  });
});

describe("linkifier actions", () => {
  it("administrators only; another realm's linkifier is not found, like a missing one", () => {
    t = tempStore();
    const { owner, alice, guest } = seedRealm(t.store);
    const other = t.store.createRealm({
      subdomain: "z",
      name: "Z",
      owner: { email: "z@z.test", fullName: "Zed" },
    }).owner;
    const theirs = t.store.addLinkifier(other.id, TRAC);
    const admin = t.store.createUser({ realmId: owner.realmId, email: "adm@test.dev", fullName: "Adm", role: 200 });
    const mod = t.store.createUser({ realmId: owner.realmId, email: "mod@test.dev", fullName: "Mod", role: 300 });
    const mine = t.store.addLinkifier(admin.id, TRAC);
    for (const who of [mod, alice, guest]) {
      expect(refusal(() => t.store.addLinkifier(who.id, { ...TRAC, pattern: "x(?P<id>1)" }))).toMatchObject({
        code: "UNAUTHORIZED_PRINCIPAL",
        msg: "Must be an organization administrator",
      });
      expect(() => t.store.removeLinkifier(who.id, mine.id)).toThrow("Must be an organization administrator");
      expect(() => t.store.updateLinkifier(who.id, mine.id, TRAC)).toThrow("Must be an organization administrator");
      expect(() => t.store.reorderLinkifiers(who.id, [mine.id])).toThrow("Must be an organization administrator");
      expect(t.store.linkifiers(who.id)).toEqual([mine]);
    }
    expect(() => t.store.removeLinkifier(owner.id, theirs.id)).toThrow(new BadRequestError("Linkifier not found."));
    expect(() => t.store.updateLinkifier(owner.id, theirs.id, TRAC)).toThrow("Linkifier not found.");
    expect(() => t.store.updateLinkifier(owner.id, 999_999, TRAC)).toThrow("Linkifier not found.");
    expect(t.store.linkifiers(other.id)).toEqual([theirs]);
  });

  it("orders new ones last, reorders, keeps the order on update and delete, and tells the realm the whole list", () => {
    t = tempStore();
    const { owner, alice, guest } = seedRealm(t.store);
    const batches: EventBatch[] = [];
    t.store.onEvents((batch) => batches.push(batch));
    const add = (n: number) =>
      t.store.addLinkifier(owner.id, { pattern: `${n}#(?P<id>[123])`, urlTemplate: `https://f.example/${n}/{id}` });
    const [a, b, c] = [add(1), add(2), add(3)];
    const ids = () => t.store.linkifiers(alice.id).map((l) => l.id);
    expect(ids()).toEqual([a.id, b.id, c.id]);
    const last = batches.at(-1)!.deliveries[0]!;
    expect(last.event).toMatchObject({ type: "realm_linkifiers", linkifiers: [a, b, c] });
    expect(last.audience.has(alice.id) && last.audience.has(guest.id) && last.audience.has(owner.id)).toBe(true);

    expect(() => t.store.reorderLinkifiers(owner.id, [c.id, c.id, a.id])).toThrow(
      "The ordered list must not contain duplicated linkifiers",
    );
    expect(() => t.store.reorderLinkifiers(owner.id, [c.id, a.id])).toThrow(
      "The ordered list must enumerate all existing linkifiers exactly once",
    );
    expect(() => t.store.reorderLinkifiers(owner.id, [c.id, a.id, b.id, 999])).toThrow(
      "The ordered list must enumerate all existing linkifiers exactly once",
    );
    t.store.reorderLinkifiers(owner.id, [c.id, b.id, a.id]);
    expect(ids()).toEqual([c.id, b.id, a.id]);
    expect(batches.at(-1)!.deliveries[0]!.event).toMatchObject({
      type: "realm_linkifiers",
      linkifiers: [{ id: c.id }, { id: b.id }, { id: a.id }],
    });
    const d = add(4);
    expect(ids()).toEqual([c.id, b.id, a.id, d.id]);
    t.store.updateLinkifier(owner.id, b.id, { pattern: "B#(?P<id>[0-9]+)", urlTemplate: "https://b.example/{id}" });
    expect(t.store.linkifiers(owner.id)[1]).toMatchObject({ id: b.id, pattern: "B#(?P<id>[0-9]+)" });
    t.store.removeLinkifier(owner.id, a.id);
    expect(ids()).toEqual([c.id, b.id, d.id]);
    expect(batches.at(-1)!.deliveries[0]!.event).toMatchObject({
      linkifiers: [{ id: c.id }, { id: b.id }, { id: d.id }],
    });

    const reopened = t.reopen();
    expect(reopened.linkifiers(alice.id).map((l) => l.id)).toEqual([c.id, b.id, d.id]);
    expect(reopened.linkifiers(alice.id)[1]?.urlTemplate).toBe("https://b.example/{id}");
  });

  it("reordering a realm without linkifiers accepts [] and says nothing", () => {
    t = tempStore();
    const { owner } = seedRealm(t.store);
    const batches: EventBatch[] = [];
    t.store.onEvents((batch) => batches.push(batch));
    t.store.reorderLinkifiers(owner.id, []);
    expect(batches).toEqual([]);
    expect(() => t.store.reorderLinkifiers(owner.id, [1])).toThrow("exactly once");
  });
});

describe("topic links and rendering", () => {
  it("links topics as Zulip's topic_links: earlier linkifiers first, overlaps dropped, in order of position", () => {
    t = tempStore();
    const { owner, realm } = seedRealm(t.store);
    t.store.addLinkifier(owner.id, TRAC);
    expect(t.store.topicLinks(realm.id, "#444 #555 #666")).toEqual([
      { url: "https://trac.example.com/ticket/444", text: "#444" },
      { url: "https://trac.example.com/ticket/555", text: "#555" },
      { url: "https://trac.example.com/ticket/666", text: "#666" },
    ]);
    expect(t.store.topicLinks(realm.id, "issue#124 or #1124z")).toEqual([]);
    const long = t.store.addLinkifier(owner.id, {
      pattern: "#(?P<id>[0-9]+)-(?P<sub>[0-9]+)",
      urlTemplate: "https://sub.example/{id}/{sub}",
    });
    // TRAC is first: it takes "#12" (a "-" may follow a match), and the longer match overlaps it.
    expect(t.store.topicLinks(realm.id, "see #12-34 and #56")).toEqual([
      { url: "https://trac.example.com/ticket/12", text: "#12" },
      { url: "https://trac.example.com/ticket/56", text: "#56" },
    ]);
    const trac = t.store.linkifiers(owner.id)[0]!;
    t.store.reorderLinkifiers(owner.id, [long.id, trac.id]);
    expect(t.store.topicLinks(realm.id, "see #12-34 and #56")).toEqual([
      { url: "https://sub.example/12/34", text: "#12-34" },
      { url: "https://trac.example.com/ticket/56", text: "#56" },
    ]);
    expect(t.store.topicLinks(realm.id, "")).toEqual([]);
  });

  it("renders new messages with the realm's linkifiers; messages already sent keep their HTML", () => {
    t = tempStore();
    const { owner, alice } = seedRealm(t.store);
    const send = (content: string) =>
      t.store.sendMessage({ senderId: alice.id, to: { type: "channel", channel: "general", topic: "t" }, content });
    const before = send("fix #224 today");
    expect(t.store.getMessage(alice.id, before.id).message.renderedContent).toBe("<p>fix #224 today</p>");
    t.store.addLinkifier(owner.id, TRAC);
    const after = send("fix #224 today");
    expect(t.store.getMessage(alice.id, after.id).message.renderedContent).toBe(
      '<p>fix <a href="https://trac.example.com/ticket/224">#224</a> today</p>',
    );
    expect(t.store.getMessage(alice.id, before.id).message.renderedContent).toBe("<p>fix #224 today</p>");
  });
});
