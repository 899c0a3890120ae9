/**
 * Every GET route of the route table asked through a reader worker of
 * `parley serve --workers` (src/serve-workers.ts), built here in-process as the reader
 * role builds it: a follower store (engine/follower, which refuses every write) behind
 * createServer with the reader's hooks, forwarding what http/forward's writerOnly names
 * to the writer's internal socket. A GET whose handler writes (a thumbnail made on
 * first view, a record created lazily, a mark of access) would answer 500 there; one
 * that reads what only the writer's memory holds (presence, between its flushes) would
 * answer stale; both kinds are marked `answeredByWriter` and forwarded.
 *
 * Requests are built from the endpoints' own test metadata, as the access sweep
 * (test/http/access-sweep.test.ts) does: each `testing.sweepBases` base, and for each
 * reference parameter the first encoding of its kind (test/support/reference-probes.ts)
 * naming an object the caller can reach. The reader is asked first (so that nothing
 * the writer makes on its own first view hides a write), then the writer: no reader
 * answer is a 5xx, and where the writer answers 200 so does the reader, with the same
 * body (but for the clock, a download token's signature time and the port); the
 * downloads an answer hands out (an upload's temporary URL, an export) open on the
 * other worker.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { THUMBNAIL_FORMAT, type Store, type User } from "../../src/engine/index.js";
import { pathParamNames, type Endpoint } from "../../src/http/endpoint.js";
import type { Ref, SweepBase, SweepFixture } from "../../src/http/endpoint-testing.js";
import { ENDPOINTS } from "../../src/http/endpoints/index.js";
import { writerOnly } from "../../src/http/forward.js";
import { FrameForwarder } from "../../src/http/frame-forward.js";
import type { ObjectKind } from "../../src/http/params.js";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import { openFollower } from "../../src/index.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";
import { probesFor, referenceParams } from "../support/reference-probes.js";
import { upload } from "../http/uploads/support.js";

let s: TestServer;
let follower: Store;
let reader: ParleyServer;
let readerBase = "";
let forwarder: FrameForwarder;
let socketDir = "";
const readerErrors: string[] = [];

let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;
/** Per caller: objects of realm A the caller can reach, by kind. */
const reachable = new Map<number, Partial<Record<ObjectKind, Ref>>>();
const fixtures = new Map<number, SweepFixture>();
/** Who asks: the owner, a member, and a bot (the owner's). */
const callers: User[] = [];

