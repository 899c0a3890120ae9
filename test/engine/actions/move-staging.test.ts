/**
 * Large moves in two phases (actions/move-staging): staged between turns of the event
 * loop, then one write. The staged path must store what the one-write path stores, and
 * a write committed between the phases must not be lost: the move stages again.
 * MOVE_STAGING is lowered so that a dozen messages stage in several turns.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MOVE_STAGING } from "../../../src/engine/actions/move-staging.js";
import { MOVE_ROWS_STEP } from "../../../src/engine/actions/move-rows.js";
import { internals } from "../../../src/engine/internal.js";
import { openFollower } from "../../../src/index.js";
import { messageRecords } from "../../../src/engine/storage/message-records.js";
import type { Store } from "../../../src/engine/index.js";
import type { UpdateMessageInput } from "../../../src/engine/actions/update-message.js";
import { followerView } from "../../support/follower-view.js";
import { record } from "../../support/move.js";
import { writeAsVersion4 } from "../../support/version-4-records.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

const DEFAULTS = { ...MOVE_STAGING };
const ROWS_STEP_DEFAULTS = { ...MOVE_ROWS_STEP };
const stores: TempStore[] = [];
function open(): TempStore {
  const t = tempStore({ now: () => 1_700_000_000 });
  stores.push(t);
  return t;
}
beforeEach(() => Object.assign(MOVE_STAGING, { minMessages: 2, chunkMessages: 3, attempts: 3 }));
afterEach(() => {
  Object.assign(MOVE_STAGING, DEFAULTS);
  Object.defineProperty(MOVE_ROWS_STEP, "users", {
    value: ROWS_STEP_DEFAULTS.users,
    writable: true,
    configurable: true,
  });
  for (const t of stores.splice(0)) t.cleanup();
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A realm with a 12-message topic in "general", some of it read and starred. */
function seed(store: Store) {
  const r = seedRealm(store);
  const senders = [r.alice, r.bob, r.owner];
  const ids: number[] = [];
  for (let i = 0; i < 12; i++)
    ids.push(
      store.sendMessage({
        senderId: senders[i % 3]!.id,
        to: { type: "channel", channel: r.general.id, topic: "plan" },
        content: `step ${i} @**Bob**`,
      }).id,
    );
  store.sendMessage({
    senderId: r.bob.id,
    to: { type: "channel", channel: r.general.id, topic: "other" },
    content: "x",
  });
  store.updateFlags(r.bob.id, ids.slice(0, 4), "starred", "add");
  store.updateFlags(r.alice.id, ids.slice(2, 9), "read", "add");
  // One record as an older store holds it: renaming the topic rewrites its records (and
  // stages them) rather than renaming its registry rows.
  writeAsVersion4(store, [ids[0]!]);
  return { ...r, ids };
}

/** What readers see: every record, each user's narrows and unread counts, and the change log's entries. */
function observe(store: Store, users: readonly number[]) {
  const state = internals(store);
  const log = [...state.tables.changeLog.getRange({})].map(({ key, value }) => {
    const { at: _at, ...entry } = value as { at: number };
    return [key, entry];
  });
  return {
    records: [...messageRecords(state.tables)],
    views: users.map((userId) => ({
      all: store.getMessages(userId, { anchor: "newest", numBefore: 100, numAfter: 0 }),
      unread: store.unreadSummary(userId),
    })),
    log,
  };
}

