/**
 * Seeded fuzzing of every endpoint in the route table. Each request carries malformed
 * values for one or more parameters — derived from the parameter's schema (integer,
 * boolean, string, one-of, or JSON with its value schema; see describeParam in
 * src/http/params.ts) plus generic nasties — while the other parameters are valid or
 * absent, so that requests reach past the first check. For every answer: never a 5xx,
 * nothing logged as unexpected, errors in Zulip's shape ({result: "error", msg, code}),
 * and a failed request leaves the store exactly as it was.
 *
 * The seed is fixed unless PARLEY_FUZZ_SEED is set; it is printed, and each endpoint
 * runs under seed + its index in the table, so a failure report names what to rerun.
 * Runs are counted, not timed: RUNS per endpoint keeps the file well under a minute
 * (PARLEY_FUZZ_RUNS raises it for a longer hunt).
 */
import fc from "fast-check";
import { SignJWT } from "jose";
import { parseConfig } from "../../src/config/index.js";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Endpoint } from "../../src/http/endpoint.js";
import { ENDPOINTS } from "../../src/http/endpoints/index.js";
import {} from "../../src/config/index.js";
import { describeParam, type ParamInfo } from "../../src/http/params.js";
import type { User } from "../../src/engine/index.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";
import { fingerprint } from "../support/snapshot.js";

const SEED = process.env["PARLEY_FUZZ_SEED"] !== undefined ? Number(process.env["PARLEY_FUZZ_SEED"]) : 20240607;
/**
 * Requests per endpoint (form fuzzing; PARLEY_FUZZ_RUNS for a longer local hunt), and raw-body requests per endpoint.
 */
const RUNS = Number(process.env["PARLEY_FUZZ_RUNS"] ?? 30);
const RAW_RUNS = 8;
const JWT_SECRET = "fuzz test secret, long enough for HS256";
/**
 * Long values: about 100 KB in bodies. uWebSockets.js resets the connection when a
 * request head passes about 100 KB (it has no 414/431 answer), a limit of the
 * transport rather than of parley, so query strings and paths stay well under it.
 */
const LONG = 100_000;
const LONG_IN_HEAD = 4_000;

// ---------------------------------------------------------------- values

const GENERIC = [
  "",
  " ",
  "\t\n",
  "null",
  "undefined",
  "NaN",
  "-NaN",
  "Infinity",
  "-Infinity",
  "-1",
  "0",
  "-0",
  "1.5",
  "1e309",
  "-1e309",
  "1e-400",
  "9007199254740993",
  "-9007199254740993",
  "18446744073709551616",
  "4294967296",
  "4294967295",
  "2147483648",
  "-2147483649",
  "0x1f",
  "0b1",
  "1_000",
  "+5",
  "٣",
  " 7 ",
  "true",
  "false",
  "True",
  "1",
  "yes",
  "[]",
  "{}",
  "[[]]",
  "[{}]",
  "[null]",
  '""',
  '"x"',
  "'x'",
  "[1,",
  "{",
  "}",
  "[1,]",
  '{"a":}',
  "[1 2]",
  '{"__proto__":{"polluted":true}}',
  '["__proto__"]',
  '{"constructor":{"prototype":{"x":1}}}',
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "\u0000",
  "a\u0000b",
  '["\u0000"]',
  "%00",
  "%",
  "%zz",
  "\ud800",
  "\udfff",
  "🐙",
  "\u202e",
  "\ufeff",
  "Ⅻ",
  "ß",
  "İ",
  "<script>",
  "'; DROP TABLE x;--",
  "\\",
  "\r\n",
  "../../",
  "[".repeat(5000) + "]".repeat(5000),
  '{"a":'.repeat(3000) + "1" + "}".repeat(3000),
  JSON.stringify(Array.from({ length: 6000 }, (_, i) => i)),
];
const nastyText = (limit: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...GENERIC.filter((g) => g.length <= limit)) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null") },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("x", "🐙", "\u0000", "[1,")
        .map((unit) => unit.repeat(Math.floor(limit / unit.length))),
    },
  );

