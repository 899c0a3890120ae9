/**
 * Existence oracles, swept over the whole route table: for every endpoint and every
 * parameter that names a message, channel, user, group or another guarded object, an
 * ID or name the caller cannot access must get exactly the answer of one that exists
 * nowhere (status, code, message, data, with the ID or name itself normalized) and
 * must change nothing.
 *
 * Callers are realm A's member (bob), guest and owner. What they must not tell apart
 * from nothing:
 * - another realm's messages (public channel, private channel, DM), channels, users,
 *   emails, groups and scheduled messages (every caller);
 * - for bob: the private channel he is not in, its messages and a DM between others;
 * - for the guest: those, and the public channel he is not in with its messages;
 * - for every caller: another user's scheduled message of the same realm (Zulip's
 *   access_scheduled_message answers 404 "Scheduled message does not exist" alike).
 * Users of the caller's own realm are visible to every caller (no restricted-user
 * policies exist here), so only other realms' users are swept. So are only other
 * realms' groups: Zulip lists every group of the realm, deactivated ones included, to
 * every member and guest (GET /user_groups), so a group of the caller's realm is
 * nothing to hide.
 *
 * Everything per endpoint comes from the endpoint files: which parameters are
 * references and of what kind (`ref`, `compoundRef`, `pathRefs`), what else a request
 * needs (`testing.sweepBases`), encodings of the endpoint's own (`testing.probes`) and
 * where Zulip's design makes the answers differ (`testing.sweepExceptions`). How each
 * kind is written is one table, test/support/reference-probes.ts. The first test fails
 * on a parameter that looks like a reference and is neither marked nor given a reason
 * in `testing.notRefs`, so a new endpoint is swept as soon as it is in the route table.
 *
 * Numeric anchors are positional (a window around the ID), so the data is laid out
 * with every message a caller can read before every message they cannot: an anchor
 * at an unreadable message then has the same neighbours as one past the last ID.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { defineEndpoint, pathParamNames, type Endpoint } from "../../src/http/endpoint.js";
import type { ProbeSpec, Ref, SweepBase, SweepFixture, SweepScenario } from "../../src/http/endpoint-testing.js";
import { ENDPOINTS } from "../../src/http/endpoints/index.js";
import { compoundRef, j, p, ref, type ObjectKind } from "../../src/http/params.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";
import { markingProblems, probesFor, referenceParams } from "../support/reference-probes.js";
import { fingerprint } from "../support/snapshot.js";

type Kind = ObjectKind;

let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;

/** Realm A objects the bases name, set in beforeAll. */
const ids = {
  bobsGroup: 0,
  defaultGroup: 0,
  bob: 0,
  general: 0,
  realmA: 0,
  ownScheduled: new Map<number, number>(),
  ownDraft: new Map<number, number>(),
  ownBot: new Map<number, number>(),
};
/** What the endpoints' sweep bases may use, for one caller. */
const fixtureFor = (caller: User): SweepFixture => ({
  ownScheduledMessage: ids.ownScheduled.get(caller.id)!,
  ownDraft: ids.ownDraft.get(caller.id)!,
  ownBot: ids.ownBot.get(caller.id)!,
  managedGroup: ids.bobsGroup,
  defaultChannelGroup: ids.defaultGroup,
  groupManager: ids.bob,
  publicChannel: ids.general,
  apiKey: s.t.store.getUser(caller.id).apiKey,
  fresh,
  // Far enough ahead that no scheduler delivers it during the test.
  later: () => String(Math.floor(Date.now() / 1000) + 365 * 86_400),
});

type Refs = Partial<Record<Kind, readonly Ref[]>>;
interface Scenario {
  readonly name: SweepScenario;
  readonly caller: User;
  /** Called once per probe: names may be consumed (subscribing creates channels). */
  readonly refs: (kind: Kind) => readonly Ref[];
}

let s: TestServer;
let scenarios: Scenario[] = [];
/** Nonexistent objects, per kind; names are fresh per call. */
const nowhere = (kind: Kind): Ref =>
  ({
    message: 1_999_999,
    channel: 1_999_998,
    user: 1_999_997,
    group: 1_999_996,
    scheduled: 1_999_995,
    draft: 1_999_994,
    snippet: 1_999_993,
    attachment: 1_999_992,
    device: 1_999_991,
    channelFolder: 1_999_990,
    defaultChannelGroup: 1_999_989,
    linkifier: 1_999_988,
    profileField: 1_999_987,
    channelName: fresh("no-such-channel"),
    email: `${fresh("nobody")}@nowhere.test`,
    upload: `${ids.realmA}/00/AAAAAAAAAAAAAAAAAAAAAAAA/nothing.png`,
    tusUpload: "0".repeat(32),
  })[kind];

