/**
 * Withdrawn rows written as groups (index/withdrawn-rows.ts): a topic moved into a
 * channel with public history is withdrawn from each of its members, and moving it out
 * again, part of it elsewhere, starring it and deleting from it must leave every reader
 * exactly where the per-user form (what stores written before groups hold) leaves them.
 * Two stores go through the same steps, one writing groups and one per-user bitmaps, and
 * every user's narrows, unread messages, first unread and flags are compared after each
 * step, after a reopen, and with verify clean.
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import type { Store, User } from "../../../src/engine/index.js";
import { WITHDRAWN_GROUPING } from "../../../src/engine/actions/move-rows.js";
import { RoaringBitmap32 } from "../../../src/engine/index/bitmap-store.js";
import {
  addWithdrawnGroup,
  persistedWithdrawnGroups,
  withdrawnGroups,
} from "../../../src/engine/index/withdrawn-rows.js";
import { key } from "../../../src/engine/index/keys.js";
import { hasRow } from "../../../src/engine/access.js";
import { getMessageRecord } from "../../../src/engine/storage/message-records.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { followerView } from "../../support/follower-view.js";
import { openFollower } from "../../../src/index.js";
import { moveMessages } from "../../support/move.js";
import { accessibleAmong } from "../../../src/engine/actions/move-messages.js";

const stores: TempStore[] = [];
afterEach(() => {
  for (const t of stores.splice(0)) t.cleanup();
  WITHDRAWN_GROUPING.minUsers = 32;
});

/** Members of "general" beyond the seed's: enough to share a withdrawn set as a group. */
const EXTRA_USERS = 36;

function build(t: TempStore) {
  const seeded = seedRealm(t.store);
  const { realm, owner } = seeded;
  const extra: User[] = [];
  for (let i = 0; i < EXTRA_USERS; i++)
    extra.push(t.store.createUser({ realmId: realm.id, email: `u${i}@test.dev`, fullName: `User ${i}` }));
  t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: extra.map((u) => u.id) });
  t.store.subscribe(owner.id, { channels: [{ name: "lounge" }], principals: extra.slice(0, 20).map((u) => u.id) });
  const lounge = internals(t.store).channelByName.get(`${realm.id}:LOUNGE`)!;
  const send = (sender: User, channel: string, topic: string, content: string) =>
    t.store.sendMessage({ senderId: sender.id, to: { type: "channel", channel, topic }, content, client: "website" })
      .id;
  return { ...seeded, extra, lounge, send };
}

type World = ReturnType<typeof build>;

function tryIds(store: Store, userId: number, narrow: unknown): number[] | "no access" {
  try {
    return store
      .getMessages(userId, { narrow, anchor: "newest", numBefore: 1000, numAfter: 0 })
      .messages.map((v) => v.message.id);
  } catch {
    return "no access";
  }
}

function flags(store: Store, userId: number, id: number): readonly string[] | "no access" {
  try {
    return [...store.getMessage(userId, id).flags].sort();
  } catch {
    return "no access";
  }
}

/** What each user sees of the realm's messages. */
function observe(store: Store, w: World, messageIds: readonly number[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const user of [w.owner, w.alice, w.bob, w.guest, ...w.extra]) {
    const unread = store.unreadSummary(user.id);
    out[user.email] = {
      all: tryIds(store, user.id, []),
      general: tryIds(store, user.id, [{ operator: "channel", operand: w.general.id }]),
      secret: tryIds(store, user.id, [{ operator: "channel", operand: w.secret.id }]),
      lounge: tryIds(store, user.id, [{ operator: "channel", operand: w.lounge }]),
      unread: unread.streams.flatMap((s) => s.unreadMessageIds).sort((a, b) => a - b),
      firstUnread: store.getMessages(user.id, { narrow: [], anchor: "first_unread", numBefore: 0, numAfter: 0 }).anchor,
      flags: messageIds.map((id) => flags(store, user.id, id)),
      // Zulip's UserMessage rows as the access rules, events and the export read them.
      rows: messageIds.map((id) => {
        const message = getMessageRecord(internals(store).tables, id);
        return message === undefined ? "deleted" : hasRow(internals(store), user.id, message);
      }),
    };
  }
  return out;
}

function clean(store: Store): void {
  const report = store.verify();
  expect(report.differences).toEqual([]);
  expect(report.problems).toEqual([]);
}

