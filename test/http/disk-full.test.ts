/**
 * A real storage failure at commit (issue #7, item 2): the data directory runs out of
 * room while the server is taking messages. Expected: the send that does not fit is
 * answered 500 "Internal server error" (no internals leak; Zulip also answers 500 on
 * an internal failure) and changes nothing in memory; reads keep working; once there
 * is room again, later writes are indexed (the failed message's ID is reused cleanly,
 * its words are never found) and verify is clean, before and after a reopen.
 *
 * The disk: a tiny tmpfs mounted for the test (we are root in CI). Where mounting is
 * not permitted, the process's file-size limit (RLIMIT_FSIZE, lowered and restored
 * with prlimit, no privilege needed) makes the commit's writes fail with EFBIG
 * instead. lmdb-js offers no map that cannot grow (its LMDB grows the map on demand
 * whatever mapSize says), so MDB_MAP_FULL is not reachable. If neither works the test
 * fails: it never passes without a real failed commit.
 *
 * Uploads on a full disk (issue #26, item 9): a multipart upload and a tus PATCH that
 * run out of room mid-body are answered (500 "Internal server error", as Zulip and
 * tusd answer a storage failure; the log names the errno) instead of hanging, and
 * leave no temporary file; once there is room again uploads work.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { constants as osConstants, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type Store, type User } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import { basicAuth, encodeParams } from "../support/http.js";
import { fingerprint } from "../support/snapshot.js";
import { seedRealm } from "../support/temp-store.js";

interface Disk {
  readonly kind: "tmpfs" | "rlimit";
  /**
   * What a write that does not fit fails with: the errno, or EIO when LMDB's write
   * was short (it reports a partial write as EIO, "short write, filesystem full?").
   */
  readonly errorCodes: readonly string[];
  readonly dir: string;
  /** Leaves only a little room for the store's files. */
  fill(): void;
  /** Makes room again. */
  free(): void;
  cleanup(): void;
}

const SLACK = 96 * 1024;

function tmpfsDisk(): Disk | null {
  const mountPoint = mkdtempSync(join(tmpdir(), "parley-tmpfs-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint], { stdio: "pipe" });
  } catch {
    rmSync(mountPoint, { recursive: true, force: true });
    return null;
  }
  const dir = join(mountPoint, "data");
  mkdirSync(dir);
  const filler = join(mountPoint, "filler");
  return {
    kind: "tmpfs",
    errorCodes: ["ENOSPC", "EIO"],
    dir,
    fill() {
      const fs = statfsSync(mountPoint);
      writeFileSync(filler, Buffer.alloc(Math.max(0, fs.bavail * fs.bsize - SLACK)));
    },
    free() {
      rmSync(filler);
    },
    cleanup() {
      execFileSync("umount", [mountPoint], { stdio: "pipe" });
      rmSync(mountPoint, { recursive: true, force: true });
    },
  };
}

function rlimitDisk(): Disk {
  const dir = mkdtempSync(join(tmpdir(), "parley-fsize-"));
  const limits = () =>
    execFileSync("prlimit", ["--pid", String(process.pid), "--fsize", "--raw", "--noheadings", "--output=SOFT,HARD"], {
      encoding: "utf8",
    })
      .trim()
      .split(/\s+/);
  const [soft, hard] = limits();
  const set = (value: string) => execFileSync("prlimit", ["--pid", String(process.pid), `--fsize=${value}:${hard}`]);
  return {
    kind: "rlimit",
    errorCodes: ["EFBIG", "EIO"],
    dir,
    fill() {
      set(String(statSync(join(dir, "data.mdb")).size + SLACK));
    },
    free() {
      set(soft!);
    },
    cleanup() {
      set(soft!);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let disk: Disk | undefined;
let store: Store | undefined;
let server: ParleyServer | undefined;
afterEach(() => {
  server?.close();
  store?.close();
  disk?.cleanup();
  server = store = disk = undefined;
});

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, n]) => [n, name]));

/** The errno name of an error (lmdb-js gives the number as `code`). */
function errnoOf(error: unknown): string {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code === "number") return ERRNO_NAMES.get(code) ?? String(code);
  return typeof code === "string" ? code : String(error);
}