const INT_NASTY = ["1.0", "1e3", "00", "-00", "9".repeat(400), "-" + "9".repeat(400), "1 2", "1\u00002", "１"];
function malformedInt(info: { min?: number; max?: number }): fc.Arbitrary<string> {
  const edges = [info.min, info.max].filter((b): b is number => b !== undefined).flatMap((b) => [b - 1, b + 1]);
  return fc.oneof(
    fc.constantFrom(...INT_NASTY, ...edges.map(String)),
    fc.integer().map(String),
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
    fc.double().map(String),
  );
}

/** JSON near `schema`: its shape with wrong leaves, missing or extra keys, wrong containers. */
function nearShape(schema: z.ZodType, depth = 0): fc.Arbitrary<unknown> {
  const wrongLeaf = fc.oneof(
    fc.constantFrom<unknown>(
      null,
      true,
      -1,
      0,
      1.5,
      2 ** 31,
      2 ** 32,
      2 ** 53 + 2,
      -(2 ** 63),
      1e308,
      "",
      "__proto__",
      "constructor",
      "\u0000",
      "🐙",
      [],
      {},
    ),
    fc.jsonValue({ maxDepth: 2 }),
  );
  if (depth > 3) return wrongLeaf;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault)
    return nearShape(schema.unwrap() as z.ZodType, depth);
  if (schema instanceof z.ZodArray)
    return fc.oneof(fc.array(nearShape(schema.element as z.ZodType, depth + 1), { maxLength: 4 }), wrongLeaf);
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodType>;
    const entries = Object.entries(shape).map(
      ([k, v]) => [k, fc.option(nearShape(v, depth + 1), { nil: undefined })] as const,
    );
    return fc.oneof(
      fc.record(Object.fromEntries(entries)).chain((obj) =>
        fc
          .dictionary(fc.constantFrom("__proto__", "constructor", "extra", "toString"), wrongLeaf, { maxKeys: 2 })
          .map((extra) => {
            const out: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
            for (const [k, v] of Object.entries(extra))
              Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
            return out;
          }),
      ),
      wrongLeaf,
    );
  }
  if (schema instanceof z.ZodUnion)
    return fc.oneof(...(schema.options as z.ZodType[]).map((o) => nearShape(o, depth + 1)));
  if (schema instanceof z.ZodRecord)
    return fc.oneof(
      fc.dictionary(fc.string({ maxLength: 8 }), nearShape(schema.valueType as z.ZodType, depth + 1), { maxKeys: 3 }),
      wrongLeaf,
    );
  if (schema instanceof z.ZodNumber) return fc.oneof(fc.integer({ min: -5, max: 2 ** 32 + 5 }), wrongLeaf);
  if (schema instanceof z.ZodString) return fc.oneof(fc.string({ maxLength: 20 }), wrongLeaf);
  if (schema instanceof z.ZodBoolean) return fc.oneof(fc.boolean(), wrongLeaf);
  return fc.oneof(wrongLeaf, narrowLike);
}

