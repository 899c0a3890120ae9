/**
 * The topic registry (actions/topic-registry): a whole-topic rename within a channel
 * renames registry rows instead of rewriting each record, and every reader sees what the
 * rewrite path gives for the same sequence of edits: topics, edit history, GET history,
 * last_moved_timestamp, narrows, verify. Older stores (records written by a version-4
 * build) read the same and move to the registry by their first rename.
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import { messageEditHistory } from "../../../src/engine/queries/message-history.js";
import { getStoredMessageRecord, messageRecords } from "../../../src/engine/storage/message-records.js";
import type { UpdateMessageInput } from "../../../src/engine/actions/update-message.js";
import type { Store } from "../../../src/engine/index.js";
import type { TopicRow } from "../../../src/engine/types.js";
import { record } from "../../support/move.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { writeAsVersion4 } from "../../support/version-4-records.js";

const stores: TempStore[] = [];
afterEach(() => {
  for (const t of stores.splice(0)) t.cleanup();
});

/** A store whose clock the test moves. */
function open() {
  const clock = { now: 1_700_000_000 };
  const t = tempStore({ now: () => clock.now });
  stores.push(t);
  return { t, store: t.store, clock };
}

/** "plan" (6 messages) and "other" (2) in general, and a message in secret. */
function seed(store: Store) {
  const r = seedRealm(store);
  const send = (topic: string, content: string, channel = r.general.id) =>
    store.sendMessage({ senderId: r.owner.id, to: { type: "channel", channel, topic }, content }).id;
  const plan = [0, 1, 2, 3, 4, 5].map((i) => send("plan", `step ${i} lunch`));
  const other = [send("other", "elsewhere"), send("other", "more")];
  send("secret talk", "hidden", r.secret.id);
  return { ...r, plan, other };
}

/** IDs of the messages whose record a write stores, counted on the messages table. */
function watchPuts(store: Store): number[] {
  const messages = internals(store).tables.messages;
  const put = messages.putSync.bind(messages);
  const written: number[] = [];
  messages.putSync = (key: number, value: unknown) => {
    written.push(key);
    return put(key, value);
  };
  return written;
}

function topicIds(store: Store, userId: number, channel: string, topic: string): number[] {
  return store
    .getMessages(userId, {
      narrow: [
        { operator: "channel", operand: channel },
        { operator: "topic", operand: topic },
      ],
      anchor: "newest",
      numBefore: 1000,
      numAfter: 0,
    })
    .messages.map((v) => v.message.id);
}

/** Everything a reader sees of the messages: records as resolved, GET history, narrows. */
function observe(store: Store, userId: number) {
  const state = internals(store);
  const viewer = state.users.get(userId)!;
  const records = [...messageRecords(state.tables)].map((m) => ({
    id: m.id,
    recipient: m.recipient,
    topic: m.topic,
    content: m.content,
    editHistory: m.editHistory,
    lastEditTimestamp: m.lastEditTimestamp,
    lastMovedTimestamp: m.lastMovedTimestamp,
  }));
  const history = records.map((m) =>
    m.recipient.type === "channel" ? messageEditHistory(state, "all", viewer, m.id) : null,
  );
  const topics = [...new Set(records.map((m) => m.topic))].sort();
  const narrows = topics.flatMap((topic) => [
    topicIds(store, userId, "general", topic),
    topicIds(store, userId, "secret", topic),
  ]);
  const report = store.verify();
  return { records, history, narrows, differences: report.differences, problems: report.problems };
}

