/**
 * Property tests: random realms built through the public Store API, checked against
 * the brute-force reference model in ./reference (Zulip's rules, transcribed).
 *
 * 1. store.getMessages (ids, anchor, found_*, history_limited, flags, errors), with
 *    queries interleaved between the operations (so caches are exercised), and
 *    flag changes by IDs (updated_count, ignored channels, errors).
 * 2. store.updateFlagsForNarrow (processed/updated counts, first/last processed id,
 *    found_*, and every resulting flag).
 * 3. Edits, topic and channel moves (with propagate modes), resolving, message and
 *    topic deletions, by permitted and refused actors, against a clock that moves
 *    past the edit and move time limits (./reference/mutations.ts): after each, every
 *    user's combined feed, the narrows of the channels and topics involved, is:resolved,
 *    is:mentioned, is:followed, in:home, searches for the edited words, first_unread
 *    anchors, unread_msgs and flags; a refused action must change none of them. Edits
 *    and moves go through updateMessageAsync, as PATCH does, with MOVE_STAGING lowered
 *    so that every move of two messages or more is staged (actions/move-staging).
 *
 * Reproducible: seed and run count come from PARLEY_PROPERTY_SEED / PARLEY_PROPERTY_RUNS
 * (defaults below); a failure prints the seed, the counterexample path and the
 * operation log of the realm. PARLEY_PROPERTY_REPLAY='<counterexample JSON>' runs that
 * script alone (with -t to pick the test it came from).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MOVE_STAGING } from "../../src/engine/actions/move-staging.js";
import { EngineError, type GetMessagesResult, type Store, type UnreadSummary } from "../../src/engine/index.js";
import { tempStore, type TempStore } from "../support/temp-store.js";
import {
  RefModel,
  ROLE_ADMIN,
  ROLE_GUEST,
  ROLE_MEMBER,
  ROLE_MODERATOR,
  ROLE_OWNER,
  type EditableFlag,
  type RefAnchor,
  type RefError,
  type RefQuery,
  type RefUser,
  type WireTerm,
} from "./reference/model.js";
import {
  deleteMessage as refDeleteMessage,
  deleteTopic as refDeleteTopic,
  sha256,
  updateMessage as refUpdateMessage,
  type PropagateMode,
  type RefUpdateRequest,
} from "./reference/mutations.js";
import { canonicalUnread, unreadSummary as refUnreadSummary } from "./reference/unread.js";

const SEED = Number(process.env["PARLEY_PROPERTY_SEED"] ?? 20240611);
const RUNS = Number(process.env["PARLEY_PROPERTY_RUNS"] ?? 600);
/** Scripts with edits, moves and deletions check much more per step: fewer of them. */
const MUTATION_RUNS = Number(process.env["PARLEY_PROPERTY_RUNS"] ?? 150);
/**
 * Known engine deviations to tolerate (comma-separated names), for hunting further
 * discrepancies while a known one is unfixed. Empty by default: the test is strict.
 *   error-order              range validation ("The anchor can only be excluded...") must precede narrow errors
 *   first-unread-negated     first_unread's muting conditions take the first channel term even if negated
 * ("none" also turns off the deliberate deviation the reference follows: a case-only rename keeps topic policies.)
 */
const TOLERATE = new Set((process.env["PARLEY_PROPERTY_TOLERATE"] ?? "").split(",").filter((s) => s !== ""));

function tolerated(expected: unknown, actual: unknown): boolean {
  const err = (x: unknown): { code: string; message: string } | undefined =>
    typeof x === "object" && x !== null && "error" in x ? (x as RefError).error : undefined;
  const e = err(expected);
  const a = err(actual);
  if (
    TOLERATE.has("error-order") &&
    e?.message === "The anchor can only be excluded at an end of the range" &&
    a?.code === "BAD_NARROW"
  )
    return true;
  return false;
}

const NAMES = ["Ann Abbot", "Ben Birch", "Cal Cedar", "Dee Dale", "Eve Elm", "Fay Fern"];
const CHANNEL_NAMES = ["general", "Secret", "design", "ops"];
/** Plain words whose stems are distinct, none a stop word nor part of a name, email or link. */
const VOCAB = ["apple", "banana", "cherry", "lunch", "plans", "zebra"];
const SEND_TOPICS = ["lunch", "Lunch", "plans", "✔ plans", "", "general chat"];
const NARROW_TOPICS = ["lunch", "LUNCH", "plans", "✔ plans", "✔ PLANS", "", "general chat", "nothing"];
const POLICY_TOPICS = ["lunch", "PLANS", "✔ plans", "general chat", "Lunch"];
const IS_OPERANDS = ["dm", "private", "starred", "unread", "mentioned", "resolved", "followed", "muted"];
/** Repetitions weight the choice: channel terms (shared history) and is: terms are the interesting ones. */
const OPERATORS = [
  "channel",
  "channel",
  "channel",
  "stream",
  "channels",
  "topic",
  "topic",
  "sender",
  "sender",
  "dm",
  "pm-with",
  "dm-including",
  "group-pm-with",
  "is",
  "is",
  "is",
  "has",
  "in",
  "search",
  "search",
  "id",
] as const;
const FLAGS: readonly EditableFlag[] = ["read", "starred", "collapsed"];
/** Topics messages are moved to (" plans " is stored trimmed; "general chat" is the empty topic). */
const MOVE_TOPICS = ["lunch", "Lunch", "plans", "✔ plans", "", "general chat", "dinner", " plans "];
const DELETE_TOPICS = ["lunch", "LUNCH", "plans", "✔ plans", "", "general chat", "nothing"];
const PROPAGATE_MODES: readonly PropagateMode[] = ["change_one", "change_later", "change_all"];
/** Clock steps: within the 60 s undo grace, past it, past the 620 s edit limit, past the week's move limit. */
const TICKS = [7, 97, 1001, 700_001];
const BIG_ANCHORS = [-3, 0, 2 ** 32 + 5, 10_000_000_000_000_000, Number("10000000000000007"), 2147483647];