const OPERATORS = [
  "channel",
  "stream",
  "channels",
  "topic",
  "sender",
  "dm",
  "pm-with",
  "dm-including",
  "group-pm-with",
  "is",
  "has",
  "in",
  "search",
  "id",
  "near",
  "with",
  "mentions",
  "bogus",
  "__proto__",
  "",
];
const operand = fc.oneof(
  fc.constantFrom<unknown>(
    "general",
    "secret",
    "newest",
    "starred",
    "unread",
    "dm",
    "private",
    "link",
    "home",
    "all",
    "public",
    "",
    " ",
    "__proto__",
    "\u0000",
    0,
    -1,
    1.5,
    2 ** 32,
    2 ** 53 + 2,
    null,
    true,
    [],
    [1, 2],
    ["x"],
    {},
  ),
  fc.integer({ min: 0, max: 40 }),
  fc.string({ maxLength: 12 }),
);
const deepList = JSON.parse("[".repeat(2000) + "1" + "]".repeat(2000)) as unknown;
/** Narrows that once were, or could be, expensive: deep operands, huge searches, thousands of terms. */
const NARROW_NASTY: readonly unknown[] = [
  [{ operator: "dm", operand: deepList }],
  [{ operator: "sender", operand: deepList }],
  [{ operator: "search", operand: "word ".repeat(4_000) }],
  [{ operator: "topic", operand: "🐙".repeat(2_000) }],
  [{ operator: "dm", operand: "a@b.c,".repeat(2_000) }],
  Array.from({ length: 400 }, () => ({ operator: "search", operand: "abc" })),
];
/** Narrow-shaped JSON: object and legacy list terms with odd operators and operands. */
const narrowTerms: fc.Arbitrary<unknown> = fc.array(
  fc.oneof(
    fc.record(
      {
        operator: fc.oneof(fc.constantFrom<unknown>(...OPERATORS), operand),
        operand,
        negated: fc.constantFrom<unknown>(true, false, "true", 1, null),
      },
      { requiredKeys: [] },
    ),
    fc.tuple(fc.constantFrom(...OPERATORS), operand),
    fc.array(operand, { maxLength: 3 }),
    operand,
  ),
  { maxLength: 4 },
);
const narrowLike: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: narrowTerms },
  { weight: 1, arbitrary: fc.constantFrom(...NARROW_NASTY) },
);

function malformed(info: ParamInfo | undefined, name: string, limit: number): fc.Arbitrary<string> {
  const generic = nastyText(limit);
  if (!info) return generic;
  switch (info.kind) {
    case "int":
      return fc.oneof(malformedInt(info), generic);
    case "bool":
      return fc.oneof(fc.constantFrom("1", "0", "TRUE", "yes", "null", '"true"', "[true]"), generic);
    case "oneOf":
      return fc.oneof(
        fc.constantFrom(...info.values.flatMap((v) => [v.toUpperCase(), ` ${v}`, `${v}\u0000`, JSON.stringify(v)])),
        generic,
      );
    case "json": {
      const shaped = name === "narrow" ? fc.oneof(narrowLike, nearShape(info.schema)) : nearShape(info.schema);
      return fc.oneof(
        { weight: 3, arbitrary: shaped.map((v) => JSON.stringify(v) ?? "null") },
        { weight: 1, arbitrary: generic },
      );
    }
    case "str":
      return fc.oneof(
        info.maxLength !== undefined
          ? fc.constantFrom("x".repeat(info.maxLength + 1), "🐙".repeat(info.maxLength + 1))
          : fc.constant("x".repeat(limit)),
        generic,
      );
    case "intOrString":
      return fc.oneof(malformedInt({}), generic);
  }
}

// ---------------------------------------------------------------- requests

let s: TestServer;
let callers: User[] = [];
const unexpected: string[] = [];
/** Valid values by parameter name, so that other parameters pass; schema-derived otherwise. */
let VALID: Record<string, readonly string[]> = {};

function valid(info: ParamInfo | undefined, name: string, endpoint: Endpoint): fc.Arbitrary<string> {
  const known = name === "subscriptions" && endpoint.method === "DELETE" ? ['["general"]'] : VALID[name];
  if (known) return fc.constantFrom(...known);
  switch (info?.kind) {
    case "int":
      return fc.constant(String(info.min ?? 1));
    case "bool":
      return fc.constantFrom("true", "false");
    case "oneOf":
      return fc.constantFrom(...info.values);
    case "json":
      return fc.constant(info.schema.safeParse([]).success ? "[]" : "{}");
    default:
      return fc.constant("x");
  }
}

const pathParams = (e: Endpoint) => [...e.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);

interface FuzzRequest {
  readonly caller: User;
  readonly path: string;
  readonly params: Record<string, string>;
}