/**
 * The same steps on a store writing groups and on one writing per-user bitmaps only.
 * `firstMovePerUser`: the grouped store's first move writes per-user bitmaps too (a
 * store written before groups existed), later ones groups.
 */
async function compareForms(firstMovePerUser: boolean): Promise<void> {
  const grouped = tempStore();
  const perUser = tempStore();
  stores.push(grouped, perUser);
  const worlds = new Map<TempStore, World>([
    [grouped, build(grouped)],
    [perUser, build(perUser)],
  ]);
  let groupedForm = !firstMovePerUser;
  /** Runs a step on both stores, each writing its form, and answers the grouped store's result. */
  const step = async <T>(fn: (store: Store, w: World) => T | Promise<T>): Promise<T> => {
    WITHDRAWN_GROUPING.minUsers = Number.POSITIVE_INFINITY;
    await fn(perUser.store, worlds.get(perUser)!);
    WITHDRAWN_GROUPING.minUsers = groupedForm ? 2 : Number.POSITIVE_INFINITY;
    return fn(grouped.store, worlds.get(grouped)!);
  };
  const ids: number[] = [];
  const same = () => {
    const w = worlds.get(grouped)!;
    expect(observe(grouped.store, w, ids)).toEqual(observe(perUser.store, worlds.get(perUser)!, ids));
  };
  const groups = () => withdrawnGroups(internals(grouped.store).bitmaps);

  // A topic of the private channel (protected history), a few flags on it.
  ids.push(
    ...(await step((s, w) => [
      w.send(w.owner, "secret", "plans", "one"),
      w.send(w.alice, "secret", "plans", "two"),
      w.send(w.owner, "secret", "plans", "three"),
      w.send(w.alice, "secret", "plans", "four"),
    ])),
  );
  await step((s, w) => {
    s.updateFlags(w.alice.id, [ids[0]!], "starred", "add");
    s.updateFlags(w.owner.id, [ids[1]!], "read", "add");
  });
  same();

  // Into the public channel: every member but the private channel's loses (never had) a row.
  await step((s, w) => moveMessages(s, w.owner.id, ids[0]!, { channelId: w.general.id, propagateMode: "change_all" }));
  expect(groups().length).toBe(firstMovePerUser ? 0 : 1);
  const perUserBitmaps = internals(grouped.store).bitmaps.get(key.userFlagHolders("withdrawn")).size;
  expect(perUserBitmaps).toBe(firstMovePerUser ? EXTRA_USERS + 1 : 0);
  same();
  groupedForm = true;

  // A member stars one (a historical row), another message joins the topic.
  await step((s, w) => s.updateFlags(w.extra[0]!.id, [ids[2]!], "starred", "add"));
  ids.push(await step((s, w) => w.send(w.bob, "general", "plans", "five, after the move")));
  same();

  // Out again to the private channel, then back in: the group goes, then comes back.
  await step((s, w) => moveMessages(s, w.owner.id, ids[0]!, { channelId: w.secret.id, propagateMode: "change_all" }));
  expect(groups()).toEqual([]);
  same();
  await step((s, w) => moveMessages(s, w.owner.id, ids[0]!, { channelId: w.general.id, propagateMode: "change_all" }));
  expect(groups().length).toBe(1);
  same();

  // Part of it to a channel half of the members are in; then a grouped message is deleted.
  await step((s, w) =>
    moveMessages(s, w.owner.id, ids[2]!, { channelId: w.lounge, propagateMode: "change_later", topic: "later" }),
  );
  same();
  await step((s, w) => s.deleteMessage(w.owner.id, ids[1]!));
  same();
  await step((s, w) => s.deleteMessage(w.owner.id, ids[0]!));
  same();
  clean(grouped.store);
  clean(perUser.store);
  expect(persistedWithdrawnGroups(internals(grouped.store).bitmaps).length).toBeGreaterThan(0);

  grouped.reopen();
  perUser.reopen();
  same();
  clean(grouped.store);
}

describe("withdrawn rows written as groups", () => {
  it("leave every reader where per-user bitmaps do: moved in, starred, out, back, split and deleted", async () => {
    await compareForms(false);
  });

  it("read and rewrite per-user bitmaps of a store written before groups existed", async () => {
    await compareForms(true);
  });
});

