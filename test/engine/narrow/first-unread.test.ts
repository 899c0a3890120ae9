/**
 * The per-user first-unread position (narrow/first-unread.ts) stays equal to
 * min(personal \ read) computed from scratch, through a seeded sequence of sends,
 * direct messages, read and unread marks (unread of an older message moves it back),
 * stars of unreceived messages (historical rows), unsubscribes and resubscribes, and
 * reopening; and the store's first_unread anchors and is:unread windows, which start
 * from it, equal the brute-force answers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RoaringBitmap32 } from "../../../src/engine/index/bitmap-store.js";
import { key } from "../../../src/engine/index/keys.js";
import { firstUnreadBruteForce, firstUnreadPosition } from "../../../src/engine/narrow/first-unread.js";
import { mutedSet, type PlanContext } from "../../../src/engine/narrow/plan.js";
import { NEWEST_ANCHOR } from "../../../src/engine/narrow/window.js";
import { ReceivedSets } from "../../../src/engine/received.js";
import { internals } from "../../../src/engine/internal.js";
import type { Store } from "../../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore | null = null;
afterEach(() => {
  t?.cleanup();
  t = null;
});

/** sfc32-free tiny LCG: the sequence only needs to be fixed, not good. */
function prng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

describe("first-unread position", () => {
  it("equals min(personal \\ read) after every kind of change, and anchors windows exactly", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const users = [w.owner, w.alice, w.bob];
    const random = prng(12);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    // Long-lived contexts, like the store's own: memos survive between checks.
    let memoContexts = new Map<number, PlanContext<ReturnType<typeof internals>>>();
    const contexts = (store: Store) => {
      const state = internals(store);
      const received = new ReceivedSets(state);
      return new Map(
        users.map((u) => [u.id, { state, received, user: state.users.get(u.id)! } as PlanContext<typeof state>]),
      );
    };
    memoContexts = contexts(t.store);
    const sent: number[] = [];
    let subscribed = true;
    let checks = 0;

    const check = () => {
      const fresh = contexts(t!.store);
      for (const u of users) {
        const brute = firstUnreadBruteForce(fresh.get(u.id)!);
        expect(firstUnreadPosition(memoContexts.get(u.id)!), `user ${u.id}`).toBe(brute);
        // The store's anchor: first unread outside muted topics (none muted here).
        const ctx = fresh.get(u.id)!;
        const unread = RoaringBitmap32.andNot(
          ctx.received.personal(u.id),
          ctx.state.bitmaps.get(key.userFlag(u.id, "read")),
        ).andNotInPlace(mutedSet(ctx, null));
        const window = t!.store.getMessageWindow(u.id, {
          narrow: [{ operator: "is", operand: "unread" }],
          anchor: "first_unread",
          numBefore: 2,
          numAfter: 4,
        });
        expect(window.anchor).toBe(unread.size === 0 ? NEWEST_ANCHOR : unread.minimum());
        const all = RoaringBitmap32.andNot(
          ctx.received.personal(u.id),
          ctx.state.bitmaps.get(key.userFlag(u.id, "read")),
        ).toArray();
        const at = all.findIndex((id) => id >= window.anchor!);
        const expected = at === -1 ? all.slice(-2) : [...all.slice(Math.max(0, at - 2), at), ...all.slice(at, at + 5)];
        expect(window.ids).toEqual(expected);
        checks++;
      }
    };

    /** A flag change; IDs the user cannot access make it a rejected request, which changes nothing. */
    const flags = (userId: number, ids: number[], flag: string, op: string) => {
      try {
        t!.store.updateFlags(userId, ids, flag, op);
      } catch (error) {
        if (!(error instanceof Error) || !/Invalid message/.test(error.message)) throw error;
      }
    };

    for (let step = 0; step < 160; step++) {
      const store = t.store;
      const r = random();
      if (r < 0.3 || sent.length < 5) {
        const sender = pick(users);
        if (sender.id === w.bob.id && !subscribed) continue;
        sent.push(
          store.sendMessage({
            senderId: sender.id,
            to: {
              type: "channel",
              channel: pick(["general", "secret"]) === "secret" && sender.id !== w.bob.id ? "secret" : "general",
              topic: pick(["a", "b"]),
            },
            content: `m${step}`,
            client: "test",
          }).id,
        );
      } else if (r < 0.4) {
        const [from, to] = [pick(users), pick(users)];
        sent.push(
          store.sendMessage({
            senderId: from.id,
            to: { type: "direct", users: [to.id] },
            content: `dm${step}`,
            client: "test",
          }).id,
        );
      } else if (r < 0.6) {
        const u = pick(users);
        flags(
          u.id,
          sent.filter(() => random() < 0.4),
          "read",
          "add",
        );
      } else if (r < 0.75) {
        // Mark-unread, often of old messages: the position moves back.
        const u = pick(users);
        flags(
          u.id,
          sent.filter(() => random() < 0.15),
          "read",
          "remove",
        );
      } else if (r < 0.82) {
        // Starring a message bob never received adds a historical row to his history.
        flags(w.bob.id, [pick(sent)], "starred", "add");
      } else if (r < 0.9) {
        if (subscribed) store.unsubscribe(w.bob.id, ["general"]);
        else store.subscribe(w.bob.id, { channels: [{ name: "general" }] });
        subscribed = !subscribed;
      } else if (r < 0.95) {
        t.reopen();
        memoContexts = contexts(t.store);
      }
      check();
    }
    expect(checks).toBeGreaterThan(300);
  });
});