function requestArb(endpoint: Endpoint): fc.Arbitrary<FuzzRequest> {
  const specs = [
    ...Object.entries(endpoint.params).map(([name, schema]) => ({ name, path: false, ...describeParam(schema) })),
    ...pathParams(endpoint).map((name) => ({ name, path: true, info: undefined, optional: false })),
  ];
  if (specs.length === 0) {
    // Nothing to corrupt but unknown parameters.
    return fc
      .record({
        caller: fc.constantFrom(...callers),
        extra: fc.dictionary(nastyText(40), nastyText(200), { maxKeys: 3 }),
      })
      .map(({ caller, extra }) => ({ caller, path: endpoint.path, params: extra }));
  }
  const names = specs.map((p) => p.name);
  const values = Object.fromEntries(
    specs.map((spec) => [
      spec.name,
      fc.record({
        bad: malformed(spec.info, spec.name, spec.path || endpoint.method === "GET" ? LONG_IN_HEAD : LONG),
        good: spec.optional
          ? fc.option(valid(spec.info, spec.name, endpoint), { nil: undefined })
          : valid(spec.info, spec.name, endpoint).map((v): string | undefined => v),
      }),
    ]),
  );
  return fc
    .record({
      caller: fc.constantFrom(...callers),
      target: fc.constantFrom(...names),
      others: fc.subarray(names, { maxLength: Math.min(2, names.length) }),
      values: fc.record(values),
      extra: fc.option(
        fc.dictionary(fc.constantFrom("__proto__", "constructor", "toString", "bogus", ""), nastyText(100), {
          maxKeys: 2,
        }),
        { nil: undefined },
      ),
    })
    .map(({ caller, target, others, values: v, extra }) => {
      const params: Record<string, string> = {};
      const pathValues: Record<string, string> = {};
      for (const spec of specs) {
        const chosen = spec.name === target || others.includes(spec.name) ? v[spec.name]!.bad : v[spec.name]!.good;
        if (chosen === undefined) continue;
        if (spec.path) pathValues[spec.name] = chosen;
        else params[spec.name] = chosen;
      }
      for (const [k, value] of Object.entries(extra ?? {}))
        if (!names.includes(k))
          Object.defineProperty(params, k, { value, enumerable: true, writable: true, configurable: true });
      const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) =>
        encodeURIComponent(wellFormed(pathValues[name] ?? "1")),
      );
      return { caller, path, params };
    });
}

/** Lone surrogates cannot be URL-encoded: they become U+FFFD, as URLSearchParams does for bodies. */
const wellFormed = (text: string) =>
  text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

interface Reply {
  readonly status: number;
  readonly body: unknown;
}

/** Routes outside /api/v1 (file downloads) are reached at their own path. */
const prefixOf = (endpoint: Endpoint) => (endpoint.root ? "" : "/api/v1");
/** GET and HEAD carry no body (fetch refuses one); parameters go in the query. */
const bodiless = (endpoint: Endpoint) => endpoint.method === "GET" || endpoint.method === "HEAD";

async function send(endpoint: Endpoint, request: FuzzRequest): Promise<Reply> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(request.params)) form.append(k, v);
  const inQuery = bodiless(endpoint);
  const url = `${s.base}${prefixOf(endpoint)}${request.path}${inQuery && form.size > 0 ? `?${form}` : ""}`;
  const response = await fetch(url, {
    method: endpoint.method,
    headers: { Authorization: basicAuth(s.t.store.getUser(request.caller.id)) },
    body: inQuery ? undefined : form,
  });
  return { status: response.status, body: endpoint.method === "HEAD" ? HEAD_BODY : await parseJson(response) };
}

/** A HEAD answer has no body to check: only its status and the store are. */
const HEAD_BODY = Symbol("no body");

async function parseJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { unparsable: text.slice(0, 200) };
  }
}

