/**
 * A narrowed event queue receives a new message exactly when GET /messages with the
 * same narrow returns it to the same user: random realms (channels, topics in several
 * scripts and cases, words that stem alike, links, mentions, stars, muted and followed
 * topics), random narrows of every operator GET /messages takes, negated or not.
 * Queues live in a real EventHub over the store (no HTTP); GET is store.getMessages
 * with message_ids, the bitmap plan. A user's unnarrowed queue says whether the
 * message reached them at all (only then can a narrowed one).
 *
 * Reproducible: PARLEY_PROPERTY_SEED / PARLEY_PROPERTY_RUNS.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { EngineError, type Store, type User } from "../../src/engine/index.js";
import { EventHub, ManualClock, type NarrowTermInput } from "../../src/realtime/index.js";
import type { EventQueue, QueueOptions } from "../../src/realtime/queue.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

const SEED = Number(process.env["PARLEY_PROPERTY_SEED"] ?? 20261127);
const RUNS = Number(process.env["PARLEY_PROPERTY_RUNS"] ?? 40);

const TOPICS = ["plans", "Plans", "ΟΔΟΣ", "οδοσ", "οδός", "✔ done", "misc"];
const WORDS = [
  "planning ahead",
  "an explanation",
  "plans",
  "plan",
  "ΟΔΟΣ",
  "οδοσ",
  "see https://example.com/plan",
  "@**Alice**",
  "@**all**",
  "hello world",
  "Running runners ran",
  '"exact phrase" here',
  "a phrase that is exact",
  "example.com",
];
const SEARCHES = [
  "plans",
  "plan",
  "explanation",
  "ΟΔΟΣ",
  "οδοσ",
  "example",
  "example.com",
  "run",
  '"exact phrase"',
  "hello plans",
  "ahead",
];

type Term = { operator: string; operand: string | number; negated?: boolean };

function options(narrow: readonly NarrowTermInput[]): QueueOptions {
  return {
    eventTypes: ["message"],
    allPublicStreams: false,
    narrow,
    applyMarkdown: false,
    clientGravatar: false,
    emptyTopicName: true,
    streamTypingNotifications: false,
    includeDeactivatedGroups: false,
    presenceFormat: "modern",
    idleTimeoutSecs: 600,
  };
}

function receivedIds(queue: EventQueue): Set<number> {
  const events = JSON.parse(queue.eventsJson()) as { type: string; message?: { id: number } }[];
  return new Set(events.filter((e) => e.type === "message").map((e) => e.message!.id));
}

let t: TempStore | null = null;
afterEach(() => {
  t?.cleanup();
  t = null;
});

describe("one narrow meaning: event queues and GET /messages", () => {
  it("a narrowed queue gets a new message exactly when GET /messages with that narrow returns it", () => {
    const termArb = (seed: ReturnType<typeof seedRealm>): fc.Arbitrary<Term> =>
      fc
        .tuple(
          fc.oneof(
            fc.constantFrom<Term>(
              { operator: "channel", operand: "general" },
              { operator: "stream", operand: "secret" },
              { operator: "channel", operand: seed.general.id },
              { operator: "sender", operand: "alice@test.dev" },
              { operator: "sender", operand: seed.bob.id },
              { operator: "dm", operand: "alice@test.dev" },
              { operator: "dm-including", operand: "bob@test.dev" },
              { operator: "mentions", operand: seed.alice.id },
              { operator: "in", operand: "home" },
              { operator: "channels", operand: "public" },
            ),
            fc.constantFrom(...TOPICS).map((topic): Term => ({ operator: "topic", operand: topic })),
            fc.constantFrom(...SEARCHES).map((q): Term => ({ operator: "search", operand: q })),
            fc
              .constantFrom(
                "dm",
                "private",
                "starred",
                "unread",
                "mentioned",
                "alerted",
                "resolved",
                "followed",
                "muted",
              )
              .map((w): Term => ({ operator: "is", operand: w })),
            fc
              .constantFrom("link", "image", "attachment", "reaction")
              .map((w): Term => ({ operator: "has", operand: w })),
          ),
          fc.boolean(),
        )
        .map(([term, negated]) => ({ ...term, negated }));

    let deliveredInAll = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (realmSeed) => {
        t?.cleanup();
        t = tempStore();
        const store: Store = t.store;
        const seed = seedRealm(store);
        const users: User[] = [seed.owner, seed.alice, seed.bob, seed.guest];
        const rng = fc.sample(fc.integer({ min: 0, max: 1_000_000 }), { seed: realmSeed, numRuns: 400 });
        let r = 0;
        const pick = <T>(xs: readonly T[]): T => xs[rng[r++ % rng.length]! % xs.length]!;
        const narrows = fc.sample(fc.array(termArb(seed), { minLength: 1, maxLength: 3 }), {
          seed: realmSeed,
          numRuns: 12,
        });

        // Some history first, with stars and topic policies, so is:starred/followed/muted and in:home have something to
        // say.
        const hub = new EventHub(store, { clock: new ManualClock(), gcIntervalSecs: 3600 });
        try {
          for (let i = 0; i < 6; i++) send(store, seed, pick, users);
          store.setTopicPolicy(seed.alice.id, seed.general.id, pick(TOPICS), 1);
          store.setTopicPolicy(seed.alice.id, seed.general.id, pick(TOPICS), 3);
          store.setChannelMuted(seed.bob.id, seed.general.id, true);
          store.setTopicPolicy(seed.bob.id, seed.general.id, pick(TOPICS), 2);

          const queues: { user: User; narrow: Term[]; queue: EventQueue }[] = [];
          const plain = new Map<number, EventQueue>();
          for (const user of users) plain.set(user.id, hub.register(user, options([])));
          for (const narrow of narrows) {
            for (const user of users) {
              let queue: EventQueue;
              try {
                queue = hub.register(user, options(narrow));
              } catch (error) {
                // Refused at register: GET /messages refuses the same narrow with the same error.
                expect(error).toBeInstanceOf(EngineError);
                expect(() =>
                  store.getMessages(user.id, { narrow, anchor: "newest", numBefore: 1, numAfter: 0 }),
                ).toThrow((error as Error).message);
                continue;
              }
              queues.push({ user, narrow, queue });
            }
          }

          // GET is asked right after each send, before later stars and reactions change its answer.
          const expected = new Map<EventQueue, Set<number>>(queues.map(({ queue }) => [queue, new Set<number>()]));
          const sent: number[] = [];
          for (let i = 0; i < 8; i++) {
            const id = send(store, seed, pick, users);
            sent.push(id);
            for (const { user, narrow, queue } of queues) {
              if (store.getMessages(user.id, { narrow, messageIds: [id] }).messages.length === 1)
                expected.get(queue)!.add(id);
            }
            if (i % 3 === 2) store.updateFlags(store.findMessageRecord(id)!.senderId, [id], "starred", "add");
            if (i % 2 === 1 && store.findMessageRecord(id)!.recipient.type === "channel")
              store.addReaction(seed.owner.id, id, { emojiName: "smile" });
          }
          let delivered = 0;
          for (const { user, narrow, queue } of queues) {
            const got = receivedIds(queue);
            const reached = receivedIds(plain.get(user.id)!);
            for (const id of sent) {
              const want = reached.has(id) && expected.get(queue)!.has(id);
              if (want) delivered++;
              expect(
                got.has(id),
                `user ${user.id}, narrow ${JSON.stringify(narrow)}, message ${id}: ${JSON.stringify(store.findMessageRecord(id))}`,
              ).toBe(want);
            }
          }
          deliveredInAll += delivered;
        } finally {
          hub.close();
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The narrows are not all vacuous: many narrowed deliveries were checked.
    expect(deliveredInAll).toBeGreaterThan(RUNS * 5);
  });
});

function send(
  store: Store,
  seed: ReturnType<typeof seedRealm>,
  pick: <T>(xs: readonly T[]) => T,
  users: readonly User[],
): number {
  const content = `${pick(WORDS)} ${pick(WORDS)}`;
  if (pick([0, 1, 2, 3]) === 0) {
    const sender = pick([seed.owner, seed.bob, seed.alice]);
    const others = users.filter((u) => u.id !== sender.id && u.id !== seed.guest.id);
    return store.sendMessage({
      senderId: sender.id,
      to: { type: "direct", users: [pick(others).id] },
      content,
      client: "API",
    }).id;
  }
  const channel = pick(["general", "general", "secret"]);
  const sender = channel === "secret" ? pick([seed.owner, seed.alice]) : pick([seed.owner, seed.alice, seed.bob]);
  const message = store.sendMessage({
    senderId: sender.id,
    to: { type: "channel", channel, topic: pick(TOPICS) },
    content,
    client: "API",
  });
  return message.id;
}
