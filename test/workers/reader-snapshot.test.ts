/**
 * A reader worker's request that spans turns of the event loop reads one state per
 * turn (engine/follower "Snapshots"): lmdb-js renews the read snapshot between turns
 * while a follower's memory moves only at catchUp, so a reader that read on after an
 * await without catching up would mix its memory with newer records. The writer is
 * `parley serve` in another process; the reader is built here as serve-workers builds
 * it (a follower behind createServer with the reader's hooks), its shared-limits round
 * trip standing in for the real one: while a GET waits on it, the writer creates a
 * channel and moves a message there. The GET must then answer that message as the
 * writer would (in the new channel, with its name), never with a channel its memory
 * does not know. Store.nextTurn, through which reads that yield go, is held to the same.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/engine/index.js";
import { LOCK_FILE, parseHolder } from "../../src/engine/storage/lock.js";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import type { SharedAdmission } from "../../src/http/shared-limits.js";
import { openFollower, openStore } from "../../src/index.js";
import { killStartedProcesses, serveProcess, stopProcess } from "../support/serve-process.js";
import { seedRealm } from "../support/temp-store.js";

const dir = mkdtempSync(join(tmpdir(), "parley-reader-snapshot-"));
let follower: Store | null = null;
let reader: ParleyServer | null = null;
afterAll(() => {
  reader?.close();
  follower?.close();
  killStartedProcesses();
  rmSync(dir, { recursive: true, force: true });
});

interface Sent {
  readonly id: number;
}

describe("a reader's request spanning turns", () => {
  it("reads the state it caught up to after an await, never memory mixed with newer records", async () => {
    const setup = openStore(dir, { noSync: true });
    const { owner } = seedRealm(setup);
    setup.close();
    const writer = await serveProcess(dir);
    const auth = `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}`;
    const call = async (base: string, method: string, path: string, params: Record<string, string> = {}) => {
      const form = new URLSearchParams(params);
      const response = await fetch(`${base}/api/v1${path}${method === "GET" ? `?${form}` : ""}`, {
        method,
        headers: { Authorization: auth },
        ...(method === "GET" ? {} : { body: form }),
      });
      const body = (await response.json()) as Record<string, unknown>;
      expect(body["result"], JSON.stringify(body)).toBe("success");
      return body;
    };

    const holder = parseHolder(readFileSync(join(dir, LOCK_FILE), "utf8"))!;
    const store = openFollower(dir, { noSync: true, lockToken: holder.token });
    follower = store;
    // While armed, the next request's round trip to "the writer" waits for this write to be acknowledged.
    let duringRoundTrip: (() => Promise<void>) | null = null;
    const admitted: SharedAdmission = { refusal: null, rate: null, release: () => undefined };
    reader = createServer(store, {
      rateLimit: false,
      worker: {
        name: "reader-1",
        reader: true,
        beforeLocal: () => void store.catchUp(),
        limits: {
          admit: async () => {
            const write = duringRoundTrip;
            duringRoundTrip = null;
            await write?.();
            return admitted;
          },
        },
      },
    });
    const base = `http://127.0.0.1:${await reader.listen(0)}`;

    const sent = (await call(writer.url, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "to be moved",
    })) as unknown as Sent;
    // The reader catches up (without rendering that message, so nothing of it is cached).
    await call(base, "GET", "/users/me");

    let freshId = 0;
    duringRoundTrip = async () => {
      await call(writer.url, "POST", "/users/me/subscriptions", { subscriptions: '[{"name":"fresh"}]' });
      const channel = await call(writer.url, "GET", "/get_stream_id", { stream: "fresh" });
      freshId = channel["stream_id"] as number;
      await call(writer.url, "PATCH", `/messages/${sent.id}`, {
        stream_id: String(freshId),
        propagate_mode: "change_one",
      });
    };
    const read = await call(base, "GET", "/messages", { anchor: "newest", num_before: "5", num_after: "0" });
    expect(duringRoundTrip).toBeNull();
    const messages = read["messages"] as { id: number; stream_id: number; display_recipient: string }[];
    const moved = messages.find((m) => m.id === sent.id);
    expect(moved).toMatchObject({ stream_id: freshId, display_recipient: "fresh" });

    // A read that yields resumes caught up: what the writer committed meanwhile is in memory at once.
    await call(writer.url, "POST", "/users/me/subscriptions", { subscriptions: '[{"name":"later"}]' });
    expect(() => store.channelIdByName(owner.id, "later")).toThrow();
    await store.nextTurn();
    expect(store.channelIdByName(owner.id, "later")).toBeGreaterThan(0);

    await stopProcess(writer.child, "SIGTERM");
  });
});
