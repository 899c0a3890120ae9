/**
 * @module actions/digest-emails
 * Zulip's weekly digest (zerver/lib/digest.py). On a realm's digest_weekday (UTC, Monday
 * 0, as Python's weekday()), when its digest_emails_enabled is on, each active human with
 * enable_digest_emails who has not been active for DIGEST_CUTOFF_DAYS days gets one email
 * with the hot conversations of their unmuted channels and the channels created in those
 * days, when there is at least one of either (Zulip's enough_traffic).
 *
 * Hot conversations, as Zulip picks them: the topics of the last DIGEST_CUTOFF_DAYS days,
 * the two with the most distinct human senders, then the longest (human messages) up to
 * MAX_HOT_CONVERSATIONS. A user sees a channel's messages from their current subscription
 * on only (Zulip leaves out channels whose subscription changed in the period, for the
 * same reason: the digest must not show what the user could not read).
 *
 * Durable and never doubled: a realm's run of the day is cut into writes of at most
 * DIGEST_CHUNK_USERS recipients (Zulip's chunks of 30), and each write enqueues its mails
 * in the outbox together with the run's progress (the last user ID looked at) in the meta
 * table. A restart resumes after the last committed write; a realm whose run is done for
 * the day is not looked at again until its next digest day.
 */
import { idsInRange } from "../index/bitmap-store.js";
import { foldTopic, key } from "../index/keys.js";
import { digestMail, type DigestConversation } from "../mail/digest.js";
import { enqueueMailInTxn } from "../mail/outbox.js";
import type { StoreState, WriteContext } from "../state.js";
import { getMessageRecord } from "../storage/message-records.js";
import { ROLE, type Channel, type Message, type Realm, type User } from "../types.js";
import { realmPropertyValue } from "./realm-settings.js";

/** Zulip's DIGEST_CUTOFF: away this many days, and the period the digest looks back on. */
export const DIGEST_CUTOFF_DAYS = 5;
export const MAX_HOT_CONVERSATIONS = 4;
export const DIGEST_CHUNK_USERS = 30;
const DAY_SECONDS = 86_400;

/** A realm's run on one digest day: users up to `throughUserId` are done; `done` once all are. */
interface DigestProgress {
  readonly day: string;
  readonly throughUserId: number;
  readonly done: boolean;
}

function progressKey(realmId: number): string {
  return `digestRun:${realmId}`;
}

function readProgress(state: StoreState, realmId: number): DigestProgress | null {
  const stored: unknown = state.tables.meta.get(progressKey(realmId));
  if (typeof stored !== "object" || stored === null) return null;
  const { day, throughUserId, done } = stored as Record<string, unknown>;
  return typeof day === "string" && typeof throughUserId === "number" && typeof done === "boolean"
    ? { day, throughUserId, done }
    : null;
}

/** The UTC date of `now` (UNIX seconds), and its weekday with Monday 0 (Python's weekday()). */
function utcDay(now: number): { day: string; weekday: number } {
  const date = new Date(now * 1000);
  return { day: date.toISOString().slice(0, 10), weekday: (date.getUTCDay() + 6) % 7 };
}

/** Whether the realm's digest run of today has work left. */
function runPending(state: StoreState, realm: Realm, now: number): boolean {
  if (realm.deactivated || realmPropertyValue(state, realm, "digest_emails_enabled") !== true) return false;
  const { day, weekday } = utcDay(now);
  if (realmPropertyValue(state, realm, "digest_weekday") !== weekday) return false;
  const progress = readProgress(state, realm.id);
  return !(progress?.day === day && progress.done);
}

/** Zulip's recipients: active humans with digests on, not active (presence) since the cutoff. */
function wantsDigest(state: StoreState, user: User, cutoff: number): boolean {
  if (!user.isActive || user.isBot || !state.settingsOf(user.id).enable_digest_emails) return false;
  const lastActive = state.presence.get(user.id)?.lastActive ?? null;
  return lastActive === null || lastActive <= cutoff;
}

export interface TopicTally {
  readonly channel: Channel;
  readonly topic: string;
  readonly firstId: number;
  readonly samples: { readonly message: Message; readonly sender: User }[];
  readonly humans: Set<string>;
  humanMessages: number;
}

/**
 * The topics of a channel's messages from `fromId` on, in order of their first message.
 * Kept for a run in `cache` (by channel and start), as Zulip caches get_recent_topics.
 */
function channelTopics(state: StoreState, channel: Channel, fromId: number, cache: DigestCache): TopicTally[] {
  const cacheKey = `${channel.id}:${fromId}`;
  const cached = cache.get(cacheKey);
  if (cached) return cached;
  const byTopic = new Map<string, TopicTally>();
  for (const id of idsInRange(state.bitmaps.getFrom(key.channel(channel.id), fromId), fromId)) {
    const message = getMessageRecord(state.tables, id);
    const sender = message && state.users.get(message.senderId);
    if (!message || !sender) continue;
    const folded = foldTopic(message.topic);
    let tally = byTopic.get(folded);
    if (!tally) {
      tally = { channel, topic: message.topic, firstId: id, samples: [], humans: new Set(), humanMessages: 0 };
      byTopic.set(folded, tally);
    }
    if (tally.samples.length < 2) tally.samples.push({ message, sender });
    if (!sender.isBot) {
      tally.humans.add(sender.fullName);
      tally.humanMessages++;
    }
  }
  const topics = [...byTopic.values()];
  cache.set(cacheKey, topics);
  return topics;
}