// ------------------------------------------------------------------ generators

interface TermSpec {
  readonly op: number;
  readonly negated: boolean;
  readonly a: number;
  readonly b: number;
  readonly form: number;
}
interface QuerySpec {
  readonly user: number;
  readonly terms: readonly TermSpec[];
  readonly anchorKind: number;
  readonly anchorValue: number;
  readonly numBefore: number;
  readonly numAfter: number;
  readonly includeAnchor: boolean;
}
interface MessageBody {
  readonly words: readonly number[];
  readonly mention: number | null;
  readonly link: boolean;
  readonly read: boolean;
}
type Op =
  | ({ readonly k: "sendChannel"; readonly s: number; readonly c: number; readonly topic: number } & MessageBody)
  | ({
      readonly k: "sendDm";
      readonly s: number;
      readonly to: readonly number[];
      readonly byEmail: boolean;
    } & MessageBody)
  | { readonly k: "sub"; readonly u: number; readonly c: number; readonly on: boolean }
  | { readonly k: "active"; readonly u: number; readonly on: boolean }
  | {
      readonly k: "flags";
      readonly u: number;
      readonly ids: readonly number[];
      readonly flag: number;
      readonly add: boolean;
    }
  | {
      readonly k: "topicPolicy";
      readonly u: number;
      readonly c: number;
      readonly topic: number;
      readonly policy: number;
    }
  | { readonly k: "mute"; readonly u: number; readonly c: number; readonly on: boolean }
  | { readonly k: "noise" }
  | { readonly k: "reopen" }
  | { readonly k: "query"; readonly q: QuerySpec }
  | { readonly k: "narrowFlags"; readonly q: QuerySpec; readonly flag: number; readonly add: boolean }
  | MutationOp;

/**
 * `m` picks a message (sometimes a deleted or missing one); `bySender` makes its sender
 * the actor (allowed to edit and delete it) instead of user `u`; `sha` sends no
 * prev_content_sha256 (0), the right one (1) or a stale one (2).
 */
type MutationOp =
  | {
      readonly k: "edit";
      readonly u: number;
      readonly bySender: boolean;
      readonly m: number;
      readonly body: MessageBody;
      readonly topic: number | null;
      readonly mode: number;
      readonly sha: number;
    }
  | {
      readonly k: "move";
      readonly u: number;
      readonly bySender: boolean;
      readonly m: number;
      readonly topic: number | null;
      readonly c: number | null;
      readonly mode: number;
      readonly sha: number;
    }
  | { readonly k: "resolve"; readonly u: number; readonly bySender: boolean; readonly m: number; readonly mode: number }
  | { readonly k: "delete"; readonly u: number; readonly bySender: boolean; readonly m: number }
  | { readonly k: "deleteTopic"; readonly u: number; readonly c: number; readonly topic: number }
  | { readonly k: "tick"; readonly s: number };

type Mode = "query" | "flags" | "mutate";

interface Script {
  readonly roles: readonly number[];
  readonly channels: readonly { readonly kind: number; readonly initial: readonly number[] }[];
  readonly ops: readonly Op[];
  /** Queries (or flag changes by narrow) after the last operation. */
  readonly final: readonly QuerySpec[];
}

const termArb: fc.Arbitrary<TermSpec> = fc.record({
  op: fc.nat(OPERATORS.length - 1),
  negated: fc.oneof({ weight: 2, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  a: fc.nat(1000),
  b: fc.nat(1000),
  form: fc.nat(3),
});
const queryArb: fc.Arbitrary<QuerySpec> = fc.record({
  user: fc.nat(20),
  terms: fc.oneof(
    { weight: 2, arbitrary: fc.constant([]) },
    { weight: 4, arbitrary: fc.array(termArb, { minLength: 1, maxLength: 1 }) },
    { weight: 3, arbitrary: fc.array(termArb, { minLength: 2, maxLength: 3 }) },
  ),
  anchorKind: fc.nat(7),
  anchorValue: fc.nat(1000),
  numBefore: fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 10 }) },
  ),
  numAfter: fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 10 }) },
  ),
  includeAnchor: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
});
const bodyArb = {
  words: fc.array(fc.nat(VOCAB.length - 1), { minLength: 1, maxLength: 3 }),
  mention: fc.option(fc.nat(20), { freq: 3 }),
  link: fc.boolean(),
  read: fc.boolean(),
};
/**
 * The mutation kinds generated (comma-separated, default all), to hunt in one area:
 * edit, move, resolve, delete, deleteTopic, tick. Without "move", edits change content only.
 */
const MUTATIONS = new Set(
  (process.env["PARLEY_PROPERTY_MUTATIONS"] ?? "edit,move,resolve,delete,deleteTopic,tick").split(","),
);

/** An index into PROPAGATE_MODES, change_one most often. */
const modeArb = fc.constantFrom(0, 0, 1, 2);