describe("a staged move", () => {
  it.each<[string, (r: ReturnType<typeof seed>) => UpdateMessageInput]>([
    ["to a private channel with protected history", (r) => ({ channelId: r.secret.id })],
    ["to another topic", () => ({ topic: "renamed" })],
    ["resolving the topic", () => ({ topic: "✔ plan" })],
  ])("%s stores what the one-write move stores", async (_name, request) => {
    const [one, two] = [open().store, open().store];
    const [a, b] = [seed(one), seed(two)];
    const input = (r: ReturnType<typeof seed>): UpdateMessageInput => ({
      ...request(r),
      propagateMode: "change_all",
      sendNotificationToOldThread: true,
      sendNotificationToNewThread: true,
    });
    const sync = one.updateMessage(a.owner.id, a.ids[5]!, input(a));
    const staged = await two.updateMessageAsync(b.owner.id, b.ids[5]!, input(b));
    expect(staged).toEqual(sync);
    expect(staged.messageIds).toHaveLength(12);
    const users = [a.owner.id, a.alice.id, a.bob.id, a.guest.id];
    expect(observe(two, users)).toEqual(observe(one, users));
    expect(two.verify().differences).toEqual([]);
    expect(two.verify().problems).toEqual([]);
  });

  it("keeps an edit, a reaction and a flag written between its phases, staging again", async () => {
    const { store } = open();
    const r = seed(store);
    const moving = store.updateMessageAsync(r.owner.id, r.ids[0]!, {
      channelId: r.secret.id,
      propagateMode: "change_all",
      sendNotificationToNewThread: false,
    });
    // Staging has read the first chunks: each of these writes changes what it read.
    await nextTurn();
    await nextTurn();
    store.updateMessage(r.alice.id, r.ids[9]!, { content: "step 9, edited" });
    store.addReaction(r.bob.id, r.ids[10]!, { emojiName: "octopus" });
    store.updateFlags(r.alice.id, [r.ids[11]!], "starred", "add");
    const result = await moving;

    expect(result.messageIds).toEqual(r.ids);
    const edited = record(store, r.ids[9]!);
    expect(edited.content).toBe("step 9, edited");
    expect(edited.recipient).toEqual({ type: "channel", channelId: r.secret.id });
    expect(record(store, r.ids[10]!).reactions.map((x) => x.emojiName)).toEqual(["octopus"]);
    const starred = store.getMessages(r.alice.id, {
      anchor: "newest",
      numBefore: 100,
      numAfter: 0,
      narrow: [["is", "starred"]],
    });
    expect(starred.messages.map((m) => m.message.id)).toEqual([r.ids[11]]);
    expect(store.verify().problems).toEqual([]);
    expect(store.verify().differences).toEqual([]);
  });

  it("takes a message sent into the topic between its phases (change_all), staging again", async () => {
    const { store } = open();
    const r = seed(store);
    const moving = store.updateMessageAsync(r.owner.id, r.ids[0]!, { topic: "moved", propagateMode: "change_all" });
    await nextTurn();
    const late = store.sendMessage({
      senderId: r.bob.id,
      to: { type: "channel", channel: r.general.id, topic: "plan" },
      content: "one more",
    }).id;
    const result = await moving;
    expect(result.messageIds).toEqual([...r.ids, late]);
    expect(record(store, late).topic).toBe("moved");
    expect(store.verify().differences).toEqual([]);
  });

  it("is written in one phase once staging was spoiled `attempts` times, and completes", async () => {
    MOVE_STAGING.attempts = 2;
    const { store } = open();
    const r = seed(store);
    let done = false;
    let edits = 0;
    const moving = store
      .updateMessageAsync(r.owner.id, r.ids[0]!, { topic: "busy", propagateMode: "change_all" })
      .finally(() => (done = true));
    // A message of the topic is edited at every turn until the move is written.
    while (!done) {
      await nextTurn();
      if (!done) store.updateMessage(r.alice.id, r.ids[3]!, { content: `edit ${++edits}` });
    }
    const result = await moving;
    expect(result.messageIds).toEqual(r.ids);
    expect(edits).toBeGreaterThan(2);
    expect(record(store, r.ids[3]!)).toMatchObject({ topic: "busy", content: `edit ${edits}` });
    expect(store.verify().differences).toEqual([]);
  });

  it("plans the rows of a topic moved before over several turns, planning again after an unsubscription between them", async () => {
    const [one, two] = [open().store, open().store];
    const [a, b] = [seed(one), seed(two)];
    // Moved out and back: its messages carry withdrawn and granted rows.
    for (const [store, r] of [
      [one, a],
      [two, b],
    ] as const)
      for (const channelId of [r.secret.id, r.general.id])
        store.updateMessage(r.owner.id, r.ids[0]!, { channelId, propagateMode: "change_all" });
    const input = { channelId: a.secret.id, propagateMode: "change_all", sendNotificationToNewThread: false } as const;
    // Alice leaves the target, after the plan looked at her: she now loses her rows.
    const leaveSecret = (store: Store, r: ReturnType<typeof seed>) =>
      store.unsubscribe(r.owner.id, ["secret"], [r.alice.id]);
    leaveSecret(one, a);
    const sync = one.updateMessage(a.owner.id, a.ids[0]!, input);

    // Each of the three users of the two channels planned in a turn of its own.
    let planSteps = 0;
    Object.defineProperty(MOVE_ROWS_STEP, "users", { configurable: true, get: () => (++planSteps, 1) });
    const moving = two.updateMessageAsync(b.owner.id, b.ids[0]!, { ...input, channelId: b.secret.id });
    for (let turn = 0; turn < 100 && planSteps < 2; turn++) await nextTurn();
    expect(planSteps).toBe(2);
    leaveSecret(two, b);
    const staged = await moving;
    expect(planSteps).toBeGreaterThan(3);

    expect(staged).toEqual(sync);
    const users = [a.owner.id, a.alice.id, a.bob.id, a.guest.id];
    expect(observe(two, users)).toEqual(observe(one, users));
    expect(two.verify().differences).toEqual([]);
    expect(two.verify().problems).toEqual([]);
  });

  it("works out the row writes of a topic moved back before its write, planning again after a commit meanwhile", async () => {
    const [one, two] = [open().store, open().store];
    const [a, b] = [seed(one), seed(two)];
    for (const [store, r] of [
      [one, a],
      [two, b],
    ] as const)
      store.updateMessage(r.owner.id, r.ids[0]!, { channelId: r.secret.id, propagateMode: "change_all" });
    const back = (r: ReturnType<typeof seed>) =>
      ({ channelId: r.general.id, propagateMode: "change_all", sendNotificationToNewThread: false }) as const;
    const leaveGeneral = (store: Store, r: ReturnType<typeof seed>) =>
      store.unsubscribe(r.owner.id, ["general"], [r.bob.id]);
    // Counted on a one-write move: how many steps its plan takes, the row writes' own last.
    let planSteps = 0;
    Object.defineProperty(MOVE_ROWS_STEP, "users", { configurable: true, get: () => (++planSteps, 1) });
    const probe = open().store;
    const p = seed(probe);
    probe.updateMessage(p.owner.id, p.ids[0]!, { channelId: p.secret.id, propagateMode: "change_all" });
    planSteps = 0;
    probe.updateMessage(p.owner.id, p.ids[0]!, back(p));
    const steps = planSteps;
    leaveGeneral(one, a);
    const sync = one.updateMessage(a.owner.id, a.ids[0]!, back(a));

    planSteps = 0;
    const moving = two.updateMessageAsync(b.owner.id, b.ids[0]!, back(b));
    // Bob leaves general while the plan works out its last row writes.
    for (let turn = 0; turn < 200 && planSteps < steps - 1; turn++) await nextTurn();
    expect(planSteps).toBe(steps - 1);
    leaveGeneral(two, b);
    const staged = await moving;
    expect(planSteps).toBeGreaterThan(steps);

    expect(staged).toEqual(sync);
    const users = [a.owner.id, a.alice.id, a.bob.id, a.guest.id];
    expect(observe(two, users)).toEqual(observe(one, users));
    expect(two.verify().differences).toEqual([]);
    expect(two.verify().problems).toEqual([]);
  });

  it("two staged moves of one topic at once: the later one moves it again, from where the first put it", async () => {
    const { store } = open();
    const r = seed(store);
    const quiet = { propagateMode: "change_all", sendNotificationToNewThread: false } as const;
    const first = store.updateMessageAsync(r.owner.id, r.ids[0]!, { topic: "a", ...quiet });
    const second = store.updateMessageAsync(r.alice.id, r.ids[0]!, { topic: "b", ...quiet });
    expect((await first).messageIds).toEqual(r.ids);
    expect((await second).messageIds).toEqual(r.ids);
    expect(r.ids.map((id) => record(store, id).topic)).toEqual(r.ids.map(() => "b"));
    expect(record(store, r.ids[0]!).editHistory?.map((e) => [e.prevTopic, e.topic])).toEqual([
      ["a", "b"],
      ["plan", "a"],
    ]);
    expect(store.verify().differences).toEqual([]);
  });

  it("is followed by a follower store: after catchUp it answers as one opened afterwards", async () => {
    const t = open();
    const r = seed(t.store);
    const follower = openFollower(t.dir, { noSync: true, lockToken: t.store.lockToken });
    try {
      const users = [r.owner.id, r.alice.id, r.bob.id, r.guest.id];
      followerView(follower, users);
      await t.store.updateMessageAsync(r.owner.id, r.ids[0]!, { channelId: r.secret.id, propagateMode: "change_all" });
      follower.catchUp();
      const fresh = openFollower(t.dir, { noSync: true, lockToken: t.store.lockToken });
      try {
        expect(followerView(follower, users)).toEqual(followerView(fresh, users));
        expect(followerView(fresh, users)["answers"]).toEqual(followerView(t.store, users)["answers"]);
      } finally {
        fresh.close();
      }
    } finally {
      follower.close();
    }
  });

  it("refuses at its write a move the mover may no longer make, changing nothing", async () => {
    const { store } = open();
    const r = seed(store);
    const moving = store.updateMessageAsync(r.alice.id, r.ids[0]!, {
      channelId: r.secret.id,
      propagateMode: "change_all",
    });
    await nextTurn();
    // Alice leaves the private channel while the move is staged.
    store.unsubscribe(r.alice.id, ["secret"]);
    await expect(moving).rejects.toThrow("Invalid channel ID");
    expect(record(store, r.ids[0]!).recipient).toEqual({ type: "channel", channelId: r.general.id });
  });

  it.each<[string, UpdateMessageInput]>([
    ["a move to another topic", { topic: "renamed", sendNotificationToOldThread: true }],
    ["a resolve", { topic: "✔ plan" }],
  ])("renders Notification Bot's notices of %s before its write, as the write would", async (_name, request) => {
    const { store } = open();
    const r = withNotificationBot(store, seed(store));
    const renders = watchNoticeRenders(store);
    const input: UpdateMessageInput = { ...request, propagateMode: "change_all" };
    await store.updateMessageAsync(r.owner.id, r.ids[5]!, input);
    expect(renders.length).toBeGreaterThan(0);
    expect(renders.filter((x) => x.inWrite)).toEqual([]);
    // As the one-write move stores them.
    const one = open().store;
    const a = withNotificationBot(one, seed(one));
    one.updateMessage(a.owner.id, a.ids[5]!, input);
    const users = [a.owner.id, a.alice.id, a.bob.id];
    expect(observe(store, users)).toEqual(observe(one, users));
  });

  it("renders a notice again in its write when a write committed after it was rendered", async () => {
    const { store } = open();
    const r = withNotificationBot(store, seed(store));
    const renders = watchNoticeRenders(store, () =>
      // Changes how the notice renders, not its text nor anything the staged rewrites read.
      store.addLinkifier(r.owner.id, { pattern: "marked", urlTemplate: "https://example.com/marked" }),
    );
    await store.updateMessageAsync(r.owner.id, r.ids[5]!, { topic: "✔ plan", propagateMode: "change_all" });
    expect(renders.map((x) => x.inWrite)).toEqual([false, true]);
    const newest = store.getMessages(r.owner.id, { anchor: "newest", numBefore: 1, numAfter: 0 }).messages.at(-1)!;
    const notice = record(store, newest.message.id);
    expect(notice.content).toMatch(/has marked this topic as resolved/);
    expect(notice.renderedContent).toContain('href="https://example.com/marked"');
  });
});

