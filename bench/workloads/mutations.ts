/**
 * @module bench/workloads/mutations
 * Issue #28's benchmark rows, engine side: edit a message's content in the
 * 10,000-subscriber channel, move a 5,000-message topic to a private channel
 * (change_all), resolve a 1,000-message topic, delete a 1,000-message topic.
 *
 * Each iteration works on state of its own, put in place untimed by setup(): a fresh
 * message or topic (sent the same way on both sides, so message IDs stay aligned with
 * the PostgreSQL peer) and the topic's user_topic rows. What the two sides must agree
 * on afterwards is declared once here (MutationCheck) and read by both: the IDs of each
 * narrow the operation touches and the user_topic rows it moves.
 */
import type { Store } from "../../src/engine/index.js";
import type { UpdateMessageInput } from "../../src/engine/actions/update-message.js";
import type { Manifest } from "../../tools/generate/manifest.js";

export const MUTATION_PREFIX = "mutate: ";
export const MUTATION_ROWS = {
  edit: `${MUTATION_PREFIX}edit content, 10k-subscriber channel`,
  move: `${MUTATION_PREFIX}move 5000-message topic to a private channel`,
  resolve: `${MUTATION_PREFIX}resolve 1000-message topic`,
  deleteTopic: `${MUTATION_PREFIX}delete 1000-message topic`,
} as const;
export type MutationKind = keyof typeof MUTATION_ROWS;

export const TOPIC_SIZES: Record<Exclude<MutationKind, "edit">, number> = {
  move: 5000,
  resolve: 1000,
  deleteTopic: 1000,
};

/** Words no generated message holds, stemmed to themselves by both systems' English stemmers. */
export const WORDS = { topic: "zyglum", before: "blorft", after: "snorgh" } as const;
export const RESOLVED_PREFIX = "✔ ";
export const PRIVATE_CHANNEL_NAME = "bench private target";
/** Zulip's UserTopic.VisibilityPolicy. */
export const POLICY = { muted: 1, unmuted: 2, followed: 3 } as const;
/** How far back the checks compare a narrow (both sides page or limit to this). */
export const CHECK_DEPTH = 12_000;

/** Who does what, chosen from the peer's users (active or soft-deactivated) so both sides use the same IDs. */
export interface MutationCast {
  /** Edits, moves and resolves (an ordinary member, subscribed to the big channel). */
  readonly actor: number;
  /** Deletes topics (the realm owner: delete_topic is admin-only). */
  readonly admin: number;
  /** Sends the topics' messages. */
  readonly topicSender: number;
  /** Mentioned by the message before its edit, and after it. */
  readonly mentionedBefore: { readonly id: number; readonly name: string };
  readonly mentionedAfter: { readonly id: number; readonly name: string };
  /** Subscribers of the private target channel (the actor among them; active and idle users). */
  readonly privateMembers: readonly number[];
  /** An active user of the big channel outside the private channel: loses the moved messages. */
  readonly losingUser: number;
  /** user_topic rows each topic gets before the operation (moved or removed by it). */
  readonly topicPolicies: readonly { readonly userId: number; readonly policy: number }[];
}

export const topicName = (kind: MutationKind, iteration: number) => `bench ${kind} ${iteration}`;
export const topicContent = (topic: string, index: number) =>
  `Message ${index} of ${topic} about the ${WORDS.topic} plan.`;
export const editContent = (iteration: number, who: { readonly id: number; readonly name: string }, word: string) =>
  `Edit target ${iteration} for @**${who.name}|${who.id}** about ${word}.`;

/** One narrow (or the user_topic rows) both sides must agree on after an operation. */
export type MutationCheck =
  | {
      readonly name: string;
      readonly kind: "narrow";
      readonly userId: number;
      readonly channelId?: number;
      /** The channel has protected history (the peer reads it through the user's rows). */
      readonly protectedHistory?: boolean;
      readonly topic?: string;
      readonly search?: string;
      readonly mentioned?: boolean;
    }
  | {
      readonly name: string;
      readonly kind: "userTopics";
      readonly userIds: readonly number[];
      readonly topics: readonly string[];
    };

export type CheckValues = Record<string, readonly (number | string)[]>;