beforeAll(async () => {
  // The key every worker of one supervisor signs temporary download URLs with.
  const downloadKey = randomBytes(32);
  s = await startServer({ worker: { name: "writer", downloadKey } });
  const store = s.t.store;
  const { owner, alice, bob, general } = s.seed;
  const image = await sharp({ create: { width: 900, height: 600, channels: 3, background: { r: 9, g: 9, b: 9 } } })
    .png()
    .toBuffer();
  const uploaded = await upload(s, owner, [{ name: "chart.png", data: image, type: "image/png" }]);
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
  const imagePath = (uploaded.body["url"] as string).slice("/user_uploads/".length);
  const message = store.sendMessage({
    senderId: owner.id,
    to: { type: "channel", channel: "general", topic: "t" },
    content: `[chart](/user_uploads/${imagePath})`,
  }).id;
  store.sendMessage({ senderId: alice.id, to: { type: "direct", users: [bob.id, owner.id] }, content: "hi" });
  const group = store.createGroup(owner.id, { name: "readers", members: [owner.id, bob.id] }).id;
  const defaultGroup = store.createDefaultChannelGroup(owner.id, { name: "start", description: "", channelNames: [] });
  const inFuture = Math.floor(Date.now() / 1000) + 365 * 86_400;
  for (const caller of [owner, bob]) {
    const ownBot = store.createUser({
      realmId: s.seed.realm.id,
      email: `reader-${caller.id}-bot@test.dev`,
      fullName: `Reader ${caller.id}`,
      bot: { type: 1, ownerId: caller.id },
    }).id;
    const ownScheduled = store.scheduleMessage(caller.id, {
      to: { type: "direct", userIds: [caller.id] },
      content: "later",
      deliverAt: inFuture,
      client: "test",
    }).id;
    const ownDraft = store.createDrafts(caller.id, [{ type: "", to: [], topic: "", content: "x" }])[0]!;
    fixtures.set(caller.id, {
      ownScheduledMessage: ownScheduled,
      ownDraft,
      ownBot,
      managedGroup: group,
      defaultChannelGroup: defaultGroup.id,
      groupManager: owner.id,
      publicChannel: general.id,
      apiKey: store.getUser(caller.id).apiKey,
      fresh,
      later: () => String(inFuture),
    });
    reachable.set(caller.id, {
      message,
      channel: general.id,
      channelName: "general",
      user: alice.id,
      email: alice.email,
      group,
      scheduled: ownScheduled,
      draft: ownDraft,
      snippet: store.createSavedSnippet(caller.id, "t", "c").id,
      device: store.registerClientDevice(caller.id),
      upload: imagePath,
    });
  }

  // Data the other GETs read: presence, read receipts, a bot's storage.
  for (const user of [owner, alice])
    expect((await s.call(user, "POST", "/users/me/presence", { status: "active" })).status).toBe(200);
  expect((await s.call(owner, "PATCH", "/realm", { enable_read_receipts: true })).status).toBe(200);
  const ownersBot = store.getUser(fixtures.get(owner.id)!.ownBot);
  store.setBotStorage(ownersBot.id, { k: "v" });
  callers.push(owner, bob, ownersBot);
  fixtures.set(ownersBot.id, fixtures.get(owner.id)!);
  reachable.set(ownersBot.id, reachable.get(owner.id)!);
  // An export, whose download GET /export/realm hands out.
  expect((await s.call(owner, "POST", "/export/realm", { export_type: "1" })).status).toBe(200);
  await s.server.exports.idle();
  // The thumbnail is made on first view, on the reader.
  await s.server.uploads.thumbnails.idle();
  rmSync(s.server.uploads.files.thumbnailPathOf(imagePath, THUMBNAIL_FORMAT.name), { force: true });

  // The reader, as serve-workers' runReader builds it.
  socketDir = mkdtempSync(join(tmpdir(), "parley-reader-gets-"));
  const socket = join(socketDir, "writer.sock");
  await s.server.listenInternal(socket);
  forwarder = new FrameForwarder(socket, "reader-1");
  follower = openFollower(s.t.dir, { noSync: true, lockToken: store.lockToken });
  reader = createServer(follower, {
    rateLimit: false,
    dataDir: s.t.dir,
    authFailureLimit: false,
    logError: (message, error) => readerErrors.push(`${message}: ${String(error)}`),
    worker: {
      name: "reader-1",
      reader: true,
      downloadKey,
      divert: (res, req, head, unauthorized) => {
        if (!unauthorized && !writerOnly(head)) return false;
        forwarder.forward(res, req, head);
        return true;
      },
      beforeLocal: () => void follower.catchUp(),
    },
  });
  readerBase = `http://127.0.0.1:${await reader.listen(0, "127.0.0.1")}`;
}, 30_000);

afterAll(() => {
  reader?.close();
  forwarder?.close();
  follower?.close();
  s?.close();
  if (socketDir !== "") rmSync(socketDir, { recursive: true, force: true });
});

const endpointKey = (e: Endpoint) => `${e.method} ${e.root ? "(root) " : ""}${e.path}`;

/**
 * The targets asked for one base: with only the base's parameters, then with each query
 * reference the base is for (one at a time, as the access sweep probes them). Path
 * references always name a reachable object; other path segments are "1".
 */