beforeAll(async () => {
  s = await startServer();
  const store = s.t.store;
  const { owner, alice, bob, guest, general, secret } = s.seed;
  const send = (
    senderId: number,
    to: { type: "channel"; channel: string; topic: string } | { type: "direct"; users: number[] },
    content = "x",
  ) => store.sendMessage({ senderId, to, content }).id;
  // Uploads (records only: access is decided on them, the bytes are never reached here), linked from the messages
  // below.
  ids.realmA = s.seed.realm.id;
  ids.general = general.id;
  const uploadOf = (ownerId: number, realmId: number, name: string) => {
    const pathId = `${realmId}/ab/${fresh("upload").padEnd(24, "x")}/${name}`;
    return store.createAttachment(
      { ownerId, pathId, name, size: 1, contentType: "image/png", image: { width: 1, height: 1, animated: false } },
      null,
    );
  };
  const [generalUpload, dmBobUpload, secretUpload, dmOwnerUpload, unclaimedUpload] = [
    "g.png",
    "b.png",
    "s.png",
    "o.png",
    "u.png",
  ].map((name) => uploadOf(alice.id, s.seed.realm.id, name));
  const link = (a: { pathId: string }) => `[f](/user_uploads/${a.pathId})`;
  // Realm A: what bob can read first (general, his DM), then what he cannot; the guest reads none of it.
  send(alice.id, { type: "channel", channel: "general", topic: "t" });
  const generalMsg = send(alice.id, { type: "channel", channel: "general", topic: "t" }, link(generalUpload!));
  const dmAliceBob = send(alice.id, { type: "direct", users: [bob.id] }, link(dmBobUpload!));
  const secretMsg = send(alice.id, { type: "channel", channel: "secret", topic: "t" }, link(secretUpload!));
  const dmAliceOwner = send(alice.id, { type: "direct", users: [owner.id] }, link(dmOwnerUpload!));

  // Realm B, after everything realm A can read.
  const b = store.createRealm({ subdomain: "bee", name: "Bee", owner: { email: "queen@bee.test", fullName: "Queen" } });
  const drone = store.createUser({ realmId: b.realm.id, email: "drone@bee.test", fullName: "Drone" });
  const created = (name: string, inviteOnly: boolean) =>
    store.subscribe(b.owner.id, {
      channels: [{ name }],
      principals: [b.owner.id, drone.id],
      newChannel: { inviteOnly },
    }).createdChannelIds[0]!;
  const hive = created("hive", false);
  const cell = created("cell", true);
  const foreignUpload = uploadOf(drone.id, b.realm.id, "f.png");
  const foreignMessages = [
    send(drone.id, { type: "channel", channel: "hive", topic: "t" }, link(foreignUpload)),
    send(drone.id, { type: "channel", channel: "cell", topic: "t" }),
    send(drone.id, { type: "direct", users: [b.owner.id] }),
  ];
  const workers = store.createGroup(b.owner.id, { name: "workers", members: [drone.id] });
  // Drafts and snippets of others: the other realm's, and alice's in realm A.
  const unaddressed = { type: "" as const, to: [], topic: "", content: "x" };
  const foreignDrafts = store.createDrafts(drone.id, [unaddressed]);
  const foreignSnippets = [store.createSavedSnippet(drone.id, "t", "c").id];
  const aliceDrafts = store.createDrafts(alice.id, [unaddressed]);
  const aliceSnippets = [store.createSavedSnippet(alice.id, "t", "c").id];
  const foreignDevices = [store.registerClientDevice(drone.id)];
  const foreignFolder = store.createChannelFolder(b.owner.id, { name: "hive folder", description: "" }).id;
  const foreignDefaultGroup = store.createDefaultChannelGroup(b.owner.id, {
    name: "hive group",
    description: "",
    channelNames: [],
  }).id;
  const foreignLinkifier = store.addLinkifier(b.owner.id, {
    pattern: "HIVE-(?P<id>[0-9]+)",
    urlTemplate: "https://hive.example/{id}",
  }).id;
  const foreignProfileField = store.createProfileField(b.owner.id, 1, { name: "Hive role" }).id;
  const aliceDevices = [store.registerClientDevice(alice.id)];
  for (const caller of [owner, bob, guest]) {
    ids.ownDraft.set(caller.id, store.createDrafts(caller.id, [unaddressed])[0]!);
    const bot = { type: 1 as const, ownerId: caller.id };
    const email = `own-${caller.id}-bot@test.dev`;
    ids.ownBot.set(caller.id, store.createUser({ realmId: ids.realmA, email, fullName: `Own ${caller.id}`, bot }).id);
  }
  const inFuture = Math.floor(Date.now() / 1000) + 365 * 86_400;
  const schedule = (senderId: number, userIds: number[]) =>
    store.scheduleMessage(senderId, {
      to: { type: "direct", userIds },
      content: "later",
      deliverAt: inFuture,
      client: "test",
    }).id;
  const foreignScheduled = [schedule(drone.id, [b.owner.id]), schedule(b.owner.id, [b.owner.id])];
  // Realm A: a group bob manages, each caller's own scheduled message, and alice's.
  ids.bob = bob.id;
  ids.bobsGroup = store.createGroup(bob.id, { name: "bobs", members: [bob.id] }).id;
  ids.defaultGroup = store.createDefaultChannelGroup(owner.id, {
    name: "starters",
    description: "",
    channelNames: [],
  }).id;
  for (const caller of [owner, bob, guest]) ids.ownScheduled.set(caller.id, schedule(caller.id, [caller.id]));
  const alicesScheduled = [schedule(alice.id, [bob.id]), schedule(alice.id, [alice.id])];
  const freshChannel = (prefix: string, inviteOnly: boolean) => {
    const name = fresh(prefix);
    created(name, inviteOnly);
    return name;
  };
  const foreignTus = (await s.server.uploads.tus.create(b.realm.id, drone.id, 10, "f.txt", "text/plain")).id;
  const alicesTus = (await s.server.uploads.tus.create(s.seed.realm.id, alice.id, 10, "a.txt", "text/plain")).id;
  const alicesAttachments = [generalUpload!.id, secretUpload!.id, unclaimedUpload!.id];
  const foreign = (kind: Kind): readonly Ref[] =>
    ({
      upload: [foreignUpload.pathId],
      attachment: [foreignUpload.id],
      tusUpload: [foreignTus],
      message: foreignMessages,
      channel: [hive, cell],
      // Fresh names each time: subscribing by an unused name creates that channel in realm A.
      channelName: kind === "channelName" ? [freshChannel("hive", false), freshChannel("cell", true)] : [],
      user: [b.owner.id, drone.id],
      email: [b.owner.email, drone.email],
      group: [workers.id, store.systemGroupId(b.realm.id, "role:members")],
      draft: foreignDrafts,
      snippet: foreignSnippets,
      scheduled: foreignScheduled,
      device: foreignDevices,
      channelFolder: [foreignFolder],
      defaultChannelGroup: [foreignDefaultGroup],
      linkifier: [foreignLinkifier],
      profileField: [foreignProfileField],
    })[kind];
  scenarios = [
    { name: "bob: another realm", caller: bob, refs: foreign },
    { name: "guest: another realm", caller: guest, refs: foreign },
    { name: "owner: another realm", caller: owner, refs: foreign },
    {
      name: "owner: others' scheduled messages, drafts and snippets",
      caller: owner,
      refs: (kind) =>
        (({ scheduled: alicesScheduled, draft: aliceDrafts, snippet: aliceSnippets, device: aliceDevices }) as Refs)[
          kind
        ] ?? [],
    },
    {
      name: "owner: others' scheduled messages, drafts, snippets and uploads",
      caller: owner,
      refs: (kind) =>
        (
          ({
            scheduled: alicesScheduled,
            draft: aliceDrafts,
            snippet: aliceSnippets,
            upload: [unclaimedUpload!.pathId, dmBobUpload!.pathId],
            attachment: alicesAttachments,
            tusUpload: [alicesTus],
          }) as Refs
        )[kind] ?? [],
    },
    {
      name: "bob: private places",
      caller: bob,
      refs: (kind) =>
        (
          ({
            message: [secretMsg, dmAliceOwner],
            channel: [secret.id],
            channelName: ["secret"],
            scheduled: alicesScheduled,
            draft: aliceDrafts,
            snippet: aliceSnippets,
            upload: [secretUpload!.pathId, dmOwnerUpload!.pathId, unclaimedUpload!.pathId],
            attachment: alicesAttachments,
            tusUpload: [alicesTus],
          }) as Refs
        )[kind] ?? [],
    },
    {
      name: "guest: channels not joined",
      caller: guest,
      refs: (kind) =>
        (
          ({
            message: [generalMsg, secretMsg, dmAliceBob],
            channel: [general.id, secret.id],
            channelName: ["general", "secret"],
            scheduled: alicesScheduled,
            draft: aliceDrafts,
            snippet: aliceSnippets,
            upload: [generalUpload!.pathId, secretUpload!.pathId, dmBobUpload!.pathId, unclaimedUpload!.pathId],
            attachment: alicesAttachments,
            tusUpload: [alicesTus],
          }) as Refs
        )[kind] ?? [],
    },
  ];
});
afterAll(() => s.close());