/** The realm's Notification Bot, made by a first notice (one made in the move's write cannot render before it). */
function withNotificationBot<R extends ReturnType<typeof seed>>(store: Store, r: R): R {
  const { id } = store.sendMessage({
    senderId: r.bob.id,
    to: { type: "channel", channel: r.general.id, topic: "bot" },
    content: "x",
  });
  store.updateMessage(r.owner.id, id, { topic: "bot, moved" });
  return r;
}

/**
 * Records each rendering of a Notification Bot notice and whether a write was open;
 * `afterFirst` runs once, in a microtask after the first (between staging's turns).
 */
function watchNoticeRenders(store: Store, afterFirst?: () => void): { content: string; inWrite: boolean }[] {
  const state = internals(store) as unknown as {
    renderer: (content: string, context: unknown) => unknown;
    write: (fn: unknown) => unknown;
  };
  const seen: { content: string; inWrite: boolean }[] = [];
  let inWrite = false;
  const write = state.write.bind(state);
  state.write = (fn) => {
    inWrite = true;
    try {
      return write(fn);
    } finally {
      inWrite = false;
    }
  };
  const render = state.renderer;
  state.renderer = (content, context) => {
    if (/moved|marked this topic/.test(content)) {
      seen.push({ content, inWrite });
      if (seen.length === 1 && afterFirst) queueMicrotask(afterFirst);
    }
    return render(content, context);
  };
  return seen;
}