it("a send that does not fit on disk is a 500 that changes nothing; reads go on; after room is made, writes are indexed and verify is clean", async () => {
  disk = tmpfsDisk() ?? rlimitDisk();
  store = openStore(disk.dir, { noSync: true });
  const s = store;
  const w = seedRealm(s);
  const logged: unknown[] = [];
  server = createServer(s, { rateLimit: false, logError: (_message, error) => logged.push(error) });
  const base = `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}/api/v1`;
  const call = async (user: User, method: string, path: string, params: Record<string, unknown> = {}) => {
    const form = encodeParams(params);
    const isQuery = method === "GET";
    const response = await fetch(`${base}${path}${isQuery ? `?${form}` : ""}`, {
      method,
      headers: { Authorization: basicAuth(user) },
      body: isQuery ? undefined : form,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const post = (content: string) =>
    call(w.alice, "POST", "/messages", { type: "stream", to: "general", topic: "filling", content });
  const ids = async (narrow: unknown[]) => {
    const r = await call(w.bob, "GET", "/messages", { anchor: "newest", num_before: 5000, num_after: 0, narrow });
    expect(r.status).toBe(200);
    return (r.body["messages"] as { id: number }[]).map((m) => m.id);
  };
  const search = (word: string) => ids([{ operator: "search", operand: word }]);
  // Distinct words per message grow the term index too, not only the records.
  const body = (i: number) => `fill${i}word ${Array.from({ length: 60 }, (_, j) => `w${i}x${j}`).join(" ")}`;

  const acknowledged: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await post(body(i));
    expect(r.status).toBe(200);
    acknowledged.push(r.body["id"] as number);
  }

  disk.fill();
  let failed: { status: number; body: Record<string, unknown> } | null = null;
  let failedWord = "";
  let before = "";
  for (let i = 3; i < 20000 && failed === null; i++) {
    before = fingerprint(s);
    const r = await post(body(i));
    if (r.status === 200) acknowledged.push(r.body["id"] as number);
    else {
      failed = r;
      failedWord = `fill${i}word`;
    }
  }
  expect(failed, `a send failed on the full ${disk.kind} disk`).not.toBeNull();
  expect(failed).toEqual({ status: 500, body: { result: "error", msg: "Internal server error" } });
  expect(logged).toHaveLength(1);
  expect(disk.errorCodes).toContain(errnoOf(logged[0]));
  expect(fingerprint(s)).toBe(before);
  const reusedId = acknowledged[acknowledged.length - 1]! + 1;
  expect(internals(s).counters.nextMessageId).toBe(reusedId);

  // Still full: reads work and the failed message is nowhere.
  expect(await ids([{ operator: "channel", operand: "general" }])).toEqual(acknowledged);
  expect(await search(failedWord)).toEqual([]);
  const single = await call(w.bob, "GET", `/messages/${acknowledged[0]}`);
  expect(single.status).toBe(200);
  expect(await call(w.bob, "GET", `/messages/${reusedId}`)).toMatchObject({
    status: 400,
    body: { msg: "Invalid message(s)" },
  });

  disk.free();
  const after = await post("roomagain meadow");
  expect(after).toMatchObject({ status: 200, body: { result: "success", id: reusedId } });
  expect(await search("roomagain")).toEqual([reusedId]);
  expect(await search(failedWord)).toEqual([]);
  expect(
    await call(w.bob, "POST", "/messages/flags", { messages: [reusedId, acknowledged[0]], op: "add", flag: "starred" }),
  ).toMatchObject({ status: 200 });
  expect(await ids([{ operator: "is", operand: "starred" }])).toEqual([acknowledged[0], reusedId]);
  expect(s.verify()).toMatchObject({ differences: [], problems: [] });

  server.close();
  server = undefined;
  const live = fingerprint(s);
  s.close();
  store = openStore(disk.dir, { noSync: true });
  expect(fingerprint(store)).toBe(live);
  expect(store.verify()).toMatchObject({ messages: acknowledged.length + 1, differences: [], problems: [] });
  expect(store.findMessageRecord(reusedId)?.content).toBe("roomagain meadow");
});

/** A request whose body is written in pieces while the server may already have answered (and stopped reading). */
function sendBody(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        headers: { ...headers, "Content-Length": String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers }),
        );
      },
    );
    req.on("error", reject);
    const piece = 64 * 1024;
    let at = 0;
    const pump = (): void => {
      while (at < body.length) {
        const more = req.write(body.subarray(at, at + piece));
        at += piece;
        if (!more) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

it("an upload that runs out of room mid-body is answered 500 and leaves no temporary file (multipart and tus); after room is made, uploads work", async () => {
  disk = tmpfsDisk() ?? rlimitDisk();
  store = openStore(disk.dir, { noSync: true });
  const w = seedRealm(store);
  const logged: unknown[] = [];
  server = createServer(store, {
    rateLimit: false,
    dataDir: disk.dir,
    logError: (_message, error) => logged.push(error),
  });
  const base = `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}`;
  const auth = { Authorization: basicAuth(w.alice) };
  const tmp = join(disk.dir, "uploads", String(w.realm.id), "tmp");
  const temporaries = () => readdirSync(tmp);
  // Several MiB: more than the temporary file queues (1 MiB) before asking the sender to wait.
  const data = Buffer.alloc(3 * 1024 * 1024, 0x5a);
  const boundary = "----parleydiskfull";
  const multipart = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const postFile = () =>
    sendBody(
      base,
      "POST",
      "/api/v1/user_uploads",
      { ...auth, "Content-Type": `multipart/form-data; boundary=${boundary}` },
      multipart,
    );
  const tus = { ...auth, "Tus-Resumable": "1.0.0" };
  const createTus = async () => {
    const r = await sendBody(
      base,
      "POST",
      "/api/v1/tus",
      { ...tus, "Upload-Length": String(data.length) },
      Buffer.alloc(0),
    );
    expect(r.status).toBe(201);
    return String(r.headers["location"]);
  };
  const patchTus = (location: string) =>
    sendBody(
      base,
      "PATCH",
      location,
      { ...tus, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0" },
      data,
    );

  const location = await createTus();
  disk.fill();
  const refused = await postFile();
  expect(refused.status, refused.body).toBe(500);
  expect(JSON.parse(refused.body)).toEqual({ result: "error", msg: "Internal server error" });
  expect(disk.errorCodes).toContain(errnoOf(logged.at(-1)));
  const patched = await patchTus(location);
  expect(patched.status, patched.body).toBe(500);
  expect(disk.errorCodes).toContain(errnoOf(logged.at(-1)));
  // Nothing half-received stays behind: the multipart temporary file and the tus upload are gone.
  expect(temporaries()).toEqual([]);
  expect((await sendBody(base, "HEAD", location, tus, Buffer.alloc(0))).status).toBe(404);
  expect(store.attachments(w.alice.id)).toEqual([]);

  disk.free();
  const stored = await postFile();
  expect(stored.status, stored.body).toBe(200);
  const again = await createTus();
  const finished = await patchTus(again);
  expect(finished.status, finished.body).toBe(200);
  expect(store.attachments(w.alice.id).map((a) => a.size)).toEqual([data.length, data.length]);
  expect(temporaries()).toEqual([]);
});