const mutationArbs: Record<MutationOp["k"], fc.WeightedArbitrary<Op>> = {
  edit: {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("edit" as const),
      u: fc.nat(20),
      bySender: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      m: fc.nat(1000),
      body: fc.record(bodyArb),
      topic: fc.option(fc.nat(MOVE_TOPICS.length - 1), { freq: 4, nil: null }),
      mode: modeArb,
      sha: fc.nat(2),
    }),
  },
  move: {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant("move" as const),
      u: fc.nat(20),
      bySender: fc.boolean(),
      m: fc.nat(1000),
      topic: fc.option(fc.nat(MOVE_TOPICS.length - 1), { freq: 4, nil: null }),
      c: fc.option(fc.nat(20), { freq: 2, nil: null }),
      mode: modeArb,
      sha: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(2) }),
    }),
  },
  resolve: {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("resolve" as const),
      u: fc.nat(20),
      bySender: fc.boolean(),
      m: fc.nat(1000),
      mode: modeArb,
    }),
  },
  delete: {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("delete" as const), u: fc.nat(20), bySender: fc.boolean(), m: fc.nat(1000) }),
  },
  deleteTopic: {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("deleteTopic" as const),
      u: fc.nat(20),
      c: fc.nat(20),
      topic: fc.nat(DELETE_TOPICS.length - 1),
    }),
  },
  tick: {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("tick" as const), s: fc.constantFrom(0, 0, 0, 1, 1, 2, 3) }),
  },
};

function opArb(mode: Mode): fc.Arbitrary<Op> {
  return fc.oneof(
    ...(mode === "mutate" ? Object.entries(mutationArbs).flatMap(([k, a]) => (MUTATIONS.has(k) ? [a] : [])) : []),
    {
      weight: 8,
      arbitrary: fc.record({
        k: fc.constant("sendChannel" as const),
        s: fc.nat(20),
        c: fc.nat(20),
        topic: fc.nat(SEND_TOPICS.length - 1),
        ...bodyArb,
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        k: fc.constant("sendDm" as const),
        s: fc.nat(20),
        to: fc.array(fc.nat(20), { minLength: 1, maxLength: 3 }),
        byEmail: fc.boolean(),
        ...bodyArb,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ k: fc.constant("sub" as const), u: fc.nat(20), c: fc.nat(20), on: fc.boolean() }),
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("active" as const), u: fc.nat(20), on: fc.boolean() }) },
    {
      weight: 3,
      arbitrary: fc.record({
        k: fc.constant("flags" as const),
        u: fc.nat(20),
        ids: fc.array(fc.nat(1000), { minLength: 1, maxLength: 4 }),
        flag: fc.nat(2),
        add: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant("topicPolicy" as const),
        u: fc.nat(20),
        c: fc.nat(20),
        topic: fc.nat(POLICY_TOPICS.length - 1),
        policy: fc.nat(3),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ k: fc.constant("mute" as const), u: fc.nat(20), c: fc.nat(20), on: fc.boolean() }),
    },
    { weight: 1, arbitrary: fc.constant({ k: "noise" as const }) },
    { weight: 1, arbitrary: fc.constant({ k: "reopen" as const }) },
    mode !== "flags"
      ? { weight: 5, arbitrary: fc.record({ k: fc.constant("query" as const), q: queryArb }) }
      : {
          weight: 5,
          arbitrary: fc.record({
            k: fc.constant("narrowFlags" as const),
            q: queryArb,
            flag: fc.nat(2),
            add: fc.boolean(),
          }),
        },
  );
}
function scriptArb(mode: Mode): fc.Arbitrary<Script> {
  const roles =
    mode === "mutate"
      ? fc.constantFrom(ROLE_MEMBER, ROLE_MEMBER, ROLE_GUEST, ROLE_ADMIN, ROLE_MODERATOR)
      : fc.constantFrom(ROLE_MEMBER, ROLE_MEMBER, ROLE_GUEST, ROLE_ADMIN);
  return fc.record({
    roles: fc.array(roles, {
      minLength: 2,
      maxLength: NAMES.length,
    }),
    channels: fc.array(fc.record({ kind: fc.nat(2), initial: fc.array(fc.nat(20), { maxLength: 4 }) }), {
      minLength: 1,
      maxLength: CHANNEL_NAMES.length,
    }),
    ops: fc.array(opArb(mode), { minLength: 10, maxLength: 60, size: "max" }),
    final: fc.array(queryArb, { minLength: 5, maxLength: 15, size: "max" }),
  });
}

// ------------------------------------------------------------------ driver

type Outcome<T> = T | RefError;

function capture<T>(fn: () => T): Outcome<T> {
  try {
    return fn();
  } catch (e) {
    if (e instanceof EngineError) return { error: { code: e.code, message: e.message } };
    throw e;
  }
}

async function captureAsync<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof EngineError) return { error: { code: e.code, message: e.message } };
    throw e;
  }
}

function normalizeResult(r: GetMessagesResult) {
  return {
    anchor: r.anchor,
    foundAnchor: r.foundAnchor,
    foundOldest: r.foundOldest,
    foundNewest: r.foundNewest,
    historyLimited: r.historyLimited,
    messages: r.messages.map((v) => ({ id: v.message.id, flags: [...v.flags] })),
  };
}

/** The engine's unread_msgs in the reference's canonical form. */
function engineUnread(u: UnreadSummary) {
  return canonicalUnread({
    count: u.count,
    streams: u.streams.map((x) => ({ streamId: x.streamId, topic: x.topic, ids: x.unreadMessageIds })),
    pms: u.pms.map((x) => ({ otherUserId: x.otherUserId, ids: x.unreadMessageIds })),
    huddles: u.huddles.map((x) => ({ userIdsString: x.userIdsString, ids: x.unreadMessageIds })),
    mentions: u.mentions,
  });
}

/** An action's outcome as compared: its error code (Zulip's texts are not), or "ok". */
function errorCode(outcome: object): string {
  return "error" in outcome ? `error ${(outcome as RefError).error.code}` : "ok";
}

class Mismatch extends Error {}

/** Coverage counters (printed with PARLEY_PROPERTY_STATS=1) to make sure the generators reach the interesting cases. */
const stats = new Map<string, number>();
function count(name: string): void {
  stats.set(name, (stats.get(name) ?? 0) + 1);
}

