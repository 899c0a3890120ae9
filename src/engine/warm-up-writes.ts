/**
 * @module engine/warm-up-writes
 * Runs the message-mutation writes (a staged change_all move within a channel, to a
 * private channel with protected history and back, an edit, a resolve and unresolve,
 * a delete_topic) a few rounds over a scratch store of its own, once at server start, so
 * that the first large moves after a restart run optimised code. Freshly loaded, the
 * longest turn of a 5,000-message move cost 60-130 ms of CPU for the first 2-4 moves
 * (warm: ~20 ms), and issue 28 allows no request to hold the loop over 50 ms.
 *
 * The scratch store lives in a temporary directory removed afterwards, with its own
 * realm, users and channels made through the engine's actions: the real store, its
 * events, change log, replication and metrics never see any of it. It helps only in part:
 * lmdb-js makes each environment's table classes anew, so code optimised on the scratch
 * store's tables meets other object maps on the real store and is optimised again in its
 * first writes (measured: the first real 5,000-message move's longest turn ~43-58 ms of
 * CPU instead of 115-128, the second and third still 56-69, warm ~20).
 *
 * Each round also sends @**all**, @**topic** and a group mention reaching every member, with
 * the scratch store's missed-message email chunks small (WriteWarmUpOptions.emailChunkUsers) so
 * that each send stores chunks and the chunk loop writes them: the first @**all** and group
 * mention in the 10,000-subscriber channel after a restart held the loop 93-221 ms (later
 * ones 33-39) with none of those paths run before.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { editEmailsWritten } from "./actions/missed-message-emails.js";
import { internals } from "./internal.js";
import type { MessageRenderer } from "./render.js";
import { openStore, type Store } from "./store.js";

/** How much a warm-up does: rounds of moves over a topic of `topicMessages` among `users` users. */
export interface WriteWarmUpOptions {
  readonly renderer: MessageRenderer;
  readonly rounds?: number;
  readonly users?: number;
  /** At least MOVE_STAGING.minMessages, so that the moves are staged as the large real ones are. */
  readonly topicMessages?: number;
  /**
   * The scratch store's missed-message email chunk size (StoreOptions.editEmailChunkUsers):
   * well below `users`, so that a wide mention stores several chunks as a real one does.
   */
  readonly emailChunkUsers?: number;
}

/** Outcome of a write warm-up: rounds done, milliseconds, and the error that ended it early, if any. */
export interface WriteWarmUpResult {
  readonly rounds: number;
  /** The wide mentions' sends that stored email chunks (the chunk loop then wrote them). */
  readonly chunkedSends: number;
  readonly ms: number;
  readonly error: unknown;
}

export const WRITE_WARM_UP_DEFAULTS = { rounds: 3, users: 300, topicMessages: 600, emailChunkUsers: 25 } as const;

/** The group every member is in, mentioned each round. */
const WARM_UP_GROUP = "warm-up everyone";

/**
 * Content edits a round makes besides the seeded topic's: each of a fresh message, one
 * mention replaced by another (bench:peer's edit row, and a common real edit). The
 * mention diff, the newly mentioned user's missed-message email and push, and the search
 * terms' bits run nowhere else in a round; three edits left them to the first real
 * edits, which cost ~1.5x a warm one until V8 had optimised them (bench/mutation-cpu).
 */
export const WARM_UP_MENTION_EDITS = 12;

/**
 * Creates the scratch store, runs the rounds, closes and removes it. Never throws: a
 * failure ends the warm-up (reported in `error`) and only leaves the process colder.
 */
export async function warmUpWrites(options: WriteWarmUpOptions): Promise<WriteWarmUpResult> {
  const start = performance.now();
  const rounds = options.rounds ?? WRITE_WARM_UP_DEFAULTS.rounds;
  // No rounds, no scratch store (its set-up alone warms the send path).
  if (!(rounds > 0)) return { rounds: 0, chunkedSends: 0, ms: 0, error: null };
  let done = 0;
  let chunkedSends = 0;
  let error: unknown = null;
  let dir: string | null = null;
  let store: Store | null = null;
  try {
    dir = mkdtempSync(join(tmpdir(), "parley-warm-up-"));
    store = openStore(dir, {
      renderer: options.renderer,
      noSync: true,
      holder: "parley serve's write warm-up",
      editEmailChunkUsers: options.emailChunkUsers ?? WRITE_WARM_UP_DEFAULTS.emailChunkUsers,
    });
    const scene = setUp(store, options.users ?? WRITE_WARM_UP_DEFAULTS.users);
    const seeded = seedTopic(store, scene, options.topicMessages ?? WRITE_WARM_UP_DEFAULTS.topicMessages);
    for (; done < rounds; done++) {
      await round(store, scene, seeded, done);
      chunkedSends += await wideMentions(store, scene, seeded.topic, done);
    }
  } catch (caught) {
    error = caught;
  } finally {
    try {
      store?.close();
    } catch (caught) {
      error ??= caught;
    }
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  }
  return { rounds: done, chunkedSends, ms: performance.now() - start, error };
}

interface Scene {
  readonly ownerId: number;
  readonly memberIds: readonly number[];
  readonly publicId: number;
  readonly privateId: number;
}