/** Routes outside /api/v1 are marked: a download path and its /api/v1 twin are two routes. */
const endpointKey = (e: Endpoint) => `${e.method} ${e.root ? "(root) " : ""}${e.path}`;

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

function replaceRef(text: string, ref: Ref): string {
  const escaped = String(ref).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // A base's fresh channel name differs on every call; a refusal may echo it.
  return text
    .replace(new RegExp(`(?<![\\w.@-])${escaped}(?![\\w@-])`, "gi"), "<ref>")
    .replace(/\bnew-\d+\b/g, "<fresh>");
}

/**
 * Equal answers, except where one names `ref` and the other `nowhereRef` at the same
 * place (an echoed ID, or the ID or name inside a message). Random fields are skipped.
 */
function sameAnswer(got: unknown, expected: unknown, ref: Ref, nowhereRef: Ref): boolean {
  if (got === expected) return true;
  if (typeof got === "number" && typeof expected === "number") return got === ref && expected === nowhereRef;
  if (typeof got === "string" && typeof expected === "string")
    return replaceRef(got, ref) === replaceRef(expected, nowhereRef);
  if (Array.isArray(got) && Array.isArray(expected))
    return got.length === expected.length && got.every((g, i) => sameAnswer(g, expected[i], ref, nowhereRef));
  if (
    got !== null &&
    expected !== null &&
    typeof got === "object" &&
    typeof expected === "object" &&
    !Array.isArray(got) &&
    !Array.isArray(expected)
  ) {
    const g = got as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    const keys = Object.keys(g).sort();
    if (JSON.stringify(keys) !== JSON.stringify(Object.keys(e).sort())) return false;
    return keys.every((k) => RANDOM_FIELDS.has(k) || sameAnswer(g[k], e[k], ref, nowhereRef));
  }
  return false;
}
// Fields that differ between any two calls (a fresh queue, the current time).
const RANDOM_FIELDS = new Set(["queue_id", "server_timestamp"]);