class Realm {
  /** The engine's clock (UNIX seconds), which `tick` operations move; the model follows it. */
  readonly clock = { now: 1_700_000_000 };
  readonly t: TempStore;
  readonly model: RefModel;
  readonly users: RefUser[] = [];
  readonly channelIds: number[] = [];
  readonly ownerId: number;
  readonly noiseOwnerId: number;
  readonly noiseChannelId: number;
  checks = 0;

  constructor(script: Script) {
    // Half the scripts defer every bulk bitmap write (index/deferred-writes.ts; the engine
    // does from 64 keys on, more users than a script has), so the model checks both
    // paths. Derived from the script: seeds and printed counterexamples replay as before.
    const deferAll = script.ops.length % 2 === 1;
    if (deferAll) count("deferred bitmap writes");
    this.t = tempStore({ now: () => this.clock.now, ...(deferAll ? { deferBitmapWritesFrom: 1 } : {}) });
    const s = this.t.store;
    // A noise realm first: its users, channel and messages interleave with the realm under test.
    const noise = s.createRealm({
      subdomain: "noise",
      name: "Noise",
      owner: { email: "owner@test.dev", fullName: "Olive Owner" },
    });
    this.noiseOwnerId = noise.owner.id;
    this.noiseChannelId = s.subscribe(noise.owner.id, { channels: [{ name: "general" }] }).createdChannelIds[0]!;
    const { realm, owner } = s.createRealm({
      subdomain: "",
      name: "Main",
      owner: { email: "owner@test.dev", fullName: "Olive Owner" },
    });
    this.model = new RefModel(realm.id, {
      firstUnreadIgnoresNegatedChannel: TOLERATE.has("first-unread-negated"),
      // parley's deliberate deviation (actions/move-topic-policies): strict with PARLEY_PROPERTY_TOLERATE=none.
      caseOnlyRenameKeepsPolicies: !TOLERATE.has("none"),
    });
    this.model.now = this.clock.now;
    this.ownerId = owner.id;
    this.model.addUser({
      id: owner.id,
      realmId: realm.id,
      email: owner.email,
      fullName: owner.fullName,
      role: ROLE_OWNER,
    });
    script.roles.forEach((role, i) => {
      const email = `user${i}@test.dev`;
      const u = s.createUser({ realmId: realm.id, email, fullName: NAMES[i]!, role: role as 200 | 300 | 400 | 600 });
      this.model.addUser({ id: u.id, realmId: realm.id, email, fullName: u.fullName, role });
    });
    this.users.push(...this.model.users.values());
    script.channels.forEach((spec, i) => {
      const inviteOnly = spec.kind !== 0;
      const historyPublicToSubscribers = spec.kind !== 2;
      const principals = [
        ...new Set([this.ownerId, ...spec.initial.map((x) => this.users[x % this.users.length]!.id)]),
      ];
      const res = s.subscribe(this.ownerId, {
        channels: [{ name: CHANNEL_NAMES[i]! }],
        principals,
        newChannel: { inviteOnly, historyPublicToSubscribers },
      });
      const id = res.createdChannelIds[0]!;
      this.channelIds.push(id);
      this.model.addChannel({ id, realmId: realm.id, name: CHANNEL_NAMES[i]!, inviteOnly, historyPublicToSubscribers });
      for (const p of principals) this.model.setSubscribed(p, id, true);
    });
  }

  get store(): Store {
    return this.t.store;
  }

  user(x: number): RefUser {
    return this.users[x % this.users.length]!;
  }
  channelId(x: number): number {
    return this.channelIds[x % this.channelIds.length]!;
  }

  fail(what: string, expected: unknown, actual: unknown): never {
    throw new Mismatch(
      `${what}\nexpected (reference): ${JSON.stringify(expected)}\nactual (engine):      ${JSON.stringify(actual)}\n--- operations ---\n${this.model.log.join("\n")}`,
    );
  }

  compare(what: string, expected: unknown, actual: unknown): void {
    this.checks++;
    if (JSON.stringify(expected) !== JSON.stringify(actual) && !tolerated(expected, actual))
      this.fail(what, expected, actual);
  }

  /** A message ID: existing (any realm) most of the time, otherwise one that does not exist. */
  messageId(a: number): number {
    const all = this.model.messages;
    const max = all.length === 0 ? 0 : all[all.length - 1]!.id;
    if (all.length === 0 || a % 5 === 4) return max + 1 + (a % 3);
    return all[a % all.length]!.id;
  }

  content(body: MessageBody): { text: string; words: string[]; mentioned: number[] } {
    const words = body.words.map((w) => VOCAB[w]!);
    let text = words.join(" ");
    const mentioned: number[] = [];
    if (body.mention !== null) {
      const target = this.user(body.mention);
      text += ` @**${target.fullName}**`;
      mentioned.push(target.id);
    }
    if (body.link) text += " https://example.com/page";
    return { text, words, mentioned };
  }

