/**
 * Presence across kill -9 of `parley serve`: pings change memory, the flusher writes
 * them every PRESENCE_FLUSH_INTERVAL_MS. After a crash, presence recorded more than an
 * interval before it is on disk; what came after may be lost (only those timestamps:
 * a message sent in the same window is intact); sequence numbers resume above every
 * number a client saw, so a client polling with its last_update_id still sees the
 * next change. Also: the flusher's timer itself, on a manual clock.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PRESENCE_FLUSH_INTERVAL_MS } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";
import { ManualClock } from "../../src/realtime/index.js";
import { PresenceFlusher } from "../../src/scheduler/presence-flusher.js";
import { seedRealm, tempStore } from "../support/temp-store.js";
import { killStartedProcesses, serveProcess, sleep, stopProcess } from "../support/serve-process.js";

const dir = mkdtempSync(join(tmpdir(), "parley-presence-crash-"));
afterAll(() => {
  killStartedProcesses();
  rmSync(dir, { recursive: true, force: true });
});

const serve = () => serveProcess(dir);
const killed = (child: ChildProcess) => stopProcess(child);

describe("presence across kill -9", () => {
  it("keeps what was flushed, loses at most the last interval's timestamps, never reuses sequence numbers", async () => {
    const setup = openStore(dir, { noSync: true });
    const { realm, owner } = setup.createRealm({
      subdomain: "",
      name: "R",
      owner: { email: "o@r.dev", fullName: "Owner" },
    });
    const bob = setup.createUser({ realmId: realm.id, email: "bob@r.dev", fullName: "Bob" });
    setup.subscribe(owner.id, { channels: [{ name: "general" }] });
    setup.close();
    const call = async (
      url: string,
      who: { email: string; apiKey: string },
      path: string,
      params: Record<string, string>,
    ) => {
      const auth = `Basic ${Buffer.from(`${who.email}:${who.apiKey}`).toString("base64")}`;
      const r = await fetch(`${url}/api/v1${path}`, {
        method: "POST",
        headers: { Authorization: auth },
        body: new URLSearchParams(params),
      });
      return (await r.json()) as Record<string, unknown>;
    };

    let { child, url } = await serve();
    const first = await call(url, owner, "/users/me/presence", { status: "active", last_update_id: "-1" });
    const seen = first["presence_last_update_id"] as number;
    expect(seen).toBeGreaterThan(0);
    // Well past one flush interval: the owner's presence must be on disk.
    await sleep(PRESENCE_FLUSH_INTERVAL_MS * 3);
    // Inside the last window: bob's ping may be lost; the message must not be.
    await call(url, bob, "/users/me/presence", { status: "active", ping_only: "true" });
    const sent = await call(url, owner, "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "just before the crash",
    });
    expect(sent["result"]).toBe("success");
    await killed(child);

    const after = openStore(dir, { noSync: true });
    const state = internals(after);
    expect(state.presence.get(owner.id)).toMatchObject({ userId: owner.id, lastUpdateId: seen });
    expect(after.findMessageRecord(sent["id"] as number)?.content).toBe("just before the crash");
    // Bob's row is either the full ping or absent: never a half-written record.
    const bobRow = state.presence.get(bob.id);
    if (bobRow) expect(bobRow.lastActive).toBe(bobRow.lastConnected);
    const resumeAbove = state.presenceSeq;
    expect(resumeAbove).toBeGreaterThanOrEqual(seen);
    after.close();

    ({ child, url } = await serve());
    // Bob's next change gets a number above anything handed out before the crash.
    const again = await call(url, bob, "/users/me/presence", { status: "active", last_update_id: String(seen) });
    expect(again["presence_last_update_id"] as number).toBeGreaterThan(resumeAbove);
    expect(Object.keys(again["presences"] as object)).toContain(String(bob.id));
    await killed(child);
  }, 30_000);
});

describe("PresenceFlusher", () => {
  it("flushes on every interval of its clock, and stops", () => {
    const t = tempStore();
    try {
      const { alice } = seedRealm(t.store);
      const clock = new ManualClock();
      const flusher = new PresenceFlusher(t.store, { clock, intervalMs: 1000 });
      flusher.start();
      t.store.updatePresence(alice.id, "active");
      expect(internals(t.store).presenceDirty.size).toBe(1);
      clock.advance(999);
      expect(internals(t.store).presenceDirty.size).toBe(1);
      clock.advance(1);
      expect(internals(t.store).presenceDirty.size).toBe(0);
      expect(internals(t.store).tables.presence.get(alice.id)).toMatchObject({ userId: alice.id });
      flusher.stop();
    } finally {
      t.cleanup();
    }
  });
});