async function ask(
  caller: User,
  endpoint: Endpoint,
  base: SweepBase,
  param: string,
  probe: ProbeSpec,
  ref: Ref,
): Promise<Answer> {
  const params: Record<string, string> = {};
  const fixture = fixtureFor(caller);
  for (const [k, v] of Object.entries(base.params)) params[k] = typeof v === "function" ? v(fixture) : v;
  const value = probe.encode(ref);
  const inPath = pathParamNames(endpoint.path);
  const isPath = inPath.includes(param);
  if (!isPath) params[param] = value;
  const spread = isPath && probe.encodePath ? probe.encodePath(ref) : {};
  const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent(spread[name] ?? (name === param ? value : (params[name] ?? ""))),
  );
  // Path values given by the base go in the path only.
  for (const name of inPath) delete params[name];
  if (endpoint.root) {
    // Outside /api/v1 (file downloads).
    const response = await fetch(`${s.base}${path}`, {
      method: endpoint.method,
      headers: { Authorization: basicAuth(s.t.store.getUser(caller.id)) },
    });
    const text = await response.text();
    return { status: response.status, body: text.startsWith("{") ? (JSON.parse(text) as unknown) : text };
  }
  const r = await s.call(caller, endpoint.method, path, params, { headers: { "Tus-Resumable": "1.0.0" } });
  return { status: r.status, body: r.body };
}

/** Long success bodies (register) are cut in failure reports. */
const show = (a: Answer) => JSON.stringify(a).slice(0, 400);

/** Every exception the endpoints declare, as "ROUTE param scenario". */
const declaredExceptions = () =>
  ENDPOINTS.flatMap((e) =>
    (e.testing?.sweepExceptions ?? []).map((x) => `${endpointKey(e)} ${x.param} ${x.scenario}`),
  ).sort();