  term(spec: TermSpec, me: RefUser): WireTerm {
    const operator = OPERATORS[spec.op]!;
    const negated = spec.negated;
    const userOperand = (u: RefUser): string | number =>
      [u.email, u.id, u.email.toUpperCase(), String(u.id)][spec.form]!;
    switch (operator) {
      case "channel":
      case "stream": {
        const id = this.channelId(spec.a);
        const name = this.model.channel(id).name;
        return { operator, operand: [name, name.toUpperCase(), id, String(id)][spec.form]!, negated };
      }
      case "channels":
        return { operator, operand: "public", negated };
      case "topic":
        return { operator, operand: NARROW_TOPICS[spec.a % NARROW_TOPICS.length]!, negated };
      case "sender":
      case "dm-including":
      case "group-pm-with":
        return { operator, operand: userOperand(this.user(spec.a)), negated };
      case "dm":
      case "pm-with": {
        const picked = [this.user(spec.a), this.user(spec.b), this.user(spec.a >> 3)].slice(0, 1 + (spec.b % 3));
        if (spec.form === 3) picked.push(me);
        const unique = [...new Map(picked.map((u) => [u.id, u])).values()];
        return {
          operator,
          operand: spec.form % 2 === 0 ? unique.map((u) => u.id) : unique.map((u) => u.email).join(","),
          negated,
        };
      }
      case "is":
        return { operator, operand: IS_OPERANDS[spec.a % IS_OPERANDS.length]!, negated };
      case "has":
        return { operator, operand: "link", negated };
      case "in":
        return { operator, operand: spec.a % 2 === 0 ? "home" : "all", negated };
      case "search": {
        const words = [VOCAB[spec.a % VOCAB.length]!, VOCAB[spec.b % VOCAB.length]!].slice(0, 1 + (spec.form % 2));
        // Zulip folds every search term, negated or not, into one positive term; the engine does not: not generated.
        return { operator, operand: words.join(" "), negated: false };
      }
      case "id": {
        const id = this.messageId(spec.a);
        return { operator, operand: spec.form % 2 === 0 ? id : String(id), negated };
      }
    }
  }

  query(spec: QuerySpec): RefQuery {
    const me = this.user(spec.user);
    let anchor: RefAnchor;
    switch (spec.anchorKind) {
      case 0:
        anchor = "newest";
        break;
      case 1:
        anchor = "oldest";
        break;
      case 2:
      case 3:
        anchor = "first_unread";
        break;
      case 4:
        anchor = BIG_ANCHORS[spec.anchorValue % BIG_ANCHORS.length]!;
        break;
      case 5:
        anchor = this.messageId(spec.anchorValue) + ((spec.anchorValue >> 3) % 3) - 1;
        break;
      default:
        anchor = this.messageId(spec.anchorValue);
    }
    return {
      userId: me.id,
      narrow: spec.terms.map((t) => this.term(t, me)),
      anchor,
      numBefore: spec.numBefore,
      numAfter: spec.numAfter,
      includeAnchor: spec.includeAnchor,
    };
  }