/** A realm with `users` members in a public channel, half of them in a private one with protected history. */
function setUp(store: Store, users: number): Scene {
  return store.batch(() => {
    const { realm, owner } = store.createRealm({
      subdomain: "warm-up",
      name: "Warm-up",
      owner: { email: "owner@warm-up.invalid", fullName: "Warm-up Owner" },
    });
    const memberIds = Array.from(
      { length: users },
      (_, i) =>
        store.createUser({ realmId: realm.id, email: `user${i}@warm-up.invalid`, fullName: `Warm-up User ${i}` }).id,
    );
    const everyone = [owner.id, ...memberIds];
    const publicId = store.subscribe(owner.id, { channels: [{ name: "warm public" }], principals: everyone })
      .createdChannelIds[0]!;
    const privateId = store.subscribe(owner.id, {
      channels: [{ name: "warm private" }],
      principals: everyone.filter((_, i) => i % 2 === 0),
      newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
    }).createdChannelIds[0]!;
    store.createGroup(owner.id, { name: WARM_UP_GROUP, members: memberIds });
    return { ownerId: owner.id, memberIds, publicId, privateId };
  });
}

/** Sends `count` messages to `topic` in the public channel, in one write; their IDs. */
function sendTopic(store: Store, scene: Scene, topic: string, count: number): number[] {
  const { memberIds, publicId } = scene;
  return store.batch(() =>
    Array.from(
      { length: count },
      (_, i) =>
        store.sendMessage({
          senderId: memberIds[i % memberIds.length]!,
          to: { type: "channel", channel: publicId, topic },
          content: `Message ${i} of ${topic}, for @**Warm-up User ${i % 7}** about the **plan**.`,
        }).id,
    ),
  );
}

/** The topic every round moves around: `size` messages, some read and followed. */
function seedTopic(store: Store, scene: Scene, size: number): { topic: string; last: number } {
  const topic = "warm-up";
  const ids = sendTopic(store, scene, topic, size);
  for (const [i, userId] of scene.memberIds.slice(0, 20).entries()) {
    store.updateFlags(userId, ids.slice(0, size >> 1), "read", "add");
    store.setTopicPolicy(userId, scene.publicId, topic, 1 + (i % 3));
  }
  return { topic, last: ids[ids.length - 1]! };
}

/**
 * WARM_UP_MENTION_EDITS content edits of fresh messages in the public channel, each
 * replacing a mention of one member by another's (who has not read it, so a missed-message
 * email is queued for them), as a client sends them: sent, then edited by its sender.
 */
async function mentionEdits(store: Store, scene: Scene, index: number): Promise<void> {
  const { memberIds, publicId } = scene;
  const nameOf = (userId: number) => store.getUser(userId)?.fullName ?? "";
  for (let i = 0; i < WARM_UP_MENTION_EDITS; i++) {
    const [sender, before, after] = [0, 1, 2].map((k) => memberIds[(index * 3 + i * 3 + k) % memberIds.length]!);
    const sent = await store.sendMessageGrouped({
      senderId: sender!,
      to: { type: "channel", channel: publicId, topic: `warm-up edits ${index}` },
      content: `Edit ${i} for @**${nameOf(before!)}|${before}** about the draft.`,
    });
    await store.updateMessageAsync(sender!, sent.id, {
      content: `Edit ${i} for @**${nameOf(after!)}|${after}** about the plan.`,
    });
  }
}

/**
 * One round: the topic moved as the real large moves are (updateMessageAsync stages
 * them): renamed, to the private channel and back, resolved and unresolved; its last
 * message edited; and a small topic sent and deleted.
 */
async function round(store: Store, scene: Scene, seeded: { topic: string; last: number }, index: number) {
  const { ownerId, publicId, privateId } = scene;
  const { topic, last } = seeded;
  const move = (input: Parameters<Store["updateMessageAsync"]>[2]) =>
    store.updateMessageAsync(ownerId, last, { propagateMode: "change_all", ...input });
  await move({ topic: `${topic} renamed` });
  await move({ channelId: privateId, sendNotificationToOldThread: true, sendNotificationToNewThread: true });
  await move({ channelId: publicId, topic, sendNotificationToOldThread: true, sendNotificationToNewThread: true });
  await move({ topic: `✔ ${topic}` });
  await move({ topic });
  const sender = store.getMessage(ownerId, last).message.senderId;
  await store.updateMessageAsync(sender, last, { content: `Edited ${index}.` });
  await mentionEdits(store, scene, index);
  const doomed = `warm-up delete ${index}`;
  sendTopic(store, scene, doomed, 50);
  await store.deleteTopic(ownerId, publicId, doomed);
}

/**
 * @**all** and a group mention of every member in the public channel, and @**topic** in the
 * seeded topic (every member took part), each sent as a client's is and its stored email chunks
 * written by the chunk loop before the next; how many of them stored chunks.
 */
async function wideMentions(store: Store, scene: Scene, topic: string, index: number): Promise<number> {
  const { ownerId, publicId } = scene;
  const state = internals(store);
  const sends = [
    { topic: `warm-up all ${index}`, content: `@**all** round ${index} is done.` },
    { topic: `warm-up group ${index}`, content: `@*${WARM_UP_GROUP}* round ${index} is done.` },
    { topic, content: `@**topic** round ${index} is done.` },
  ];
  const chunksStored = () => {
    let n = 0;
    for (const _ of state.tables.editEmailChunks.getKeys()) n++;
    return n;
  };
  let chunked = 0;
  for (const send of sends) {
    await editEmailsWritten(state);
    const before = chunksStored();
    await store.sendMessageGrouped({
      // The owner: in a channel of more than a few subscribers only admins may use wildcards.
      senderId: ownerId,
      to: { type: "channel", channel: publicId, topic: send.topic },
      content: send.content,
    });
    if (chunksStored() > before) chunked++;
  }
  await editEmailsWritten(state);
  return chunked;
}
