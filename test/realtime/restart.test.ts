/**
 * Event queues across a graceful restart of `parley serve`: SIGTERM saves them with
 * their pending events, the next start restores them and adds a restart event. After
 * kill -9 nothing is saved and the old queue is BAD_EVENT_QUEUE_ID.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { killStartedProcesses, serveProcess, stopProcess } from "../support/serve-process.js";

const dir = mkdtempSync(join(tmpdir(), "parley-restart-"));
afterAll(() => {
  killStartedProcesses();
  rmSync(dir, { recursive: true, force: true });
});

const serve = () => serveProcess(dir);

describe("parley serve and event queues", () => {
  it("restores queues after SIGTERM, not after kill -9", async () => {
    const store = openStore(dir, { noSync: true });
    const { owner } = store.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
    store.subscribe(owner.id, { channels: [{ name: "general" }] });
    store.close();
    const auth = `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}`;
    const call = async (url: string, method: string, path: string, params: Record<string, string>) => {
      const form = new URLSearchParams(params);
      const r = await fetch(`${url}/api/v1${path}${method === "GET" ? `?${form}` : ""}`, {
        method,
        headers: { Authorization: auth },
        ...(method === "GET" ? {} : { body: form }),
      });
      return (await r.json()) as Record<string, unknown>;
    };

    let { child, url } = await serve();
    const queueId = (await call(url, "POST", "/register", { event_types: '["message"]' }))["queue_id"] as string;
    await call(url, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "before the restart" });
    await stopProcess(child, "SIGTERM");

    ({ child, url } = await serve());
    const polled = await call(url, "GET", "/events", { queue_id: queueId, last_event_id: "-1", dont_block: "true" });
    const events = polled["events"] as { type: string; message?: { content: string } }[];
    expect(events.map((e) => e.type)).toEqual(["message", "restart"]);
    expect(events[0]!.message!.content).toBe("before the restart");

    await stopProcess(child, "SIGKILL");
    ({ child, url } = await serve());
    const gone = await call(url, "GET", "/events", { queue_id: queueId, dont_block: "true" });
    expect(gone["code"]).toBe("BAD_EVENT_QUEUE_ID");
    await stopProcess(child, "SIGTERM");
  });
});