  /** Applies one operation; the mutations (deletions are asynchronous in the Store) return a promise. */
  apply(op: Op): void | Promise<void> {
    const s = this.store;
    const m = this.model;
    switch (op.k) {
      case "sendChannel": {
        const sender = this.user(op.s);
        const channelId = this.channelId(op.c);
        if (!m.canSendToChannel(sender, m.channel(channelId))) {
          const r = capture(() =>
            s.sendMessage({
              senderId: sender.id,
              to: { type: "channel", channel: channelId, topic: "x" },
              content: "apple",
            }),
          );
          this.compare(`send to channel ${channelId} by ${sender.id} must be refused`, true, "error" in r);
          return;
        }
        const { text, words, mentioned } = this.content(op);
        const topic = SEND_TOPICS[op.topic]!;
        const { id } = s.sendMessage({
          senderId: sender.id,
          to: { type: "channel", channel: channelId, topic },
          content: text,
          readBySender: op.read,
        });
        m.recordMessage({
          id,
          realmId: m.realmId,
          senderId: sender.id,
          channelId,
          dmUsers: null,
          topic,
          contentWords: words,
          content: text,
          hasLink: op.link,
          mentionedUserIds: mentioned,
          readBySender: op.read,
        });
        return;
      }
      case "sendDm": {
        const sender = this.user(op.s);
        const to = op.to.map((x) => this.user(x));
        if (!sender.active || to.some((u) => !u.active && u.id !== sender.id)) return;
        const { text, words, mentioned } = this.content(op);
        const { id } = s.sendMessage({
          senderId: sender.id,
          to: { type: "direct", users: to.map((u) => (op.byEmail ? u.email : u.id)) },
          content: text,
          readBySender: op.read,
        });
        m.recordMessage({
          id,
          realmId: m.realmId,
          senderId: sender.id,
          channelId: null,
          dmUsers: [sender.id, ...to.map((u) => u.id)],
          topic: "",
          contentWords: words,
          content: text,
          hasLink: op.link,
          mentionedUserIds: mentioned,
          readBySender: op.read,
        });
        return;
      }
      case "sub": {
        const u = this.user(op.u);
        const channelId = this.channelId(op.c);
        if (!u.active || m.isSubscribed(u.id, channelId) === op.on) return;
        const name = m.channel(channelId).name;
        if (op.on) {
          // Zulip adds subscribers to a private channel only for someone with its content
          // (filter_stream_authorization_for_adding_subscribers): the owner if still
          // subscribed, else a member who is; with nobody left, nobody can.
          const actor = [this.ownerId, ...this.users.map((x) => x.id)].find(
            (id) =>
              m.user(id).active &&
              m.user(id).role !== ROLE_GUEST &&
              (!m.channel(channelId).inviteOnly || m.isSubscribed(id, channelId)),
          );
          if (actor === undefined) return;
          s.subscribe(actor, { channels: [{ name }], principals: [u.id] });
        } else s.unsubscribe(this.ownerId, [name], [u.id]);
        m.setSubscribed(u.id, channelId, op.on);
        return;
      }
      case "active": {
        const u = this.user(op.u);
        if (u.id === this.ownerId || u.active === op.on) return;
        s.setUserActive(u.id, op.on);
        m.setUserActive(u.id, op.on);
        return;
      }
      case "flags": {
        const u = this.user(op.u);
        const ids = op.ids.map((a) => this.messageId(a));
        const flag = FLAGS[op.flag]!;
        const operation = op.add ? "add" : "remove";
        const expected = m.updateFlags(u.id, ids, flag, operation);
        const actual = capture(() => s.updateFlags(u.id, ids, flag, operation));
        this.compare(`updateFlags(user=${u.id}, ${JSON.stringify(ids)}, ${flag}, ${operation})`, expected, actual);
        return;
      }
      case "topicPolicy": {
        const u = this.user(op.u);
        const channelId = this.channelId(op.c);
        const topic = POLICY_TOPICS[op.topic]!;
        if (!u.active) return;
        const r = capture(() => s.setTopicPolicy(u.id, channelId, topic, op.policy));
        const allowed = m.canSetTopicPolicy(u, m.channel(channelId), op.policy);
        this.compare(
          `setTopicPolicy(user=${u.id}, channel=${channelId}, policy=${op.policy}) refused iff no access`,
          !allowed,
          typeof r === "object" && r !== null,
        );
        if (allowed) m.setTopicPolicy(u.id, channelId, topic, op.policy);
        return;
      }
      case "mute": {
        const u = this.user(op.u);
        const channelId = this.channelId(op.c);
        if (!u.active || !m.isSubscribed(u.id, channelId)) return;
        s.setChannelMuted(u.id, channelId, op.on);
        m.setChannelMuted(u.id, channelId, op.on);
        return;
      }
      case "noise": {
        const { id } = s.sendMessage({
          senderId: this.noiseOwnerId,
          to: { type: "channel", channel: this.noiseChannelId, topic: "lunch" },
          content: "apple lunch",
        });
        m.recordMessage({
          id,
          realmId: -1,
          senderId: this.noiseOwnerId,
          channelId: this.noiseChannelId,
          dmUsers: null,
          topic: "lunch",
          contentWords: ["apple", "lunch"],
          hasLink: false,
          mentionedUserIds: [],
          readBySender: false,
        });
        return;
      }
      case "reopen":
        this.t.reopen();
        m.log.push("reopen");
        return;
      case "query": {
        const q = this.query(op.q);
        const expected = m.getMessages(q);
        const actual = capture(() =>
          normalizeResult(
            s.getMessages(q.userId, {
              narrow: q.narrow,
              anchor: q.anchor,
              numBefore: q.numBefore,
              numAfter: q.numAfter,
              includeAnchor: q.includeAnchor,
            }),
          ),
        );
        this.compare(`getMessages ${JSON.stringify(q)}`, expected, actual);
        if ("error" in expected) count(`query error ${expected.error.code} ${expected.error.message.slice(0, 40)}`);
        else {
          count(expected.messages.length > 0 ? "query nonempty" : "query empty");
          if (expected.messages.some((v) => v.flags.includes("historical"))) count("query with historical flags");
          if (expected.messages.some((v) => v.flags.includes("starred"))) count("query with starred");
          if (expected.foundAnchor) count("found_anchor");
          if (q.anchor === "first_unread" && expected.anchor < 10 ** 16) count("first_unread found");
          if (
            q.anchor === "first_unread" &&
            q.narrow.some((t) => t.negated && (t.operator === "channel" || t.operator === "stream"))
          )
            count("first_unread with negated channel");
          for (const t of q.narrow)
            count(
              `term ${t.negated ? "-" : ""}${t.operator}${typeof t.operand === "string" && ["is", "in"].includes(t.operator) ? ":" + t.operand : ""}${expected.messages.length > 0 ? " nonempty" : ""}`,
            );
        }
        return;
      }
      case "narrowFlags": {
        const q = this.query(op.q);
        const flag = FLAGS[op.flag]!;
        const operation = op.add ? "add" : "remove";
        const expected = m.updateFlagsForNarrow(q, flag, operation);
        const actual = capture(() =>
          s.updateFlagsForNarrow(
            q.userId,
            {
              narrow: q.narrow,
              anchor: q.anchor,
              numBefore: q.numBefore,
              numAfter: q.numAfter,
              includeAnchor: q.includeAnchor,
            },
            flag,
            operation,
          ),
        );
        this.compare(`updateFlagsForNarrow ${JSON.stringify(q)} ${flag} ${operation}`, expected, actual);
        if ("error" in expected) count(`narrowFlags error ${expected.error.code}`);
        else {
          count(expected.processedCount > 0 ? "narrowFlags processed>0" : "narrowFlags processed=0");
          if (expected.updatedCount > 0) count(`narrowFlags updated>0 ${operation} ${flag}`);
        }
        this.checkAllFlags(q.userId);
        return;
      }
      case "edit":
      case "move":
      case "resolve":
      case "delete":
      case "deleteTopic":
      case "tick":
        return this.mutate(op);
    }
  }

  /**
   * A message for a mutation: mostly a live one of the realm (for moves, two in three
   * times a channel message), sometimes a deleted or a missing one.
   */
  mutationTarget(a: number, preferChannel = false): number {
    const all = this.model.realmMessages();
    const inChannels = all.filter((x) => x.channelId !== null);
    const live = preferChannel && a % 3 !== 0 && inChannels.length > 0 ? inChannels : all;
    const deleted = this.model.deletedIds;
    if (a % 10 === 9 && deleted.length > 0) return deleted[a % deleted.length]!;
    if (live.length === 0 || a % 10 === 8) return this.model.nextMessageId() + (a % 3);
    return live[a % live.length]!.id;
  }

  /** The acting user: the message's sender when asked and possible (it is a person of the realm), else user `u`. */
  actor(u: number, bySender: boolean, messageId: number): RefUser {
    const sender = this.model.message(messageId)?.senderId;
    const person = sender === undefined ? undefined : this.model.users.get(sender);
    return bySender && person ? person : this.user(u);
  }

