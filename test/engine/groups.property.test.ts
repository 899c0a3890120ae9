/**
 * Property: after random group edits through the engine's actions (members,
 * subgroups, deactivation; cycles refused), every group's membership as the engine's
 * permission checks and group mentions see it equals a brute-force transitive closure
 * over the stored groups (a deactivated group contains nobody; inactive users are in
 * no group). The cached member sets mentions read (StoreState.groupMembers) are asked
 * after every step too: a step that left one stale fails there.
 */
import { describe, expect, it } from "vitest";
import { isGroupMember } from "../../src/engine/access.js";
import { EngineError } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { seedRealm, tempStore } from "../support/temp-store.js";

function rng(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function closure(
  groups: Map<number, { members: number[]; subgroups: number[]; deactivated: boolean; systemRole: string | null }>,
  id: number,
  seen = new Set<number>(),
): Set<number> {
  const out = new Set<number>();
  const g = groups.get(id);
  if (!g || g.deactivated || seen.has(id)) return out;
  seen.add(id);
  for (const m of g.members) out.add(m);
  for (const s of g.subgroups) for (const m of closure(groups, s, seen)) out.add(m);
  return out;
}

describe("group membership after random edits", () => {
  for (const seed of [1, 2, 3]) {
    it(`equals the transitive closure (seed ${seed})`, () => {
      const t = tempStore();
      try {
        const s = t.store;
        const w = seedRealm(s);
        const random = rng(seed);
        const users = [w.owner, w.alice, w.bob, w.guest].map((u) => u.id);
        const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
        const ids: number[] = [];
        for (let i = 0; i < 8; i++)
          ids.push(s.createGroup(w.owner.id, { name: `g${i}`, members: users.filter(() => random() < 0.3) }).id);
        for (let step = 0; step < 150; step++) {
          const g = pick(ids);
          const r = random();
          try {
            if (r < 0.3) s.updateGroupSubgroups(w.owner.id, g, [pick(ids)], []);
            else if (r < 0.45) s.updateGroupSubgroups(w.owner.id, g, [], [pick(ids)]);
            else if (r < 0.7) s.updateGroupMembers(w.owner.id, g, [pick(users)], []);
            else if (r < 0.9) s.updateGroupMembers(w.owner.id, g, [], [pick(users)]);
            else if (r < 0.93) s.deactivateGroup(w.owner.id, g);
            else if (r < 0.96) s.updateGroup(w.owner.id, g, { deactivated: false });
            else {
              // Bob leaves or comes back: inactive users are in no group.
              if (internals(s).users.get(w.bob.id)!.isActive) s.deactivateUser(w.owner.id, w.bob.id);
              else s.reactivateUser(w.owner.id, w.bob.id);
            }
          } catch (error) {
            if (!(error instanceof EngineError) || error.code === "INTERNAL_SERVER_ERROR") throw error;
          }
          const state = internals(s);
          const groups = new Map(
            [...state.groups].map(([id, g]) => [
              id,
              { members: g.members, subgroups: g.subgroups, deactivated: g.deactivated, systemRole: g.systemRole },
            ]),
          );
          const active = (userId: number) => state.users.get(userId)!.isActive;
          for (const id of ids) {
            const expected = closure(groups, id);
            // Read before isGroupMember: a set cached at an earlier step must have been dropped by this one's change.
            const cached = state.groupMembers(id);
            for (const userId of users) {
              const member = expected.has(userId) && active(userId);
              expect([step, id, userId, isGroupMember(state, id, state.users.get(userId)!)]).toEqual([
                step,
                id,
                userId,
                member,
              ]);
              expect([step, id, userId, cached.has(userId)]).toEqual([step, id, userId, member]);
            }
          }
        }
        // Mentions see the same membership: every active group mentioned, flags for its closure among recipients.
        const state = internals(s);
        const groups = new Map(
          [...state.groups].map(([id, g]) => [
            id,
            { members: g.members, subgroups: g.subgroups, deactivated: g.deactivated, systemRole: g.systemRole },
          ]),
        );
        for (const id of ids) {
          const group = state.groups.get(id)!;
          const { id: messageId } = s.sendMessage({
            senderId: w.owner.id,
            to: { type: "channel", channel: w.general.id, topic: "m" },
            content: `@*${group.name}*`,
          });
          const expected = closure(groups, id);
          for (const userId of [w.owner.id, w.alice.id, w.bob.id].filter((u) => state.users.get(u)!.isActive)) {
            expect([id, userId, s.getMessage(userId, messageId).flags.includes("group_mentioned")]).toEqual([
              id,
              userId,
              expected.has(userId),
            ]);
          }
        }
      } finally {
        t.cleanup();
      }
    });
  }
});