describe("the topic registry", () => {
  it("renames a whole topic by reference and reads as the rewrite path stores", () => {
    const a = open();
    const b = open();
    const ra = seed(a.store);
    const rb = seed(b.store);
    const puts = watchPuts(a.store);
    const owner = ra.owner.id;
    let ref = 0;
    let rewritten = 0;
    /** The same request on both stores; on b, the topic's records are first made older ones (rewrite path). */
    const both = (id: number, input: UpdateMessageInput, allByReference: boolean) => {
      a.clock.now += 10;
      b.clock.now += 10;
      const topic = record(b.store, id).topic;
      const channel = record(b.store, id).recipient;
      const inTopic = [...messageRecords(internals(b.store).tables)]
        .filter((m) => m.topic.toLowerCase() === topic.toLowerCase())
        .filter((m) => JSON.stringify(m.recipient) === JSON.stringify(channel))
        .map((m) => m.id);
      writeAsVersion4(b.store, inTopic);
      puts.length = 0;
      const moved = a.store.updateMessage(owner, id, input).messageIds;
      b.store.updateMessage(rb.owner.id, id, input);
      if (allByReference) {
        expect(puts.filter((p) => moved.includes(p))).toEqual([]);
        ref++;
      } else {
        expect(puts.filter((p) => moved.includes(p)).length).toBeGreaterThan(0);
        rewritten++;
      }
      expect(observe(a.store, owner)).toEqual(observe(b.store, rb.owner.id));
    };
    const all = { propagateMode: "change_all" } as const;
    both(ra.plan[2]!, { topic: "✔ plan", ...all }, true);
    both(ra.plan[0]!, { topic: "plan 2", ...all }, true);
    // One message out: it keeps the history it had, and the topic's next rename is not in it.
    both(ra.plan[1]!, { topic: "side", propagateMode: "change_one" }, false);
    both(ra.plan[0]!, { topic: "✔ plan 2", ...all }, true);
    // Merged into an existing topic, then renamed as one.
    both(ra.plan[0]!, { topic: "other", ...all }, true);
    both(ra.other[0]!, { topic: "Merged", ...all }, true);
    // A content edit after the renames, then another rename, a case-only one.
    both(ra.plan[3]!, { content: "edited lunch" }, false);
    both(ra.plan[3]!, { topic: "merged", ...all }, true);
    // To another channel, then that topic resolved there.
    both(ra.plan[4]!, { channelId: ra.secret.id, topic: "moved", propagateMode: "change_one" }, false);
    both(ra.plan[4]!, { topic: "✔ moved", ...all }, true);
    // A content edit and a rename together: the rewrite path, one history entry.
    both(ra.plan[5]!, { content: "both at once", topic: "together", ...all }, false);
    expect([ref, rewritten]).toEqual([7, 4]);
    const last = record(a.store, ra.plan[5]!).editHistory![0]!;
    expect(last).toMatchObject({ prevContent: "step 5 lunch", prevTopic: "merged", topic: "together" });
  });

  it("reads an older store's records as they were, rewrites them at the first rename and renames by reference at the second", () => {
    const { t, store, clock } = open();
    const r = seed(store);
    writeAsVersion4(store, [...r.plan, ...r.other]);
    const state = () => internals(t.store);
    expect(getStoredMessageRecord(state().tables, r.plan[0]!)?.topicRef).toBeUndefined();
    const before = observe(store, r.owner.id);
    const reopened = t.reopen();
    expect(observe(reopened, r.owner.id)).toEqual(before);
    expect(before.differences).toEqual([]);
    expect(before.problems).toEqual([]);

    const puts = watchPuts(reopened);
    clock.now += 10;
    reopened.updateMessage(r.owner.id, r.plan[0]!, { topic: "✔ plan", propagateMode: "change_all" });
    expect(r.plan.every((id) => puts.includes(id))).toBe(true);
    expect(getStoredMessageRecord(state().tables, r.plan[0]!)?.topicRef).toBeTypeOf("number");
    puts.length = 0;
    clock.now += 10;
    reopened.updateMessage(r.owner.id, r.plan[0]!, { topic: "plan", propagateMode: "change_all" });
    expect(puts.filter((id) => r.plan.includes(id))).toEqual([]);
    expect(record(reopened, r.plan[3]!).editHistory?.map((e) => [e.prevTopic, e.topic])).toEqual([
      ["✔ plan", "plan"],
      ["plan", "✔ plan"],
    ]);
    expect(topicIds(reopened, r.owner.id, "general", "plan")).toEqual(r.plan);
    expect(reopened.verify().differences).toEqual([]);
    expect(reopened.verify().problems).toEqual([]);
  });

  it("is checked by verify: a row missing, in another channel, or not under its name", () => {
    const { store } = open();
    const r = seed(store);
    store.updateMessage(r.owner.id, r.plan[0]!, { topic: "✔ plan", propagateMode: "change_all" });
    expect(store.verify().problems).toEqual([]);
    const state = internals(store);
    const rowId = record(store, r.plan[0]!).topicRef!;
    const row = state.tables.topics.get(rowId) as TopicRow;
    const corrupt = (value: TopicRow | null) =>
      state.write((ctx) => {
        if (value === null) state.tables.topics.removeSync(rowId);
        else state.tables.topics.putSync(rowId, value);
        ctx.changed({ kind: "topic", id: rowId });
      });
    corrupt({ ...row, name: "renamed behind its index" });
    expect(store.verify().problems).toEqual(
      expect.arrayContaining([expect.stringContaining(`topic row ${rowId} ("renamed behind its index")`)]),
    );
    corrupt({ ...row, channelId: r.secret.id });
    expect(store.verify().problems).toEqual(
      expect.arrayContaining([expect.stringContaining(`names topic row ${rowId} of channel ${r.secret.id}`)]),
    );
    corrupt({ ...row, renames: [] });
    expect(store.verify().problems).toEqual(
      expect.arrayContaining([expect.stringContaining(`starts at rename 1 of topic row ${rowId}`)]),
    );
    corrupt(null);
    expect(store.verify().problems).toEqual(
      expect.arrayContaining([expect.stringContaining(`names topic row ${rowId}, which does not exist`)]),
    );
  });
});