  async mutate(op: MutationOp): Promise<void> {
    const s = this.store;
    const m = this.model;
    if (op.k === "tick") {
      this.clock.now += TICKS[op.s]!;
      m.now = this.clock.now;
      m.log.push(`tick +${TICKS[op.s]!} -> ${m.now}`);
      return;
    }
    if (op.k === "deleteTopic") {
      const actor = this.user(op.u);
      if (!actor.active) return;
      const channelId = this.channelId(op.c);
      const topic = DELETE_TOPICS[op.topic]!;
      const expected = refDeleteTopic(m, actor.id, channelId, topic);
      const actual = await captureAsync(() => s.deleteTopic(actor.id, channelId, topic));
      this.compare(
        `deleteTopic(actor=${actor.id}, channel=${channelId}, ${JSON.stringify(topic)})`,
        errorCode(expected),
        errorCode(actual),
      );
      count(`deleteTopic ${"error" in expected ? expected.error.code : "ok"}`);
      this.checkAfterMutation([channelId], [topic], []);
      return;
    }
    const messageId = this.mutationTarget(op.m, op.k === "move" || op.k === "resolve");
    const actor = this.actor(op.u, op.bySender, messageId);
    if (!actor.active) return;
    const target = m.message(messageId);
    const channels = new Set<number>(target?.channelId != null ? [target.channelId] : []);
    const topics = new Set<string>(target && target.channelId !== null ? [target.topic] : []);
    if (op.k === "delete") {
      const expected = refDeleteMessage(m, actor.id, messageId);
      const actual = await captureAsync(async () => {
        await s.deleteMessage(actor.id, messageId);
        return { ok: true };
      });
      this.compare(`deleteMessage(actor=${actor.id}, ${messageId})`, errorCode(expected), errorCode(actual));
      count(`delete ${"error" in expected ? expected.error.code : "ok"}`);
      this.checkAfterMutation([...channels], [...topics], []);
      return;
    }
    const req = this.updateRequest(op, messageId);
    if (req.channelId !== undefined) channels.add(req.channelId);
    if (req.topic !== undefined) topics.add(req.topic);
    const expected = refUpdateMessage(m, actor.id, messageId, req);
    const actual = await captureAsync(async () => {
      await s.updateMessageAsync(actor.id, messageId, {
        ...(req.content !== undefined ? { content: req.content.text } : {}),
        ...(req.topic !== undefined ? { topic: req.topic } : {}),
        ...(req.channelId !== undefined ? { channelId: req.channelId } : {}),
        propagateMode: req.propagateMode,
        sendNotificationToOldThread: false,
        sendNotificationToNewThread: false,
        ...(req.prevContentSha256 !== undefined ? { prevContentSha256: req.prevContentSha256 } : {}),
      });
      return { ok: true };
    });
    this.compare(
      `updateMessage(actor=${actor.id}, ${messageId}, ${JSON.stringify(req)})`,
      errorCode(expected),
      errorCode(actual),
    );
    if ("error" in expected) count(`${op.k} refused ${expected.error.code} ${expected.error.message.slice(0, 30)}`);
    else {
      count(`${op.k} ok ${req.propagateMode}${req.channelId !== undefined ? " +channel" : ""}`);
      if (expected.messageIds.length > 1) count(`${op.k} moved several`);
      if (expected.noticeId !== null) count("resolve notice sent");
      if (expected.deletedNoticeId !== null) count("resolve notice undone");
    }
    this.checkAfterMutation([...channels], [...topics], req.content?.words ?? []);
  }

  updateRequest(op: Extract<MutationOp, { k: "edit" | "move" | "resolve" }>, messageId: number): RefUpdateRequest {
    const message = this.model.message(messageId);
    const propagateMode = PROPAGATE_MODES[op.mode]!;
    const sha = "sha" in op ? op.sha : 0;
    const prev =
      sha === 1 && message
        ? { prevContentSha256: sha256(message.content) }
        : sha === 2
          ? { prevContentSha256: "0".repeat(64) }
          : {};
    if (op.k === "resolve") {
      const current = message?.topic ?? "lunch";
      const topic = current.startsWith("✔ ") ? current.replace(/^[✔ ]+/, "") : `✔ ${current}`;
      return { topic, propagateMode } satisfies RefUpdateRequest;
    }
    // An edit's topic is a move too: not sent when moves are left out (PARLEY_PROPERTY_MUTATIONS).
    const topic = op.topic === null || !MUTATIONS.has("move") ? {} : { topic: MOVE_TOPICS[op.topic]! };
    if (op.k === "edit") {
      const { text, words, mentioned } = this.content(op.body);
      const content = { text, words, hasLink: op.body.link, mentionedUserIds: mentioned };
      return { content, ...topic, propagateMode, ...prev } satisfies RefUpdateRequest;
    }
    // Another channel than the message's own (Zulip counts naming the same one as a move).
    const others = this.channelIds.filter((c) => c !== message?.channelId);
    const channel = op.c === null || others.length === 0 ? {} : { channelId: others[op.c % others.length]! };
    return { ...topic, ...channel, propagateMode, ...prev } satisfies RefUpdateRequest;
  }