/** Zulip's answer shape; a failed request changed nothing. */
function check(reply: Reply, before: string): void {
  expect(unexpected.splice(0)).toEqual([]);
  expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(500);
  if (reply.body === HEAD_BODY) {
    expect(reply.status >= 400 ? fingerprint(s.t.store) === before : true).toBe(true);
    return;
  }
  const body = reply.body as Record<string, unknown>;
  if (reply.status >= 400) {
    expect(body["result"]).toBe("error");
    expect(typeof body["msg"]).toBe("string");
    // Zulip's 405 alone carries allowed_methods instead of a code.
    if (reply.status === 405) expect(Array.isArray(body["allowed_methods"])).toBe(true);
    else expect(typeof body["code"], JSON.stringify(body)).toBe("string");
    expect(fingerprint(s.t.store) === before, `store changed by a failed request: ${JSON.stringify(body)}`).toBe(true);
  } else {
    expect(body["result"]).toBe("success");
  }
}

/** Bodies that are wrong as a whole: types, encodings, multipart without or with a broken boundary. */
const RAW_BODIES: readonly { contentType: string; body: string }[] = [
  { contentType: "application/json", body: '{"type":"stream"}' },
  { contentType: "text/plain", body: "hello" },
  { contentType: "multipart/form-data", body: "x" },
  {
    contentType: "multipart/form-data; boundary=zz",
    body: '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--zz',
  },
  {
    contentType: "multipart/form-data; boundary=zz",
    body: '--zz\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\n{}\r\n--zz--\r\n',
  },
  { contentType: "application/x-www-form-urlencoded", body: "%zz=%&&==&a=%E0%A4%A&__proto__=1&constructor=2" },
  { contentType: "application/x-www-form-urlencoded; charset=latin1", body: "content=\u00ff\u0000" },
  { contentType: "", body: "\u0000\u0001\u0002" },
];