describe("a former member of a protected channel the topic moved into", () => {
  it("cannot read the messages a group withdrew from them after joining again", () => {
    const readable: number[][] = [];
    for (const minUsers of [Number.POSITIVE_INFINITY, 2]) {
      WITHDRAWN_GROUPING.minUsers = minUsers;
      const t = tempStore();
      stores.push(t);
      const w = build(t);
      const former = w.extra.slice(0, 3);
      const principals = former.map((u) => u.id);
      t.store.subscribe(w.owner.id, { channels: [{ name: "secret" }], principals: former.map((u) => u.id) });
      const ids = [w.send(w.owner, "general", "plans", "one"), w.send(w.bob, "general", "plans", "two")];
      t.store.unsubscribe(w.owner.id, ["secret"], principals);
      // Their old intervals in the private channel cover the messages: the move withdraws those rows.
      moveMessages(t.store, w.owner.id, ids[0]!, { channelId: w.secret.id, propagateMode: "change_all" });
      expect(withdrawnGroups(internals(t.store).bitmaps).length).toBe(minUsers === 2 ? 1 : 0);
      t.store.subscribe(w.owner.id, { channels: [{ name: "secret" }], principals: [former[0]!.id] });
      const state = internals(t.store);
      const all = new RoaringBitmap32(ids);
      readable.push([
        ...accessibleAmong(state, state.users.get(former[0]!.id)!, state.channels.get(w.secret.id)!, all),
      ]);
      clean(t.store);
    }
    expect(readable).toEqual([[], []]);
  });
});

describe("a follower", () => {
  it("reads the groups the writer writes and strips, its cached sets dropped", async () => {
    WITHDRAWN_GROUPING.minUsers = 2;
    const t = tempStore();
    stores.push(t);
    const w = build(t);
    const follower = openFollower(t.dir, { noSync: true, lockToken: t.store.lockToken });
    try {
      const viewers = [w.owner.id, w.alice.id, w.bob.id, w.extra[0]!.id, w.extra[30]!.id];
      const caughtUp = () => {
        follower.catchUp();
        const fresh = openFollower(t.dir, { noSync: true, lockToken: t.store.lockToken });
        try {
          expect(followerView(follower, viewers)).toEqual(followerView(fresh, viewers));
        } finally {
          fresh.close();
        }
      };
      const id = w.send(w.owner, "secret", "plans", "one");
      w.send(w.alice, "secret", "plans", "two");
      caughtUp();
      moveMessages(t.store, w.owner.id, id, { channelId: w.general.id, propagateMode: "change_all" });
      expect(withdrawnGroups(internals(t.store).bitmaps).length).toBe(1);
      caughtUp();
      expect(follower.unreadSummary(w.extra[0]!.id).streams).toEqual([]);
      // Another topic joins the group (the same users): the follower's memo of it must go.
      const more = w.send(w.alice, "secret", "more", "three");
      caughtUp();
      moveMessages(t.store, w.owner.id, more, { channelId: w.general.id, propagateMode: "change_all" });
      expect(withdrawnGroups(internals(t.store).bitmaps).length).toBe(1);
      caughtUp();
      expect(follower.unreadSummary(w.extra[0]!.id).streams).toEqual([]);
      await t.store.deleteMessage(w.owner.id, id);
      caughtUp();
      moveMessages(t.store, w.owner.id, id + 1, { channelId: w.secret.id, propagateMode: "change_all" });
      // The group keeps the other topic only.
      expect([...withdrawnGroups(internals(t.store).bitmaps)[0]!.messages]).toEqual([more]);
      caughtUp();
    } finally {
      follower.close();
    }
  });
});

describe("verify", () => {
  it("reports a group withdrawing a message from a user who never received it, and a stray group key", () => {
    const t = tempStore();
    stores.push(t);
    const w = build(t);
    const id = w.send(w.owner, "secret", "plans", "one");
    const state = internals(t.store);
    state.write(() => {
      // Bob is not in the private channel: no row to withdraw.
      addWithdrawnGroup(state.bitmaps, new RoaringBitmap32([id]), new RoaringBitmap32([w.bob.id, w.alice.id]));
      state.bitmaps.add("wg:7:m", id);
    });
    expect(t.store.verify().problems).toEqual([
      "withdrawn group key wg:7:m belongs to no listed group",
      `withdrawn group 1 withdraws message ${id} from user ${w.bob.id}, who never received it`,
    ]);
  });
});