/** Zulip's get_hot_topics: the two most diverse, then the longest, up to MAX_HOT_CONVERSATIONS. */
function hotTopics(topics: TopicTally[]): TopicTally[] {
  const ordered = [...topics].sort((a, b) => a.firstId - b.firstId);
  const hot = [...ordered].sort((a, b) => b.humans.size - a.humans.size).slice(0, 2);
  for (const topic of [...ordered].sort((a, b) => b.humanMessages - a.humanMessages)) {
    if (hot.length >= MAX_HOT_CONVERSATIONS) break;
    if (!hot.includes(topic)) hot.push(topic);
  }
  return hot;
}

function conversationsFor(state: StoreState, user: User, boundary: number, cache: DigestCache): DigestConversation[] {
  const topics: TopicTally[] = [];
  for (const sub of state.subsByUser.get(user.id)?.values() ?? []) {
    if (!sub.active || sub.isMuted) continue;
    const channel = state.channels.get(sub.channelId);
    if (!channel || channel.isArchived) continue;
    const since = sub.intervals[sub.intervals.length - 1]?.from ?? boundary;
    topics.push(...channelTopics(state, channel, Math.max(boundary, since), cache));
  }
  return hotTopics(topics).map((t) => ({
    channel: t.channel,
    topic: t.topic,
    samples: t.samples,
    moreCount: t.humanMessages - t.samples.length,
    participants: [...t.humans].sort(),
  }));
}

/** Zulip's gather_new_streams: public channels created since the cutoff (web-public ones for guests). */
function newChannelsFor(state: StoreState, user: User, cutoff: number): Channel[] {
  const out: Channel[] = [];
  for (const channel of state.channels.values()) {
    if (channel.realmId !== user.realmId || channel.isArchived || channel.dateCreated <= cutoff) continue;
    if (user.role === ROLE.GUEST ? channel.isWebPublic : !channel.inviteOnly) out.push(channel);
  }
  return out.sort((a, b) => a.id - b.id);
}

/** Topic tallies shared by the chunks of one run (a loop round); start a new one per round. */
export type DigestCache = Map<string, TopicTally[]>;

export function newDigestCache(): DigestCache {
  return new Map();
}

/**
 * One write of the digest runs due at `now` (UNIX seconds): up to DIGEST_CHUNK_USERS
 * recipients of the first realm with work left, their mails enqueued with the run's
 * progress. Answers how many mails it enqueued, or null when no run has work left.
 */
export function sendDigestChunk(
  state: StoreState,
  now: number,
  realmUrl: (realm: Realm) => string,
  cache: DigestCache,
): number | null {
  const realm = [...state.realms.values()].find((r) => runPending(state, r, now));
  if (!realm) return null;
  const { day } = utcDay(now);
  const progress = readProgress(state, realm.id);
  const after = progress?.day === day ? progress.throughUserId : 0;
  const cutoff = now - DIGEST_CUTOFF_DAYS * DAY_SECONDS;
  const boundary = state.firstMessageSentFrom(cutoff + 1) ?? state.counters.nextMessageId;
  const userIds = [...state.usersOfRealm(realm.id)].filter((id) => id > after).sort((a, b) => a - b);
  const recipients: User[] = [];
  let through = after;
  for (const id of userIds) {
    if (recipients.length >= DIGEST_CHUNK_USERS) break;
    through = id;
    const user = state.users.get(id);
    if (user && wantsDigest(state, user, cutoff)) recipients.push(user);
  }
  const done = through === (userIds[userIds.length - 1] ?? after);
  const contentAllowedByRealm = realmPropertyValue(state, realm, "message_content_allowed_in_email_notifications");
  let sent = 0;
  state.write((ctx: WriteContext) => {
    for (const user of recipients) {
      const conversations = conversationsFor(state, user, boundary, cache);
      const newChannels = newChannelsFor(state, user, cutoff);
      // Zulip's enough_traffic: no mail that says nothing.
      if (conversations.length === 0 && newChannels.length === 0) continue;
      const showContent =
        contentAllowedByRealm !== false && state.settingsOf(user.id).message_content_in_email_notifications;
      enqueueMailInTxn(
        state,
        ctx,
        digestMail({ user, realm, realmUrl: realmUrl(realm), conversations, newChannels, showContent }),
      );
      sent++;
    }
    const next: DigestProgress = { day, throughUserId: through, done };
    state.tables.meta.putSync(progressKey(realm.id), next);
  });
  return sent;
}
