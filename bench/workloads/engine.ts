/**
 * @module bench/workloads/engine
 * The engine side of every benchmark workload, on a generated dataset. Each run()
 * returns the message IDs (or counts) it produced, so bench/peer can compare them with
 * PostgreSQL and test/bench/smoke.test.ts with a brute-force filter.
 */
import type { Store } from "../../src/engine/index.js";
import { RoaringBitmap32 } from "../../src/engine/index/bitmap-store.js";
import { key } from "../../src/engine/index/keys.js";
import type { Manifest } from "../../tools/generate/manifest.js";
import { MessageJsonCache } from "../../src/http/views/message-cache.js";
import { JsonParts } from "../../src/http/respond.js";
import { engineDicts } from "./serialize.js";
import { internals } from "../../src/engine/internal.js";

export type WorkloadGroup = "narrow" | "flags" | "write" | "unread" | "serialize";

export interface EngineWorkload {
  readonly name: string;
  readonly group: WorkloadGroup;
  readonly description: string;
  /** IDs in ascending order, or [count] for flag changes. */
  run(): number[];
  /**
   * The work as the system does it, when run() adds the harness's own normalisation for
   * the ID comparison (flattening groups, sorting): timed instead of run(). The peer
   * workload of the same name has its own, so neither side is timed sorting its output.
   */
  timed?(): unknown;
  /** Undo what run() changed (untimed), so iterations stay identical. */
  reset?(): void;
  /** The same window as IDs + flags only (getMessageWindow: no record loads), for narrows. */
  window?(): readonly number[];
  /** The same window as the HTTP server answers it: IDs + flags + ready message JSON bytes. */
  serve?(): Buffer;
  /** Changes state for good (sends): run a fixed number of times, last. */
  readonly appends?: boolean;
  /**
   * Measured on the store reopened with noSync (bench/peer runs these after every durable
   * workload, against a PostgreSQL session with synchronous_commit = off), so the cost of
   * the work itself is compared without the disk's fsync floor.
   */
  readonly noSync?: boolean;
}

type Narrow = readonly { operator: string; operand: unknown }[];

export const SEND_TOPIC = "bench send";
export const NO_SYNC_SEND_WORKLOAD = "send to 10k-subscriber channel, no fsync";
export const READY_JSON_WORKLOAD = "window 1000 ready JSON (server path)";
export const JSON_OPTIONS = { applyMarkdown: true, clientGravatar: true, allowEmptyTopicName: false } as const;

/** The bytes the server path sends for the 1000-message window (for the memcpy floor). */
export function readyWindowBytes(store: Store, m: Manifest): Buffer {
  const cache = new MessageJsonCache(store);
  const window = store.getMessageWindow(m.subjects.main, {
    narrow: [{ operator: "channel", operand: m.generalChannelId }],
    anchor: "newest",
    numBefore: 1000,
    numAfter: 0,
  });
  return Buffer.concat(cache.windowJson(internals(store).realms.get(m.realmId)!, window, JSON_OPTIONS));
}

