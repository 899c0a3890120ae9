/**
 * The web client's address format: Zulip's `#narrow/...` hashes, both ways, including
 * Zulip's encoding of topic names and the older operator names found in kept links.
 */
import { describe, expect, it } from "vitest";
import {
  decodeHashComponent,
  encodeHashComponent,
  hashOf,
  inAppHash,
  parseHash,
  type HashDirectory,
} from "../../web/src/hash.js";

const channels = new Map([
  [12, "design team"],
  [13, "日本語のチャンネル名"],
]);
const users = new Map([
  [10, "Alice Smith"],
  [11, "Bob"],
  [14, "Carol"],
]);
const dir: HashDirectory = {
  me: 10,
  channelIdByName: (name) => [...channels].find(([, n]) => n === name)?.[0],
  channelName: (id) => channels.get(id) ?? `channel ${id}`,
  userIdByEmail: (email) => ({ "bob@x.dev": 11 })[email],
  userName: (id) => users.get(id) ?? `user ${id}`,
};

describe("Zulip's hash encoding", () => {
  it("writes %, (, ) and . with dots, and reads them back", () => {
    expect(encodeHashComponent("release 1.0 (final) 100%")).toBe("release.201.2E0.20.28final.29.20100.25");
    expect(decodeHashComponent("release.201.2E0.20.28final.29.20100.25")).toBe("release 1.0 (final) 100%");
    expect(encodeHashComponent("a/b#c?d")).toBe("a.2Fb.23c.3Fd");
    expect(decodeHashComponent("bad.zz")).toBeNull();
  });
});

describe("hashOf and parseHash", () => {
  it("name each view as Zulip's web app does, and read every one back", () => {
    const cases = [
      [{ kind: "inbox" }, "#inbox"],
      [{ kind: "all" }, "#feed"],
      [{ kind: "mentions" }, "#narrow/is/mentioned"],
      [{ kind: "starred" }, "#narrow/is/starred"],
      [{ kind: "channel", streamId: 12 }, "#narrow/channel/12-design-team"],
      [{ kind: "topic", streamId: 12, topic: "v1.0 (rc)" }, "#narrow/channel/12-design-team/topic/v1.2E0.20.28rc.29"],
      [{ kind: "dm", userIds: [11] }, "#narrow/dm/11-Bob"],
      [{ kind: "dm", userIds: [11, 14] }, "#narrow/dm/11.2C14-group"],
    ] as const;
    for (const [view, hash] of cases) {
      expect(hashOf(view, dir)).toBe(hash);
      expect(parseHash(hash, dir)).toEqual(view);
    }
  });

  it("keeps only the ID when the encoded name would be much longer than the name", () => {
    expect(hashOf({ kind: "channel", streamId: 13 }, dir)).toBe("#narrow/channel/13");
    expect(parseHash("#narrow/channel/13", dir)).toEqual({ kind: "channel", streamId: 13 });
  });

  it("reads links people kept: old operator names, names instead of IDs, positions within a topic", () => {
    expect(parseHash("#narrow/stream/12-design/subject/lunch", dir)).toEqual({
      kind: "topic",
      streamId: 12,
      topic: "lunch",
    });
    expect(parseHash("#narrow/channel/12-design-team/topic/lunch/near/345", dir)).toEqual({
      kind: "topic",
      streamId: 12,
      topic: "lunch",
    });
    expect(parseHash("#narrow/channel/design.20team", dir)).toEqual({ kind: "channel", streamId: 12 });
    expect(parseHash("#narrow/pm-with/bob.40x.2Edev", dir)).toEqual({ kind: "dm", userIds: [11] });
    // A group DM link lists every participant, the reader too.
    expect(parseHash("#narrow/dm/10,11,14-group", dir)).toEqual({ kind: "dm", userIds: [11, 14] });
    expect(parseHash("#narrow/dm/10-Alice-Smith", dir)).toEqual({ kind: "dm", userIds: [10] });
  });

  it("turns other operator lists into a search, and back into the same address", () => {
    const view = parseHash("#narrow/channel/12-design-team/-sender/11-Bob/search/launch.20plan", dir);
    expect(view).toEqual({
      kind: "search",
      query: 'channel:"design team" -sender:Bob launch plan',
      terms: [
        { operator: "channel", operand: 12 },
        { operator: "sender", operand: 11, negated: true },
        { operator: "search", operand: "launch plan" },
      ],
    });
    if (view === null) throw new Error("unreachable");
    expect(hashOf(view, dir)).toBe("#narrow/channel/12-design-team/-sender/11/search/launch.20plan");
  });

  it("names no view for other addresses", () => {
    for (const hash of ["", "#", "#settings/profile", "#narrow/topic/bad.zz"]) expect(parseHash(hash, dir)).toBeNull();
  });
});

describe("inAppHash", () => {
  const base = "https://chat.example.com/#inbox";
  it("recognises this server's narrow links, absolute, rooted or bare", () => {
    expect(inAppHash("/#narrow/channel/12-design", base)).toBe("#narrow/channel/12-design");
    expect(inAppHash("https://chat.example.com/#narrow/dm/11-Bob", base)).toBe("#narrow/dm/11-Bob");
    expect(inAppHash("#narrow/is/starred", base)).toBe("#narrow/is/starred");
  });
  it("leaves other links alone", () => {
    expect(inAppHash("https://other.example.com/#narrow/channel/1-x", base)).toBeNull();
    expect(inAppHash("/user_uploads/2/ab/file.pdf", base)).toBeNull();
    expect(inAppHash("/help/#narrow/x", base)).toBeNull();
    expect(inAppHash("https://chat.example.com/#section", base)).toBeNull();
  });
});