/** user_topic rows as comparable strings. */
export const userTopicKey = (userId: number, channelId: number, topic: string, policy: number) =>
  `${userId}:${channelId}:${topic.toLowerCase()}:${policy}`;

export function mutationChecks(
  kind: MutationKind,
  iteration: number,
  m: Manifest,
  cast: MutationCast,
  privateChannelId: number,
): MutationCheck[] {
  const general = m.generalChannelId;
  const topic = topicName(kind, iteration);
  const narrow = (
    name: string,
    rest: Omit<Extract<MutationCheck, { kind: "narrow" }>, "name" | "kind" | "userId">,
  ) => ({
    name,
    kind: "narrow" as const,
    userId: cast.actor,
    ...rest,
  });
  const userTopics = (topics: string[]): MutationCheck => ({
    name: "user_topic rows",
    kind: "userTopics",
    userIds: cast.topicPolicies.map((p) => p.userId),
    topics,
  });
  switch (kind) {
    case "edit":
      return [
        narrow(`search '${WORDS.after}'`, { search: WORDS.after }),
        narrow(`search '${WORDS.before}'`, { search: WORDS.before }),
        {
          ...narrow("is:mentioned of the user mentioned before", { mentioned: true }),
          userId: cast.mentionedBefore.id,
        },
        { ...narrow("is:mentioned of the user mentioned after", { mentioned: true }), userId: cast.mentionedAfter.id },
        narrow("channel (big)", { channelId: general }),
      ];
    case "move":
      return [
        narrow("channel (big)", { channelId: general }),
        narrow("channel (private target)", { channelId: privateChannelId, protectedHistory: true }),
        narrow("topic in the private target", { channelId: privateChannelId, protectedHistory: true, topic }),
        narrow("topic in the big channel", { channelId: general, topic }),
        narrow(`search '${WORDS.topic}'`, { search: WORDS.topic }),
        { ...narrow("all messages of a user who loses access", {}), userId: cast.losingUser },
        userTopics([topic]),
      ];
    case "resolve":
      return [
        narrow("channel (big)", { channelId: general }),
        narrow("resolved topic", { channelId: general, topic: RESOLVED_PREFIX + topic }),
        narrow("old topic name", { channelId: general, topic }),
        narrow(`search '${WORDS.topic}'`, { search: WORDS.topic }),
        userTopics([topic, RESOLVED_PREFIX + topic]),
      ];
    case "deleteTopic":
      return [
        narrow("channel (big)", { channelId: general }),
        narrow("deleted topic", { channelId: general, topic }),
        narrow(`search '${WORDS.topic}'`, { search: WORDS.topic }),
        userTopics([topic]),
      ];
  }
}

/**
 * Durations of the synchronous store calls one operation made (the event loop is held
 * for each); empty for an asynchronous one (delete_topic yields between its batches, and
 * PATCH's updateMessageAsync stages a large move over several turns: the harness's loop
 * probes measure what it holds).
 */
export interface EngineRun {
  readonly callsMs: readonly number[];
  /** Store calls made (delete_topic answers complete after one or more). */
  readonly calls: number;
}

export interface EngineMutations {
  readonly privateChannelId: number;
  setup(kind: MutationKind, iteration: number): Promise<number[]>;
  run(kind: MutationKind, iteration: number): Promise<EngineRun>;
  check(kind: MutationKind, iteration: number): CheckValues;
}

/**
 * The engine side. Creates the private target channel (protected history) once;
 * `cast` comes from the peer's tables so both sides pick the same users.
 */