describe("reference markings", () => {
  it("every parameter that may name an object is marked or has a reason, and every compound one has probes", () => {
    expect(markingProblems(ENDPOINTS)).toEqual([]);
  });

  it("reports a forgotten marking, a compound reference without probes and a stray base", () => {
    const forgotten = defineEndpoint({
      method: "POST",
      path: "/things/:thing_id",
      auth: "user",
      params: { stream_id: p.int(), members: p.json(j.intList()), note: p.str(), count: p.int() },
      handler: () => ({}),
    });
    const compound = defineEndpoint({
      method: "POST",
      path: "/things",
      auth: "user",
      params: { spec: compoundRef(p.json(j.intList()), ["channel", "user"]), user_id: ref(p.int(), "user") },
      testing: {
        probes: { spec: [{ names: "channel", label: "channel", encode: String }] },
        sweepBases: [{ params: {}, for: ["note"] }],
      },
      handler: () => ({}),
    });
    expect(markingProblems([forgotten, compound])).toEqual([
      "POST /things/:thing_id: stream_id may name an object: mark it with ref() (or pathRefs), or say why not in testing.notRefs",
      "POST /things/:thing_id: members may name an object: mark it with ref() (or pathRefs), or say why not in testing.notRefs",
      "POST /things/:thing_id: thing_id may name an object: mark it with ref() (or pathRefs), or say why not in testing.notRefs",
      "POST /things: spec names user but testing.probes has no probe for it",
      "POST /things: a sweep base for note, which is not a reference",
    ]);
  });

  it("refuses metadata naming a parameter the endpoint does not have", () => {
    const misspelt = () =>
      defineEndpoint({
        method: "GET",
        path: "/things/:thing_id",
        pathRefs: { thingid: "user" },
        auth: "user",
        params: {},
        handler: () => ({}),
      });
    expect(misspelt).toThrow("GET /things/:thing_id: no parameter thingid");
  });
});

describe("access sweep over the route table", () => {
  it("answers IDs of other realms and of private places exactly like IDs that exist nowhere, and changes nothing", async () => {
    const mismatches: string[] = [];
    const stillExceptional = new Set<string>();
    const swept = new Set<string>();
    let requests = 0;
    let probes = 0;
    // The store's fingerprint before the next probe: a probe that must change nothing leaves the same one,
    // so it is taken again only after a probe that may write (halves the fingerprints, the sweep's main cost).
    let before: string | null = null;
    for (const endpoint of ENDPOINTS) {
      const key = endpointKey(endpoint);
      for (const spec of referenceParams(endpoint)) {
        const param = spec.name;
        const bases = (endpoint.testing?.sweepBases ?? [{ params: {} }]).filter(
          (b) => b.for === undefined || b.for.includes(param),
        );
        for (const base of bases) {
          const plain = Object.fromEntries(
            Object.entries(base.params).filter((e): e is [string, string] => typeof e[1] === "string"),
          );
          for (const probe of probesFor(endpoint, spec).filter(
            (probe) => probe.when === undefined || probe.when(plain),
          )) {
            for (const scenario of scenarios) {
              const refs = scenario.refs(probe.names);
              // Channel-name refs are fresh channels made by refs(): the last fingerprint is stale.
              if (probe.names === "channelName") before = null;
              if (refs.length === 0) continue;
              swept.add(`${key} ${param}`);
              probes++;
              const caller = scenario.caller;
              // An export an earlier probe started writes in the background: not this probe's change.
              await s.server.exports.idle();
              before ??= fingerprint(s.t.store);
              const nowhereRef = nowhere(probe.names);
              const expected = await ask(caller, endpoint, base, param, probe, nowhereRef);
              const nothingExpectedToChange = expected.status >= 400;
              const exception = endpoint.testing?.sweepExceptions?.find(
                (x) => x.param === param && x.scenario === scenario.name,
              );
              for (const target of refs) {
                const got = await ask(caller, endpoint, base, param, probe, target);
                requests += 2;
                const where = `${key} ${param} (${probe.label}, base ${JSON.stringify(plain)}) as ${scenario.name}, ref ${target}`;
                const same = sameAnswer(got, expected, target, nowhereRef);
                if (exception) {
                  if (!same) stillExceptional.add(`${key} ${param} ${scenario.name}`);
                } else if (!same) {
                  mismatches.push(`${where}:\n    got      ${show(got)}\n    expected ${show(expected)}`);
                }
              }
              if (nothingExpectedToChange && !exception) {
                const after = fingerprint(s.t.store);
                if (after !== before)
                  mismatches.push(`${key} ${param} (${probe.label}) as ${scenario.name}: the store changed`);
                before = after;
              } else before = null;
            }
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect([...stillExceptional].sort()).toEqual(declaredExceptions());
    // Every reference parameter of every endpoint was probed at least once.
    expect([...swept].sort()).toEqual(
      ENDPOINTS.flatMap((e) => referenceParams(e).map((spec) => `${endpointKey(e)} ${spec.name}`)).sort(),
    );
    // As many probes as when the parameters were classified by name in this file (841), or more.
    expect(probes).toBeGreaterThanOrEqual(841);
    expect(requests).toBeGreaterThan(3000);
    // Several thousand requests, growing with the route table: over a minute on a loaded 2-core machine.
  }, 300_000);
});