function targets(endpoint: Endpoint, base: SweepBase, caller: User): string[] {
  const fixture = fixtures.get(caller.id)!;
  const objects = reachable.get(caller.id)!;
  const given: Record<string, string> = {};
  for (const [k, v] of Object.entries(base.params)) given[k] = typeof v === "function" ? v(fixture) : v;
  const plain = { ...given };
  /** A reachable object in a parameter's first encoding that fits the base, or null. */
  const reachableValue = (spec: ReturnType<typeof referenceParams>[number]) => {
    const probe = probesFor(endpoint, spec).find((p) => objects[p.names] !== undefined && (p.when?.(plain) ?? true));
    if (probe === undefined) return null;
    const ref = objects[probe.names]!;
    return { value: probe.encode(ref), spread: probe.encodePath?.(ref) ?? {} };
  };
  const spread: Record<string, string> = {};
  const pathValues: Record<string, string> = {};
  const queryRefs: Record<string, string>[] = [{}];
  for (const spec of referenceParams(endpoint)) {
    if (given[spec.name] !== undefined) continue;
    const found = reachableValue(spec);
    if (found === null) continue;
    if (spec.inPath) {
      pathValues[spec.name] = found.value;
      Object.assign(spread, found.spread);
    } else if (base.for === undefined || base.for.includes(spec.name)) {
      queryRefs.push({ [spec.name]: found.value });
    }
  }
  const inPath = pathParamNames(endpoint.path);
  const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent(spread[name] ?? given[name] ?? pathValues[name] ?? "1"),
  );
  const query = Object.fromEntries(Object.entries(given).filter(([name]) => !inPath.includes(name)));
  return queryRefs.map((extra) => {
    const search = new URLSearchParams({ ...query, ...extra }).toString();
    return `${endpoint.root ? "" : "/api/v1"}${path}${search === "" ? "" : `?${search}`}`;
  });
}

/**
 * An answer's text without what differs between any two requests or servers: the clock,
 * a temporary download URL's token (signed with the second it was made) and the port
 * in URLs (the reader and the writer listen on two here, on one under --workers).
 */
const comparable = (body: string) =>
  body
    .replace(/"server_timestamp":[\d.]+/, '"server_timestamp":0')
    .replace(/\/user_uploads\/temporary\/[0-9A-F]+\//g, "/user_uploads/temporary/TOKEN/")
    .replace(/\/\/127\.0\.0\.1:\d+|\/\/localhost:\d+/g, "//HOST");

/** Download URLs in an answer: a temporary URL to an upload (/api/v1/user_uploads/...), an export's. */
const HANDED_OUT =
  /"(?:url|export_url)":"(?:https?:\/\/[^/"]+)?(\/user_(?:uploads\/temporary|avatars\/exports)\/[^"]+)"/g;

async function ask(base: string, path: string, caller: User): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base}${path}`, {
    headers: { Authorization: basicAuth(s.t.store.getUser(caller.id)) },
  });
  return { status: response.status, body: (await response.text()).slice(0, 3000) };
}

describe("GET routes on a reader worker", () => {
  it("answers every GET route without a 5xx, and as the writer does where the writer answers 200", async () => {
    const problems: string[] = [];
    const asked = new Set<string>();
    let requests = 0;
    for (const endpoint of ENDPOINTS.filter((e) => e.method === "GET")) {
      const key = endpointKey(endpoint);
      for (const base of endpoint.testing?.sweepBases ?? [{ params: {} }]) {
        for (const caller of callers) {
          for (const path of targets(endpoint, base, caller)) {
            const onReader = await ask(readerBase, path, caller);
            const onWriter = await ask(s.base, path, caller);
            requests += 2;
            asked.add(key);
            const where = `${key} as ${caller.fullName}: ${path}`;
            if (onReader.status >= 500) problems.push(`${where}: reader ${onReader.status} ${onReader.body}`);
            else if (onWriter.status === 200 && onReader.status !== 200)
              problems.push(`${where}: reader ${onReader.status} ${onReader.body}, writer 200`);
            else if (onWriter.status === 200 && comparable(onReader.body) !== comparable(onWriter.body))
              problems.push(`${where}: reader answered\n    ${onReader.body}\n  writer\n    ${onWriter.body}`);
            // The downloads an answer hands out (a temporary URL, an export) open on the other worker too.
            for (const [from, to, on] of [
              [onReader, s.base, "writer"],
              [onWriter, readerBase, "reader"],
            ] as const) {
              for (const [, handedOut] of from.body.matchAll(HANDED_OUT)) {
                const download = await ask(to, handedOut!, caller);
                requests++;
                if (download.status !== 200)
                  problems.push(`${where}: ${handedOut} answers ${download.status} on the ${on} ${download.body}`);
              }
            }
          }
        }
      }
    }
    expect({ problems, readerErrors }).toEqual({ problems: [], readerErrors: [] });
    expect([...asked].sort()).toEqual(
      ENDPOINTS.filter((e) => e.method === "GET")
        .map(endpointKey)
        .sort(),
    );
    expect(requests).toBeGreaterThan(300);
  }, 60_000);
});
