import { describe, expect, it } from "vitest";
import { tempStore, seedRealm } from "../support/temp-store.js";
import { internals } from "../../src/engine/internal.js";

describe("engine smoke", () => {
  it("sends, fetches, flags, unread, verify", () => {
    const t = tempStore();
    try {
      const { owner, alice, bob, general, secret } = seedRealm(t.store);
      const s = t.store;
      const m1 = s.sendMessage({
        senderId: alice.id,
        to: { type: "channel", channel: general.id, topic: "lunch" },
        content: "Hello @**Bob** want lunch?",
      });
      const m2 = s.sendMessage({
        senderId: alice.id,
        to: { type: "channel", channel: "secret", topic: "plans" },
        content: "secret plans",
      });
      const m3 = s.sendMessage({
        senderId: bob.id,
        to: { type: "direct", users: [alice.id] },
        content: "hi alice",
        client: "website",
      });
      const r = s.getMessages(bob.id, { anchor: "newest", numBefore: 10, numAfter: 0 });
      expect(r.messages.map((v) => v.message.id)).toEqual([m1.id, m3.id]);
      expect(r.messages[0]!.flags).toEqual(["mentioned"]);
      expect(r.foundNewest).toBe(true);
      const u = s.unreadSummary(bob.id);
      expect(u.count).toBe(1);
      expect(u.mentions).toEqual([m1.id]);
      const fr = s.updateFlags(bob.id, [m1.id], "read", "add");
      expect(fr.updatedCount).toBe(1);
      expect(s.unreadSummary(bob.id).count).toBe(0);
      const search = s.getMessages(owner.id, {
        anchor: "newest",
        numBefore: 10,
        numAfter: 0,
        narrow: [{ operator: "search", operand: "plans" }],
      });
      expect(search.messages.map((v) => v.message.id)).toEqual([m2.id]);
      expect(search.messages[0]!.matchContent).toContain('<span class="highlight">plans</span>');
      // bob cannot see the private channel: naming it fails like naming one that does not exist.
      expect(() =>
        s.getMessages(bob.id, {
          anchor: "newest",
          numBefore: 10,
          numAfter: 0,
          narrow: [{ operator: "channel", operand: secret.id }],
        }),
      ).toThrow(`unknown channel ${secret.id}`);
      expect(
        s.getMessages(bob.id, {
          anchor: "newest",
          numBefore: 10,
          numAfter: 0,
          narrow: [{ operator: "search", operand: "plans" }],
        }).messages,
      ).toEqual([]);
      const report = s.verify();
      expect(report.differences).toEqual([]);
      expect(report.problems).toEqual([]);
      const reopened = t.reopen();
      expect(
        reopened
          .getMessages(bob.id, { anchor: "newest", numBefore: 10, numAfter: 0 })
          .messages.map((v) => v.message.id),
      ).toEqual([m1.id, m3.id]);
      expect(reopened.verify().differences).toEqual([]);
    } finally {
      t.cleanup();
    }
  });

  it("verify reports a message_meta row that disagrees with its record", () => {
    const t = tempStore();
    try {
      const { alice, general } = seedRealm(t.store);
      const { id } = t.store.sendMessage({
        senderId: alice.id,
        to: { type: "channel", channel: general.id, topic: "meta" },
        content: "x",
      });
      expect(internals(t.store).tables.messageMeta.get(id)).toEqual([general.id, "meta", expect.any(Number)]);
      expect(t.store.verify().problems).toEqual([]);
      internals(t.store).tables.messageMeta.putSync(id, [general.id, "other"]);
      expect(t.store.verify().problems).toEqual([`message ${id} meta [${general.id},"other"] differs from its record`]);
    } finally {
      t.cleanup();
    }
  });
});

describe("data directories", () => {
  it("opens a directory whose name contains a dot", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { openStore } = await import("../../src/index.js");
    const dir = join(mkdtempSync(join(tmpdir(), "parley-dot-")), "data.v1");
    try {
      const store = openStore(dir, { noSync: true });
      store.createRealm({ subdomain: "", name: "Dotted", owner: { email: "o@dot.dev", fullName: "Owner" } });
      store.close();
      const reopened = openStore(dir, { noSync: true });
      expect(reopened.findRealmBySubdomain("")?.name).toBe("Dotted");
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