beforeAll(async () => {
  // A bouncer address where nothing listens: registrations reach the outbox, whose sender does not run here.
  // A JWT key for the root realm, so that fuzzed tokens reach jose; a camo key, so that fuzzed image URLs reach its
  // check.
  const config = parseConfig(
    {
      PUSH_NOTIFICATION_BOUNCER_URL: "http://127.0.0.1:9",
      ZULIP_ORG_ID: "fuzz",
      ZULIP_ORG_KEY: "fuzz",
      JWT_AUTH_KEYS: { "": { key: JWT_SECRET, algorithms: ["HS256"] } },
      CAMO_KEY: "fuzz-test-camo-key",
    },
    "test",
  );
  s = await startServer({
    config,
    bouncerTimeoutMs: 200,
    logError: (message, error) =>
      unexpected.push(`${message}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  });
  const store = s.t.store;
  const { owner, alice, bob, guest, general, secret } = s.seed;
  const ids = [
    store.sendMessage({
      senderId: alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "hello **there**",
    }).id,
    store.sendMessage({ senderId: alice.id, to: { type: "channel", channel: "secret", topic: "s" }, content: "psst" })
      .id,
    store.sendMessage({ senderId: alice.id, to: { type: "direct", users: [bob.id] }, content: "dm" }).id,
  ];
  callers = [owner, alice, bob, guest];
  VALID = {
    anchor: ["newest", "oldest", "first_unread", String(ids[0])],
    num_before: ["0", "3"],
    num_after: ["0", "3"],
    narrow: ["[]", '[["channel","general"]]', '[{"operator":"is","operand":"unread"}]'],
    message_ids: [JSON.stringify(ids)],
    messages: [JSON.stringify(ids)],
    op: ["add", "remove"],
    flag: ["read", "starred", "collapsed"],
    type: ["stream", "direct"],
    to: ["general", String(general.id), JSON.stringify([bob.id])],
    content: ["hi"],
    topic: ["t"],
    stream_id: [String(general.id), String(secret.id)],
    topic_name: ["t"],
    emoji_name: ["octopus", "smile"],
    message_id: ids.map(String),
    user_id_or_email: [String(bob.id), bob.email],
    subscriptions: [JSON.stringify([{ name: "general" }]), JSON.stringify([{ name: "fuzzed" }])],
    principals: [JSON.stringify([bob.id])],
    full_name: ["Renamed"],
    device_id: callers.map((c) => String(store.registerClientDevice(c.id))),
    push_key: [Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 7)]).toString("base64")],
    push_key_id: ["1", "4294967295"],
    token_kind: ["fcm", "apns"],
    token_id: [Buffer.alloc(8, 1).toString("base64")],
    bouncer_public_key: ["AAAA"],
    encrypted_push_registration: ["c2VhbGVk"],
    username: ["alice@test.dev", "owner@test.dev"],
    password: ["not-the-password-1"],
    token: [
      await new SignJWT({ email: "bob@test.dev" })
        .setProtectedHeader({ alg: "HS256" })
        .sign(new TextEncoder().encode(JWT_SECRET)),
    ],
    new_email: ["renamed@test.dev"],
  };
  console.log(`fuzz seed ${SEED} (set PARLEY_FUZZ_SEED to change it)`);
});
afterAll(() => s.close());

/**
 * A request may deactivate a caller (DELETE /users/me, /users/{id}) or the owner their realm
 * (POST /realm/deactivate): they return, so later requests authenticate.
 */
function reactivateCallers(): void {
  for (const caller of callers) if (!s.t.store.getUser(caller.id).isActive) s.t.store.setUserActive(caller.id, true);
  if (s.t.store.findRealm(s.seed.realm.id)?.deactivated) s.t.store.setRealmDeactivated(s.seed.realm.id, false);
}

describe("fuzzing every endpoint of the route table", () => {
  ENDPOINTS.forEach((endpoint, index) => {
    it(`${endpoint.method} ${endpoint.path}: malformed parameters`, async () => {
      await fc.assert(
        fc.asyncProperty(requestArb(endpoint), async (request) => {
          // An export an earlier request started writes in the background: not this request's change.
          await s.server.exports.idle();
          const before = fingerprint(s.t.store);
          check(await send(endpoint, request), before);
          reactivateCallers();
        }),
        { seed: SEED + index, numRuns: RUNS },
      );
    });

    it(`${endpoint.method} ${endpoint.path}: malformed bodies and paths`, async () => {
      const path = endpoint.path.replace(/:(\w+)/g, "1");
      const segments = [
        "%",
        "%E0%A4%A",
        "%00",
        "..",
        "%2F..%2F",
        "-1",
        "1.5",
        "99999999999999999999",
        "__proto__",
        "%F0%9F%90%99",
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...RAW_BODIES),
          fc.constantFrom(...segments),
          fc.constantFrom(...callers),
          async (raw, segment, caller) => {
            await s.server.exports.idle();
            const before = fingerprint(s.t.store);
            const url = `${s.base}${prefixOf(endpoint)}${endpoint.path.includes(":") ? endpoint.path.replace(/:(\w+)/g, segment) : path}`;
            const headers: Record<string, string> = { Authorization: basicAuth(s.t.store.getUser(caller.id)) };
            if (raw.contentType !== "") headers["Content-Type"] = raw.contentType;
            const response = await fetch(bodiless(endpoint) ? `${url}?%zz=%&a=%E0%A4%A&__proto__=1` : url, {
              method: endpoint.method,
              headers,
              body: bodiless(endpoint) ? undefined : raw.body,
            });
            // URL parsing resolves ".." segments: a root route's path can climb to "/", which is
            // the web client's page, no longer this endpoint (the API's prefix keeps /api/v1 paths JSON).
            if (new URL(url).pathname === "/") {
              expect(response.status).toBeLessThan(500);
              return;
            }
            check(
              { status: response.status, body: endpoint.method === "HEAD" ? HEAD_BODY : await parseJson(response) },
              before,
            );
            reactivateCallers();
          },
        ),
        { seed: SEED + index, numRuns: RAW_RUNS },
      );
    });
  });
});
