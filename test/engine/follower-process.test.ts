/**
 * A follower in this process, its writer `parley serve` in another (real multi-process
 * LMDB): every write the server acknowledged over HTTP is visible to the follower right
 * after catchUp() (read-your-writes across processes), the follower then equals one
 * freshly opened, and the server's lock still refuses an unrelated opener.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DataDirectoryLockedError } from "../../src/engine/index.js";
import { openFollower, openStore } from "../../src/index.js";
import { LOCK_FILE, parseHolder } from "../../src/engine/storage/lock.js";
import { killStartedProcesses, serveProcess, stopProcess } from "../support/serve-process.js";
import { seedRealm } from "../support/temp-store.js";
import { followerView } from "../support/follower-view.js";

const dir = mkdtempSync(join(tmpdir(), "parley-follower-"));
afterAll(() => {
  killStartedProcesses();
  rmSync(dir, { recursive: true, force: true });
});

describe("follower of a writer in another process", () => {
  it("sees each acknowledged write at its next catchUp, and equals a fresh follower", async () => {
    const setup = openStore(dir, { noSync: true });
    const w = seedRealm(setup);
    setup.close();
    const { child, url } = await serveProcess(dir);
    try {
      const call = async (user: typeof w.alice, method: string, path: string, params: Record<string, string>) => {
        const form = new URLSearchParams(params);
        const auth = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}`;
        const r = await fetch(`${url}/api/v1${path}${method === "GET" ? `?${form}` : ""}`, {
          method,
          headers: { Authorization: auth },
          ...(method === "GET" ? {} : { body: form }),
        });
        const body = (await r.json()) as Record<string, unknown>;
        expect(body["result"], JSON.stringify(body)).toBe("success");
        return body;
      };
      // The server's workers learn the token from their parent; here, from the lock record.
      const holder = parseHolder(readFileSync(join(dir, LOCK_FILE), "utf8"))!;
      expect(holder.pid).toBe(child.pid);
      const follower = openFollower(dir, { noSync: true, lockToken: holder.token });
      try {
        expect(() => openStore(dir, { noSync: true })).toThrow(DataDirectoryLockedError);
        expect(() => openFollower(dir, { noSync: true, lockToken: "another server" })).toThrow(
          DataDirectoryLockedError,
        );
        const newest = (userId: number) =>
          follower.getMessages(userId, { narrow: [], anchor: "newest", numBefore: 1, numAfter: 0 }).messages[0];
        for (let i = 0; i < 5; i++) {
          const sent = await call(w.alice, "POST", "/messages", {
            type: "stream",
            to: "general",
            topic: `topic ${i % 2}`,
            content: `message ${i} for @**Bob**`,
          });
          follower.catchUp();
          expect(newest(w.bob.id)?.message.id).toBe(sent["id"]);
          expect(follower.unreadSummary(w.bob.id).mentions).toContain(sent["id"]);
        }
        const last = newest(w.bob.id)!.message.id;
        await call(w.bob, "POST", "/messages/flags", { messages: `[${last}]`, op: "add", flag: "read" });
        follower.catchUp();
        expect(follower.unreadSummary(w.bob.id).mentions).not.toContain(last);
        await call(w.alice, "PATCH", `/messages/${last}`, { topic: "moved", propagate_mode: "change_all" });
        follower.catchUp();
        expect(newest(w.bob.id)?.message.topic).toBe("moved");
        await call(w.bob, "POST", "/users/me/subscriptions", { subscriptions: '[{"name":"brand new"}]' });
        await call(w.bob, "PATCH", "/settings", { full_name: "Robert" });
        follower.catchUp();
        expect(follower.subscriptionLists(w.bob.id, false).subscribed.map((s) => s.channel.name)).toContain(
          "brand new",
        );
        expect(follower.getUser(w.bob.id).fullName).toBe("Robert");
        const fresh = openFollower(dir, { noSync: true, lockToken: holder.token });
        try {
          const viewers = [w.owner.id, w.alice.id, w.bob.id, w.guest.id];
          expect(followerView(follower, viewers)).toEqual(followerView(fresh, viewers));
        } finally {
          fresh.close();
        }
      } finally {
        follower.close();
      }
    } finally {
      await stopProcess(child, "SIGTERM");
    }
  }, 30_000);
});