export function engineMutations(store: Store, m: Manifest, cast: MutationCast): EngineMutations {
  const general = m.generalChannelId;
  const created = store.subscribe(cast.actor, {
    channels: [{ name: PRIVATE_CHANNEL_NAME }],
    principals: [...cast.privateMembers],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
  });
  const privateChannelId = created.createdChannelIds[0]!;
  const sent = new Map<string, number[]>();
  const key = (kind: MutationKind, iteration: number) => `${kind}:${iteration}`;

  const send = (senderId: number, topic: string, contents: readonly string[]) =>
    Promise.all(
      contents.map((content) =>
        store.sendMessageGrouped({
          senderId,
          to: { type: "channel", channel: general, topic },
          content,
          client: "website",
        }),
      ),
    ).then((results) => results.map((r) => r.id));

  /** Every ID of a narrow, newest first in pages of 5000 (the engine's fetch cap), up to CHECK_DEPTH. */
  const allIds = (userId: number, narrow: readonly { operator: string; operand: unknown }[]): number[] => {
    const found: number[] = [];
    let anchor: number | "newest" = "newest";
    while (found.length < CHECK_DEPTH) {
      const page: readonly number[] = store.getMessageWindow(userId, {
        narrow,
        anchor,
        numBefore: 5000,
        numAfter: 0,
      }).ids;
      found.unshift(...page);
      if (page.length < 5000 || page[0]! <= 1) break;
      anchor = page[0]! - 1;
    }
    return found.slice(-CHECK_DEPTH);
  };

  return {
    privateChannelId,
    async setup(kind, iteration) {
      let ids: number[];
      if (kind === "edit") {
        ids = await send(cast.actor, topicName(kind, iteration), [
          editContent(iteration, cast.mentionedBefore, WORDS.before),
        ]);
      } else {
        const topic = topicName(kind, iteration);
        const contents = Array.from({ length: TOPIC_SIZES[kind] }, (_, i) => topicContent(topic, i));
        ids = await send(cast.topicSender, topic, contents);
        for (const p of cast.topicPolicies) store.setTopicPolicy(p.userId, general, topic, p.policy);
      }
      sent.set(key(kind, iteration), ids);
      return ids;
    },
    async run(kind, iteration) {
      const ids = sent.get(key(kind, iteration))!;
      const newest = ids[ids.length - 1]!;
      const topic = topicName(kind, iteration);
      // As PATCH /messages/{id} calls it: a large move is staged over several turns before
      // its one write (actions/move-staging), so the harness's loop probe measures the hold.
      const patch = async (input: UpdateMessageInput): Promise<EngineRun> => {
        await store.updateMessageAsync(cast.actor, newest, input);
        return { callsMs: [], calls: 1 };
      };
      switch (kind) {
        case "edit":
          return patch({ content: editContent(iteration, cast.mentionedAfter, WORDS.after) });
        case "move":
          // Zulip's API defaults for the notices: a "moved here" notice in the new thread only.
          return patch({
            channelId: privateChannelId,
            propagateMode: "change_all",
            sendNotificationToOldThread: false,
            sendNotificationToNewThread: true,
          });
        case "resolve":
          return patch({
            topic: RESOLVED_PREFIX + topic,
            propagateMode: "change_all",
            sendNotificationToOldThread: false,
            sendNotificationToNewThread: true,
          });
        case "deleteTopic": {
          // A client repeats POST /streams/{id}/delete_topic until it answers complete.
          let complete = false;
          let rounds = 0;
          while (!complete) {
            if (++rounds > 1000) throw new Error("deleteTopic never answered complete");
            complete = (await store.deleteTopic(cast.admin, general, topic)).complete;
          }
          return { callsMs: [], calls: rounds };
        }
      }
    },
    check(kind, iteration) {
      const values: CheckValues = {};
      for (const c of mutationChecks(kind, iteration, m, cast, privateChannelId)) {
        if (c.kind === "userTopics") {
          const wanted = new Set(c.topics.map((t) => t.toLowerCase()));
          values[c.name] = c.userIds
            .flatMap((u) => store.userTopics(u))
            .filter((t) => wanted.has(t.topic.toLowerCase()))
            .map((t) => userTopicKey(t.userId, t.channelId, t.topic, t.policy))
            .sort();
          continue;
        }
        const narrow: { operator: string; operand: unknown }[] = [];
        if (c.channelId !== undefined) narrow.push({ operator: "channel", operand: c.channelId });
        if (c.topic !== undefined) narrow.push({ operator: "topic", operand: c.topic });
        if (c.search !== undefined) narrow.push({ operator: "search", operand: c.search });
        if (c.mentioned) narrow.push({ operator: "is", operand: "mentioned" });
        values[c.name] = allIds(c.userId, narrow);
      }
      return values;
    },
  };
}
