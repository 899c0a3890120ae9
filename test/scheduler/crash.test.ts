/**
 * The crash test: a few hundred messages scheduled over a few seconds, the server
 * SIGKILLed repeatedly while they come due and restarted; in the end every one was
 * delivered exactly once (its content appears once, none missing), each delivered
 * record points at its message, and `parley verify` is clean.
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Message } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";
import { CLI, killStartedProcesses, serveProcess, sleep, stopProcess } from "../support/serve-process.js";

const dir = mkdtempSync(join(tmpdir(), "parley-sched-crash-"));
afterAll(() => {
  killStartedProcesses();
  rmSync(dir, { recursive: true, force: true });
});

const serve = () => serveProcess(dir);
const killed = (child: ChildProcess) => stopProcess(child);

/** How many of the user's scheduled messages are still pending (GET /scheduled_messages). */
async function pending(url: string, user: { email: string; apiKey: string }): Promise<number> {
  const r = await fetch(`${url}/api/v1/scheduled_messages`, {
    headers: { Authorization: `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}` },
  });
  const body = (await r.json()) as { scheduled_messages?: { failed: boolean }[] };
  return (body.scheduled_messages ?? []).filter((m) => !m.failed).length;
}

describe("scheduled delivery across kill -9", () => {
  it("delivers every message exactly once", async () => {
    const N = 300;
    const store = openStore(dir);
    const { realm, owner } = store.createRealm({
      subdomain: "",
      name: "R",
      owner: { email: "o@r.dev", fullName: "Owner" },
    });
    const bob = store.createUser({ realmId: realm.id, email: "bob@r.dev", fullName: "Bob" });
    store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [owner.id, bob.id] });
    const general = store.getChannels(owner.id, {}).find((c) => c.name === "general")!;
    // Due over the ~4 seconds after the first start, in random order.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // Each time is taken from the clock when it is scheduled (a slow machine may take
    // seconds over the 300), so every one is in the future.
    let start = 0;
    for (let i = 0; i < N; i++) {
      const at = Math.floor(Date.now() / 1000) + 2 + Math.floor(random() * 5);
      start = Math.max(start, at - 4);
      const to =
        i % 3 === 0
          ? ({ type: "direct", userIds: [bob.id] } as const)
          : ({ type: "channel", channelId: general.id, topic: `t${i % 7}` } as const);
      store.scheduleMessage(i % 2 === 0 ? owner.id : bob.id, {
        to,
        content: `scheduled #${i}`,
        deliverAt: at,
        client: "API",
      });
    }
    store.close();

    // Kill the server every few hundred milliseconds while the messages come due, at
    // least five times however slow the machine's starts are (a loaded machine used to
    // fit only two or three starts in the window, and the test failed on its clock).
    const deadline = (start + 6) * 1000;
    let kills = 0;
    while (Date.now() < deadline || kills < 5) {
      const { child } = await serve();
      await sleep(150 + Math.floor(random() * 350));
      await killed(child);
      kills++;
    }
    // One last start delivers whatever came due during the last kill; wait (however
    // slow the machine) until nothing is pending, then kill it too.
    const last = await serve();
    for (let i = 0; i < 120 && (await pending(last.url, owner)) + (await pending(last.url, bob)) > 0; i++)
      await sleep(250);
    await killed(last.child);

    const check = openStore(dir);
    try {
      const state = internals(check);
      const seen = new Map<string, number>();
      for (const { value } of state.tables.messages.getRange({ start: 1 })) {
        const m = value as Message;
        if (m.content.startsWith("scheduled #")) seen.set(m.content, (seen.get(m.content) ?? 0) + 1);
      }
      const duplicates = [...seen].filter(([, n]) => n > 1);
      const missing = Array.from({ length: N }, (_, i) => `scheduled #${i}`).filter((c) => !seen.has(c));
      expect({ duplicates, missing }).toEqual({ duplicates: [], missing: [] });
      const records = [...state.scheduledMessages.values()];
      expect(records.length).toBe(N);
      expect(records.every((r) => r.delivered && !r.failed && r.deliveredMessageId !== null)).toBe(true);
      expect(check.nextScheduledDelivery()).toBeNull();
    } finally {
      check.close();
    }
    const verify = spawnSync(process.execPath, [CLI, "verify", "--data", dir], { encoding: "utf8" });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
  }, 120_000);
});