export function engineWorkloads(store: Store, m: Manifest): EngineWorkload[] {
  const s = m.subjects;
  const general = m.generalChannelId;
  const fetch = (
    user: number,
    narrow: Narrow,
    anchor: number | "newest" | "first_unread",
    numBefore: number,
    numAfter: number,
  ) => store.getMessages(user, { narrow, anchor, numBefore, numAfter }).messages.map((v) => v.message.id);
  const window = (
    user: number,
    narrow: Narrow,
    anchor: number | "newest" | "first_unread",
    numBefore: number,
    numAfter: number,
  ) => store.getMessageWindow(user, { narrow, anchor, numBefore, numAfter }).ids;
  const serve = (
    user: number,
    narrow: Narrow,
    anchor: number | "newest" | "first_unread",
    numBefore: number,
    numAfter: number,
  ) =>
    new JsonParts(
      jsonCache.windowJson(realm, store.getMessageWindow(user, { narrow, anchor, numBefore, numAfter }), JSON_OPTIONS),
    ).joinedTransiently();
  const newest = (name: string, description: string, user: number, narrow: Narrow): EngineWorkload => ({
    name,
    group: "narrow",
    description,
    run: () => fetch(user, narrow, "newest", 100, 0),
    window: () => window(user, narrow, "newest", 100, 0),
    serve: () => serve(user, narrow, "newest", 100, 0),
  });

  // The backlog user's unread messages in the big channel: what "mark channel read" changes.
  const readKey = key.userFlag(s.backlog, "read");
  const unreadIn = (): number[] => {
    const personal = RoaringBitmap32.and(
      internals(store).bitmaps.get(key.channel(general)),
      internals(store).bitmaps.get(key.realm(m.realmId)),
    );
    return personal
      .andNotInPlace(internals(store).bitmaps.get(readKey))
      .toArray()
      .filter((id) => id <= m.lastMessageId);
  };
  let markedIds: number[] = [];
  let thousand: number[] = [];
  const midAnchor = Math.floor(m.lastMessageId / 2);
  const send = () =>
    store.sendMessage({
      senderId: s.main,
      to: { type: "channel", channel: general, topic: SEND_TOPIC },
      content: `Benchmark message with a ${m.commonWord} word.`,
      client: "website",
    }).id;
  // The server's serving path: ready-to-send per-message JSON with the caller's flags spliced in.
  const jsonCache = new MessageJsonCache(store);
  const realm = internals(store).realms.get(m.realmId)!;

  return [
    newest("channel newest 100", "channel:big, anchor newest, 100 before (shared history)", s.main, [
      { operator: "channel", operand: general },
    ]),
    newest("channel+topic newest 100", "channel:big topic:busiest, newest 100", s.main, [
      { operator: "channel", operand: general },
      { operator: "topic", operand: m.bigTopic },
    ]),
    newest("sender newest 100", "sender:most-prolific, newest 100 (personal history)", s.main, [
      { operator: "sender", operand: s.sender },
    ]),
    newest("1:1 dm newest 100", "dm:[partner], newest 100", s.main, [{ operator: "dm", operand: [s.dmPartner] }]),
    newest("is:starred newest 100", "is:starred, newest 100", s.main, [{ operator: "is", operand: "starred" }]),
    newest("is:mentioned newest 100", "is:mentioned, newest 100", s.main, [{ operator: "is", operand: "mentioned" }]),
    {
      name: "is:unread first_unread 60/150",
      group: "narrow",
      description: "is:unread, anchor first_unread, 60 before / 150 after (user with a large backlog)",
      run: () => fetch(s.backlog, [{ operator: "is", operand: "unread" }], "first_unread", 60, 150),
      window: () => window(s.backlog, [{ operator: "is", operand: "unread" }], "first_unread", 60, 150),
      serve: () => serve(s.backlog, [{ operator: "is", operand: "unread" }], "first_unread", 60, 150),
    },
    newest(`search common '${m.commonWord}'`, "search:<common word>, newest 100 (with highlighting)", s.main, [
      { operator: "search", operand: m.commonWord },
    ]),
    newest(`search rare '${m.rareWord}'`, "search:<rare word>, newest 100 (with highlighting)", s.main, [
      { operator: "search", operand: m.rareWord },
    ]),
    {
      name: "numeric anchor mid-history",
      group: "narrow",
      description: "no narrow (all messages), anchor = middle ID, 100 before / 100 after",
      run: () => fetch(s.main, [], midAnchor, 100, 100),
      window: () => window(s.main, [], midAnchor, 100, 100),
      serve: () => serve(s.main, [], midAnchor, 100, 100),
    },
    {
      name: "unread summary (100 subs)",
      group: "unread",
      description: "/register unread_msgs for a user with 100 subscriptions",
      timed: () => store.unreadSummary(s.hundred),
      run: () => {
        const u = store.unreadSummary(s.hundred);
        const ids = [
          ...u.streams.flatMap((x) => x.unreadMessageIds),
          ...u.pms.flatMap((x) => x.unreadMessageIds),
          ...u.huddles.flatMap((x) => x.unreadMessageIds),
        ];
        return ids.sort((a, b) => a - b);
      },
    },
    {
      name: "window 1000 + JSON",
      group: "serialize",
      description: "channel:big newest 1000, loaded and serialized to JSON",
      run: () => {
        const result = store.getMessages(s.main, {
          narrow: [{ operator: "channel", operand: general }],
          anchor: "newest",
          numBefore: 1000,
          numAfter: 0,
        });
        const json = JSON.stringify({ result: "success", msg: "", messages: engineDicts(store, result.messages) });
        if (json.length === 0) throw new Error("empty JSON");
        return result.messages.map((v) => v.message.id);
      },
    },
    {
      name: READY_JSON_WORKLOAD,
      group: "serialize",
      description:
        "channel:big newest 1000 as the HTTP server builds it: window IDs+flags, then cached per-message JSON bytes",
      // As the server writes it: the pieces joined into the buffer uWS copies from.
      timed: () => {
        const window = store.getMessageWindow(s.main, {
          narrow: [{ operator: "channel", operand: general }],
          anchor: "newest",
          numBefore: 1000,
          numAfter: 0,
        });
        return new JsonParts(jsonCache.windowJson(realm, window, JSON_OPTIONS)).joinedTransiently();
      },
      run: () => {
        const window = store.getMessageWindow(s.main, {
          narrow: [{ operator: "channel", operand: general }],
          anchor: "newest",
          numBefore: 1000,
          numAfter: 0,
        });
        const body = new JsonParts(jsonCache.windowJson(realm, window, JSON_OPTIONS)).joinedTransiently();
        if (body.length === 0) throw new Error("empty JSON");
        return [...window.ids];
      },
    },
    {
      name: "mark channel read (big backlog)",
      group: "flags",
      description: "mark_stream_as_read of the big channel for the user with the large backlog",
      run: () => {
        markedIds = unreadIn();
        return [store.markTopicAsRead(s.backlog, general, null).updatedCount];
      },
      // Finding the IDs the reset marks unread again is the bench's bookkeeping, not
      // parley's work: run() finds them (the set is the same every iteration, each
      // starting from the reset state) and only the mark itself is timed.
      timed: () => {
        if (markedIds.length === 0) markedIds = unreadIn();
        return store.markTopicAsRead(s.backlog, general, null);
      },
      reset: () => {
        store.updateFlags(s.backlog, markedIds, "read", "remove");
      },
    },
    {
      name: "flags by 1000 IDs",
      group: "flags",
      description: "POST /messages/flags add read, 1000 unread IDs",
      run: () => {
        if (thousand.length === 0) thousand = unreadIn().slice(-1000);
        return [store.updateFlags(s.backlog, thousand, "read", "add").updatedCount];
      },
      reset: () => {
        store.updateFlags(s.backlog, thousand, "read", "remove");
      },
    },
    {
      name: "send to 10k-subscriber channel",
      group: "write",
      description: "one message to the all-users channel (durable commit)",
      appends: true,
      run: () => [send()],
    },
    {
      name: NO_SYNC_SEND_WORKLOAD,
      group: "write",
      description:
        "one message to the all-users channel, both sides without fsync (PostgreSQL synchronous_commit = off)",
      appends: true,
      noSync: true,
      run: () => [send()],
    },
  ];
}