  /**
   * After an edit, move or deletion (done or refused): for every active user, the
   * combined feed, unread_msgs, the narrows of the channels and topics involved (by
   * first_unread and newest), and the narrows an edit or move can change.
   */
  checkAfterMutation(channelIds: readonly number[], topics: readonly string[], words: readonly string[]): void {
    const term = (operator: string, operand: string | number): WireTerm => ({ operator, operand, negated: false });
    // Whole narrows (1000 each side of the anchor): first_unread where the anchor can move, newest elsewhere.
    const narrows: [WireTerm[], RefAnchor][] = [
      [[], "first_unread"],
      [[term("is", "resolved")], "newest"],
      [[term("is", "mentioned")], "newest"],
      [[term("is", "followed")], "newest"],
      [[term("in", "home")], "first_unread"],
      ...[...new Set(words)].map((w): [WireTerm[], RefAnchor] => [[term("search", w)], "newest"]),
    ];
    for (const c of new Set(channelIds)) {
      narrows.push([[term("channel", c)], "first_unread"]);
      for (const t of new Set(topics)) narrows.push([[term("channel", c), term("topic", t.trim())], "newest"]);
    }
    for (const u of this.users) {
      if (!u.active) continue;
      for (const [narrow, anchor] of narrows) {
        const q: RefQuery = { userId: u.id, narrow, anchor, numBefore: 1000, numAfter: 1000, includeAnchor: true };
        const actual = capture(() =>
          normalizeResult(this.store.getMessages(u.id, { narrow, anchor, numBefore: 1000, numAfter: 1000 })),
        );
        this.compare(`after mutation: getMessages ${JSON.stringify(q)}`, this.model.getMessages(q), actual);
      }
      const unread = engineUnread(this.store.unreadSummary(u.id));
      this.compare(`after mutation: unread_msgs of user ${u.id}`, refUnreadSummary(this.model, u.id), unread);
    }
  }

  /** Every flag of `userId` on every message they have a row for (and row-less accessible ones). */
  checkAllFlags(userId: number): void {
    const me = this.model.user(userId);
    if (!me.active) return;
    const rows = this.model.rowsOf(userId);
    for (const msg of this.model.realmMessages()) {
      if (!rows.has(msg.id) && !this.model.canAccessRowless(me, msg)) continue;
      const actual = capture(() => [...this.store.getMessage(userId, msg.id).flags]);
      this.compare(`flags of message ${msg.id} for user ${userId}`, this.model.flagsOf(userId, msg.id), actual);
    }
  }

  /** End of script: the combined feed of every user, and every user's flags. */
  finalChecks(): void {
    for (const u of this.users) {
      const q: RefQuery = {
        userId: u.id,
        narrow: [],
        anchor: "newest",
        numBefore: 1000,
        numAfter: 0,
        includeAnchor: true,
      };
      const actual = capture(() =>
        normalizeResult(this.store.getMessages(u.id, { anchor: "newest", numBefore: 1000, numAfter: 0 })),
      );
      this.compare(`combined feed of user ${u.id}`, this.model.getMessages(q), actual);
      this.checkAllFlags(u.id);
      if (!u.active) continue;
      const unread = engineUnread(this.store.unreadSummary(u.id));
      this.compare(`unread_msgs of user ${u.id}`, refUnreadSummary(this.model, u.id), unread);
    }
  }
}

async function runScript(script: Script, mode: Mode): Promise<number> {
  const realm = new Realm(script);
  try {
    for (const op of script.ops) await realm.apply(op);
    for (const [i, q] of script.final.entries())
      await realm.apply(mode === "flags" ? { k: "narrowFlags", q, flag: i % 3, add: i % 2 === 0 } : { k: "query", q });
    realm.finalChecks();
    return realm.checks;
  } finally {
    realm.t.cleanup();
  }
}

async function check(mode: Mode): Promise<number> {
  let checks = 0;
  const params = { seed: SEED, numRuns: mode === "mutate" ? MUTATION_RUNS : RUNS };
  console.log(
    `[narrow.property ${mode}] seed=${SEED} runs=${params.numRuns} (override: PARLEY_PROPERTY_SEED / PARLEY_PROPERTY_RUNS)`,
  );
  // A counterexample as printed (one script, or the array fast-check prints) runs alone.
  const replay = REPLAY;
  const examples = replay === undefined ? [] : [JSON.parse(replay) as Script | [Script]];
  await fc.assert(
    fc.asyncProperty(scriptArb(mode), async (script) => {
      checks += await runScript(script, mode);
    }),
    {
      ...params,
      ...(replay !== undefined
        ? { examples: examples.map((e) => (Array.isArray(e) ? e : [e]) as [Script]), numRuns: 1 }
        : {}),
    },
  );
  if (process.env["PARLEY_PROPERTY_STATS"]) {
    console.log(
      [...stats.entries()]
        .sort()
        .map(([k, v]) => `${String(v).padStart(6)} ${k}`)
        .join("\n"),
    );
  }
  return checks;
}

/** A printed counterexample to run alone (PARLEY_PROPERTY_REPLAY): too short for the check counts below. */
const REPLAY = process.env["PARLEY_PROPERTY_REPLAY"];
const minimumChecks = (n: number): number => (REPLAY === undefined ? n : 0);

/** A hang guard, not a speed limit: grows with PARLEY_PROPERTY_RUNS (shrinking takes long on a busy machine). */
const TIMEOUT = Math.max(300_000, RUNS * 500);

describe("narrow engine vs. brute-force Zulip reference", () => {
  const staging = { ...MOVE_STAGING };
  beforeAll(() => Object.assign(MOVE_STAGING, { minMessages: 2, chunkMessages: 2 }));
  afterAll(() => Object.assign(MOVE_STAGING, staging));

  it(
    "getMessages (and flag changes by IDs) match the reference",
    async () => {
      const checks = await check("query");
      expect(checks).toBeGreaterThan(minimumChecks(RUNS * 5));
    },
    TIMEOUT,
  );

  it(
    "updateFlagsForNarrow matches the reference",
    async () => {
      const checks = await check("flags");
      expect(checks).toBeGreaterThan(minimumChecks(RUNS * 5));
    },
    TIMEOUT,
  );

  it(
    "edits, moves, resolves and deletions (done and refused) match the reference",
    async () => {
      const checks = await check("mutate");
      expect(checks).toBeGreaterThan(minimumChecks(MUTATION_RUNS * 50));
    },
    TIMEOUT,
  );
});
