/**
 * @module test/engine/reference/model
 * A brute-force reference model of one Zulip realm (plus the messages of other realms,
 * so that realm isolation is checked too). It records every operation the property
 * test performs through the public Store API and answers GET /messages and the flag
 * endpoints by filtering a plain array of all messages, applying Zulip's rules
 * literally (../shared/reference/zulip-messages.md §1–§3, §5 and zerver/lib/narrow.py):
 *
 * - UserMessage rows are an explicit Map per user: created at send for the sender,
 *   the DM participants and the channel's active subscribers who are active users,
 *   and later as "historical" rows by flag changes. Nothing is derived from intervals.
 * - ok_to_include_history, each operator's predicate, muting conditions, the
 *   first_unread probe and the range formulas (./window.ts) are transcribed one by one.
 *
 * No code from src/engine is used here.
 */
import { LARGER_THAN_MAX_MESSAGE_ID, referenceWindow } from "./window.js";

export const ROLE_OWNER = 100;
export const ROLE_ADMIN = 200;
export const ROLE_MODERATOR = 300;
export const ROLE_MEMBER = 400;
export const ROLE_GUEST = 600;

export const POLICY_MUTED = 1;
export const POLICY_UNMUTED = 2;
export const POLICY_FOLLOWED = 3;

export const RESOLVED_PREFIX = "✔ ";
export const EMPTY_TOPIC_DISPLAY_NAME = "general chat";

export interface RefUser {
  readonly id: number;
  readonly realmId: number;
  readonly email: string;
  readonly fullName: string;
  readonly role: number;
  active: boolean;
}

export interface RefChannel {
  readonly id: number;
  readonly realmId: number;
  readonly name: string;
  readonly inviteOnly: boolean;
  readonly historyPublicToSubscribers: boolean;
}

/**
 * A message as stored now: edits change its content fields, moves its channel and
 * topic (./mutations.ts).
 */
export interface RefMessage {
  readonly id: number;
  readonly realmId: number;
  readonly senderId: number;
  channelId: number | null;
  /** DM participants, sorted, sender included; null for channel messages. */
  readonly dmUsers: readonly number[] | null;
  /** Stored topic ("" for DMs). */
  topic: string;
  /** The raw content as sent or last edited (what prev_content_sha256 hashes). */
  content: string;
  /** Lower-case plain words of the content (search adds the topic's, see wordsOf). */
  contentWords: ReadonlySet<string>;
  hasLink: boolean;
  mentionedUserIds: readonly number[];
  /** The model's clock when sent (UNIX seconds): edit, move and undo time limits. */
  readonly dateSent: number;
  /** Notification Bot's "marked this topic as resolved/unresolved" (Zulip's RESOLVE_TOPIC_NOTIFICATION). */
  readonly resolveNotice: boolean;
}

/** Lower-case plain words of a topic, as search sees them. */
export function topicWords(topic: string): string[] {
  return topic
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase());
}

/** One UserMessage row's editable and send-time flags. */
export interface RefRow {
  read: boolean;
  starred: boolean;
  collapsed: boolean;
  mentioned: boolean;
  historical: boolean;
}

export interface RefSubscription {
  active: boolean;
  muted: boolean;
}

/** A narrow term in wire form (what the test sends to the engine). */
export interface WireTerm {
  readonly operator: string;
  readonly operand: string | number | readonly number[];
  readonly negated: boolean;
}

export type RefAnchor = number | "newest" | "oldest" | "first_unread";

export interface RefQuery {
  readonly userId: number;
  readonly narrow: readonly WireTerm[];
  readonly anchor: RefAnchor;
  readonly numBefore: number;
  readonly numAfter: number;
  readonly includeAnchor: boolean;
}

export interface RefError {
  readonly error: { readonly code: string; readonly message: string };
}

export interface RefGetMessages {
  readonly anchor: number;
  readonly foundAnchor: boolean;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
  readonly historyLimited: boolean;
  readonly messages: readonly { readonly id: number; readonly flags: readonly string[] }[];
}

export interface RefFlagChange {
  readonly updatedCount: number;
  readonly ignoredBecauseNotSubscribedChannels?: readonly number[];
}

export interface RefNarrowFlagChange extends RefFlagChange {
  readonly processedCount: number;
  readonly firstProcessedId: number | null;
  readonly lastProcessedId: number | null;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
}

export type EditableFlag = "read" | "starred" | "collapsed";

/** A resolved narrow term: a predicate over (message, viewer). */
type Resolved =
  | { kind: "channel"; channelId: number; negated: boolean }
  | { kind: "channelsPublic"; negated: boolean }
  | { kind: "topic"; topic: string; negated: boolean }
  | { kind: "sender"; userId: number; negated: boolean }
  | { kind: "dm"; userIds: number[]; negated: boolean }
  | { kind: "dmIncluding"; userId: number; negated: boolean }
  | { kind: "groupPmWith"; userId: number; negated: boolean }
  | { kind: "is"; what: string; negated: boolean }
  | { kind: "hasLink"; negated: boolean }
  | { kind: "inHome"; negated: boolean }
  | { kind: "inAll"; negated: boolean }
  | { kind: "search"; words: string[]; negated: boolean }
  | { kind: "id"; messageId: number; negated: boolean };

class NarrowError extends Error {
  constructor(readonly desc: string) {
    super(`Invalid narrow operator: ${desc}`);
  }
}

/** PostgreSQL upper() on the ASCII/Latin topics the test uses. */
const upper = (s: string): string => s.toUpperCase();

export const MAX_MESSAGES_PER_UPDATE = 5000;

/**
 * Switches that make the reference follow the engine where it knowingly deviates from
 * Zulip, so that further discrepancies can be hunted while one is unfixed. All off by
 * default: the reference is Zulip.
 */
export interface RefQuirks {
  /**
   * find_first_unread_anchor takes the narrow's channel for the muting conditions from
   * the first channel term even when it is negated (get_channel_from_narrow_access_unchecked);
   * with this quirk only a non-negated channel term counts.
   */
  readonly firstUnreadIgnoresNegatedChannel?: boolean;
  /**
   * A rename that changes only letter case (same channel) leaves users' topic policies
   * alone when nothing else of the topic is left behind; Zulip resets them (its orig
   * and target policies are the same rows: the first is cleared, the second is then
   * taken as already right), and for change_one/change_later counts the renamed
   * messages themselves as left behind, so its sender follows the topic "on initiation".
   */
  readonly caseOnlyRenameKeepsPolicies?: boolean;
}

export class RefModel {
  readonly realmId: number;
  readonly quirks: RefQuirks;
  readonly users = new Map<number, RefUser>();
  readonly channels = new Map<number, RefChannel>();
  /** Every message of every realm, in send order (= ascending ID). */
  readonly messages: RefMessage[] = [];
  /** userId -> messageId -> row. */
  readonly rows = new Map<number, Map<number, RefRow>>();
  /** `${userId}:${channelId}` -> subscription. */
  readonly subs = new Map<string, RefSubscription>();
  /** userId -> `${channelId}:${UPPER(topic)}` -> policy (0 entries removed). */
  readonly topicPolicies = new Map<number, Map<string, { channelId: number; topicUpper: string; policy: number }>>();
  /** Every operation applied, for failure reports. */
  readonly log: string[] = [];
  /** IDs of deleted messages (refused actions name them). */
  readonly deletedIds: number[] = [];
  /** The clock the engine under test is given (UNIX seconds); messages take it as their date. */
  now = 1_700_000_000;

  constructor(realmId: number, quirks: RefQuirks = {}) {
    this.realmId = realmId;
    this.quirks = quirks;
  }

  // ---------------------------------------------------------------- recording

  addUser(user: Omit<RefUser, "active">): void {
    this.users.set(user.id, { ...user, active: true });
    this.log.push(`createUser ${JSON.stringify(user)}`);
  }

  addChannel(channel: RefChannel): void {
    this.channels.set(channel.id, channel);
    this.log.push(`createChannel ${JSON.stringify(channel)}`);
  }

  setSubscribed(userId: number, channelId: number, active: boolean): void {
    const key = `${userId}:${channelId}`;
    const current = this.subs.get(key);
    // Zulip keeps the Subscription row (and its is_muted) across unsubscribe/resubscribe.
    if (current) current.active = active;
    else this.subs.set(key, { active, muted: false });
    this.log.push(`${active ? "subscribe" : "unsubscribe"} user=${userId} channel=${channelId}`);
  }

  setChannelMuted(userId: number, channelId: number, muted: boolean): void {
    const sub = this.subs.get(`${userId}:${channelId}`);
    if (!sub?.active) throw new Error("model: mute requires an active subscription");
    sub.muted = muted;
    this.log.push(`setChannelMuted user=${userId} channel=${channelId} muted=${muted}`);
  }

  setUserActive(userId: number, active: boolean): void {
    this.user(userId).active = active;
    this.log.push(`setUserActive user=${userId} active=${active}`);
  }

  setTopicPolicy(userId: number, channelId: number, topic: string, policy: number): void {
    const name = this.normalizeTopic(topic);
    let map = this.topicPolicies.get(userId);
    if (!map) this.topicPolicies.set(userId, (map = new Map()));
    const key = `${channelId}:${upper(name)}`;
    if (policy === 0) map.delete(key);
    else map.set(key, { channelId, topicUpper: upper(name), policy });
    this.log.push(`setTopicPolicy user=${userId} channel=${channelId} topic=${JSON.stringify(topic)} policy=${policy}`);
  }

  /** The stored form of a topic: trimmed; the empty-topic display names become "". */
  normalizeTopic(topic: string): string {
    const t = topic.trim();
    return t === "(no topic)" || t === EMPTY_TOPIC_DISPLAY_NAME ? "" : t;
  }

  /** Records a sent message and creates UserMessage rows like Zulip's create_user_messages. */
  recordMessage(input: {
    id: number;
    realmId: number;
    senderId: number;
    channelId: number | null;
    dmUsers: readonly number[] | null;
    topic: string;
    contentWords: readonly string[];
    hasLink: boolean;
    mentionedUserIds: readonly number[];
    readBySender: boolean;
    /** The raw content (defaults to the words joined). */
    content?: string;
    /** A Notification Bot resolve notice: no automatic topic policies (its sender is a bot). */
    resolveNotice?: boolean;
    /** Zulip's limit_unread_user_ids and mark_as_read: receivers who get the message read. */
    readBy?: ReadonlySet<number>;
  }): RefMessage {
    const topic = input.channelId === null ? "" : this.normalizeTopic(input.topic);
    if (input.realmId === this.realmId && input.channelId !== null && input.resolveNotice !== true)
      this.automaticPolicies(input.senderId, input.channelId, topic, input.mentionedUserIds);
    const message: RefMessage = {
      id: input.id,
      realmId: input.realmId,
      senderId: input.senderId,
      channelId: input.channelId,
      dmUsers: input.dmUsers === null ? null : [...new Set(input.dmUsers)].sort((a, b) => a - b),
      topic,
      content: input.content ?? input.contentWords.join(" "),
      contentWords: new Set<string>(input.contentWords.map((w) => w.toLowerCase())),
      hasLink: input.hasLink,
      mentionedUserIds: [...input.mentionedUserIds],
      dateSent: this.now,
      resolveNotice: input.resolveNotice ?? false,
    };
    this.messages.push(message);
    const { readBy, ...logged } = input;
    this.log.push(
      `send ${JSON.stringify({ ...logged, topic, ...(readBy ? { readBy: [...readBy] } : {}), at: this.now })}`,
    );
    if (input.realmId !== this.realmId) return message;
    // The Notification Bot is not one of the modelled users: its own row is never read.
    const recipients = new Set<number>(message.resolveNotice ? [] : [input.senderId]);
    if (message.dmUsers !== null) for (const u of message.dmUsers) recipients.add(u);
    else {
      for (const user of this.users.values()) {
        if (user.active && this.subs.get(`${user.id}:${input.channelId}`)?.active) recipients.add(user.id);
      }
    }
    for (const userId of recipients) {
      const read = userId === input.senderId ? input.readBySender : (readBy?.has(userId) ?? false);
      this.rowsOf(userId).set(message.id, {
        read,
        starred: false,
        collapsed: false,
        mentioned: message.mentionedUserIds.includes(userId),
        historical: false,
      });
    }
    return message;
  }

  /** The ID the next message gets (IDs are global, in send order). */
  nextMessageId(): number {
    const last = Math.max(0, ...this.messages.map((m) => m.id), ...this.deletedIds);
    return last + 1;
  }

  /** Words search matches a message by: its content's and its topic's. */
  wordsOf(m: RefMessage): ReadonlySet<string> {
    const words = new Set(m.contentWords);
    for (const w of topicWords(m.topic)) words.add(w);
    return words;
  }

  /** Deletes messages and every UserMessage row of them (Zulip moves both to the archive). */
  removeMessages(ids: ReadonlySet<number>): void {
    for (let i = this.messages.length - 1; i >= 0; i--) if (ids.has(this.messages[i]!.id)) this.messages.splice(i, 1);
    for (const rows of this.rows.values()) for (const id of ids) rows.delete(id);
    this.deletedIds.push(...ids);
  }

  message(id: number): RefMessage | undefined {
    return this.messages.find((m) => m.id === id && m.realmId === this.realmId);
  }

  /**
   * Zulip's automatic topic policies on send (zerver/actions/message_send.py), with
   * every user on Zulip's default settings: the sender follows a topic they start
   * (automatically_follow_topics_policy = on initiation) and unmutes, in a channel
   * they muted, a topic they send to (automatically_unmute_topics_in_muted_streams_policy
   * = on send); followed is never downgraded. Subscribed users mentioned by name follow
   * the topic (automatically_follow_topics_where_mentioned) unless they muted or follow it.
   */
  automaticPolicies(senderId: number, channelId: number, topic: string, mentionedUserIds: readonly number[]): void {
    const starts = !this.messages.some((m) => m.channelId === channelId && upper(m.topic) === upper(topic));
    const current = this.policyOf(senderId, channelId, topic);
    const channelMuted =
      this.subs.get(`${senderId}:${channelId}`)?.active === true &&
      this.subs.get(`${senderId}:${channelId}`)?.muted === true;
    if (current !== POLICY_FOLLOWED) {
      if (starts) this.setTopicPolicy(senderId, channelId, topic, POLICY_FOLLOWED);
      else if (channelMuted && current !== POLICY_UNMUTED)
        this.setTopicPolicy(senderId, channelId, topic, POLICY_UNMUTED);
    }
    for (const userId of new Set(mentionedUserIds)) {
      if (userId === senderId || !this.users.get(userId)?.active || !this.subs.get(`${userId}:${channelId}`)?.active)
        continue;
      const policy = this.policyOf(userId, channelId, topic);
      if (policy !== POLICY_MUTED && policy !== POLICY_FOLLOWED)
        this.setTopicPolicy(userId, channelId, topic, POLICY_FOLLOWED);
    }
  }

  // ---------------------------------------------------------------- lookups

  user(id: number): RefUser {
    const u = this.users.get(id);
    if (!u) throw new Error(`model: no user ${id}`);
    return u;
  }

  channel(id: number): RefChannel {
    const c = this.channels.get(id);
    if (!c) throw new Error(`model: no channel ${id}`);
    return c;
  }

  rowsOf(userId: number): Map<number, RefRow> {
    let m = this.rows.get(userId);
    if (!m) this.rows.set(userId, (m = new Map()));
    return m;
  }

  isSubscribed(userId: number, channelId: number): boolean {
    return this.subs.get(`${userId}:${channelId}`)?.active ?? false;
  }

  realmMessages(): RefMessage[] {
    return this.messages.filter((m) => m.realmId === this.realmId);
  }

  /** Zulip's can_access_stream_history (web-public is off in these realms). */
  canAccessChannelHistory(user: RefUser, channel: RefChannel): boolean {
    if (channel.realmId !== user.realmId) return false;
    if (!channel.inviteOnly && user.role !== ROLE_GUEST) return true;
    if (channel.historyPublicToSubscribers) return this.isSubscribed(user.id, channel.id);
    return false;
  }

  /**
   * Channel visible to the user (subscribe, topic settings): public for non-guests, subscribed, or private for admins.
   */
  canSeeChannel(user: RefUser, channel: RefChannel): boolean {
    if (!channel.inviteOnly && user.role !== ROLE_GUEST) return true;
    if (this.isSubscribed(user.id, channel.id)) return true;
    return channel.inviteOnly && user.role <= ROLE_ADMIN;
  }

  /**
   * May the user set a topic policy here (POST /user_topics)? Removing one: any channel
   * of the realm; setting one: access_stream_by_id's content access.
   */
  canSetTopicPolicy(user: RefUser, channel: RefChannel, policy: number): boolean {
    if (channel.realmId !== this.realmId) return false;
    if (policy === 0) return true;
    return this.isSubscribed(user.id, channel.id) || (!channel.inviteOnly && user.role !== ROLE_GUEST);
  }

  /** access_stream_for_send_message (everyone may post; no archived channels). */
  canSendToChannel(user: RefUser, channel: RefChannel): boolean {
    if (!user.active) return false;
    if (!channel.inviteOnly && user.role !== ROLE_GUEST) return true;
    return this.isSubscribed(user.id, channel.id);
  }

  /** has_message_access for a message without a row (zerver/lib/message.py). */
  canAccessRowless(user: RefUser, message: RefMessage | undefined): boolean {
    if (!message || message.realmId !== user.realmId || message.channelId === null) return false;
    const channel = this.channel(message.channelId);
    if (!channel.inviteOnly && user.role !== ROLE_GUEST) return true;
    if (!channel.historyPublicToSubscribers) return false; // needs a row, and there is none
    return this.isSubscribed(user.id, channel.id);
  }

  policyOf(userId: number, channelId: number, topic: string): number {
    return this.topicPolicies.get(userId)?.get(`${channelId}:${upper(topic)}`)?.policy ?? 0;
  }

  /**
   * exclude_stream_and_topic_mutes as a predicate: does the message pass (is it NOT
   * excluded)? `channelId` is the channel the narrow names, or null.
   */
  passesMuting(userId: number, m: RefMessage, channelId: number | null): boolean {
    const policies = [...(this.topicPolicies.get(userId)?.values() ?? [])];
    const topicIs = (p: { channelId: number; topicUpper: string }) =>
      m.channelId === p.channelId && upper(m.topic) === p.topicUpper;
    const mutedTopics = policies.filter(
      (p) => p.policy === POLICY_MUTED && (channelId === null || p.channelId === channelId),
    );
    if (mutedTopics.some(topicIs)) return false;
    if (channelId === null) {
      const mutedChannels = [...this.channels.values()]
        .filter((c) => this.subs.get(`${userId}:${c.id}`)?.active && this.subs.get(`${userId}:${c.id}`)?.muted)
        .map((c) => c.id);
      if (mutedChannels.length === 0) return true;
      const included = policies.filter(
        (p) => mutedChannels.includes(p.channelId) && (p.policy === POLICY_FOLLOWED || p.policy === POLICY_UNMUTED),
      );
      const inMutedChannel = m.channelId !== null && mutedChannels.includes(m.channelId);
      if (inMutedChannel && !included.some(topicIs)) return false;
    }
    return true;
  }

  // ---------------------------------------------------------------- narrows

  private findUserRef(ref: string | number): RefUser | undefined {
    if (typeof ref === "number") {
      const u = this.users.get(ref);
      return u && u.realmId === this.realmId ? u : undefined;
    }
    const text = ref.trim();
    if (/^\d+$/.test(text)) return this.findUserRef(Number(text));
    for (const u of this.users.values()) if (u.email.toLowerCase() === text.toLowerCase()) return u;
    return undefined;
  }

  private resolveUser(operand: WireTerm["operand"]): number {
    if (Array.isArray(operand)) throw new NarrowError(`unknown user ${JSON.stringify(operand)}`);
    const u = this.findUserRef(operand as string | number);
    if (!u) throw new NarrowError(`unknown user ${String(operand)}`);
    return u.id;
  }

  /**
   * Deliberate deviation from Zulip (which looks narrow channels up unchecked): a
   * channel the user cannot see and was never subscribed to is unknown, like a
   * missing one, so that narrows are no existence oracle for private channels.
   */
  private resolveChannel(me: RefUser, operand: WireTerm["operand"]): number {
    const nameable = (c: RefChannel | undefined) =>
      c !== undefined && (this.canSeeChannel(me, c) || this.subs.has(`${me.id}:${c.id}`));
    if (typeof operand === "number") {
      const c = this.channels.get(operand);
      if (!nameable(c)) throw new NarrowError(`unknown channel ${operand}`);
      return operand;
    }
    const name = String(operand);
    const c =
      [...this.channels.values()].find((c) => c.name.toLowerCase() === name.toLowerCase()) ??
      (/^\d+$/.test(name) ? this.channels.get(Number(name)) : undefined);
    if (!c || !nameable(c)) throw new NarrowError(`unknown channel ${name}`);
    return c.id;
  }

  /** Resolves wire terms; then Zulip's channel/DM conflict check (doc §1.3, newer code). */
  resolveNarrow(me: RefUser, narrow: readonly WireTerm[]): Resolved[] {
    const out: Resolved[] = [];
    for (const t of narrow) {
      const negated = t.negated;
      switch (t.operator) {
        case "channel":
        case "stream":
          out.push({ kind: "channel", channelId: this.resolveChannel(me, t.operand), negated });
          break;
        case "channels":
        case "streams":
          if (t.operand !== "public") throw new NarrowError(`unknown channels operand ${String(t.operand)}`);
          out.push({ kind: "channelsPublic", negated });
          break;
        case "topic": {
          const raw = String(t.operand);
          out.push({ kind: "topic", topic: raw === EMPTY_TOPIC_DISPLAY_NAME ? "" : raw, negated });
          break;
        }
        case "sender":
          out.push({ kind: "sender", userId: this.resolveUser(t.operand), negated });
          break;
        case "dm":
        case "pm-with": {
          const refs: (string | number)[] = Array.isArray(t.operand)
            ? [...(t.operand as readonly number[])]
            : String(t.operand).split(",");
          const ids: number[] = [];
          for (const ref of refs) {
            const u = this.findUserRef(ref);
            if (!u)
              throw new NarrowError(
                `unknown user in ${Array.isArray(t.operand) ? JSON.stringify(t.operand) : String(t.operand)}`,
              );
            ids.push(u.id);
          }
          out.push({ kind: "dm", userIds: ids, negated });
          break;
        }
        case "dm-including":
          out.push({ kind: "dmIncluding", userId: this.resolveUser(t.operand), negated });
          break;
        case "group-pm-with":
          out.push({ kind: "groupPmWith", userId: this.resolveUser(t.operand), negated });
          break;
        case "is": {
          const what = t.operand === "private" ? "dm" : String(t.operand);
          if (!["dm", "starred", "unread", "mentioned", "resolved", "followed", "muted"].includes(what))
            throw new NarrowError(`unknown 'is' operand ${what}`);
          out.push({ kind: "is", what, negated });
          break;
        }
        case "has":
          if (t.operand !== "link") throw new Error(`model: has:${String(t.operand)} not modelled`);
          out.push({ kind: "hasLink", negated });
          break;
        case "in":
          if (t.operand === "home") out.push({ kind: "inHome", negated });
          else if (t.operand === "all") out.push({ kind: "inAll", negated });
          else throw new NarrowError(`unknown 'in' operand ${String(t.operand)}`);
          break;
        case "search":
          out.push({
            kind: "search",
            words: String(t.operand)
              .split(/\s+/)
              .filter((w) => w !== "")
              .map((w) => w.toLowerCase()),
            negated,
          });
          break;
        case "id": {
          const text = String(t.operand);
          if (!/^\d+$/.test(text) || Number(text) > 2147483647) throw new NarrowError("Invalid message ID");
          out.push({ kind: "id", messageId: Number(text), negated });
          break;
        }
        default:
          throw new NarrowError(`unknown operator ${t.operator}`);
      }
    }
    // check_not_both_channel_and_dm_narrow: negated terms are ignored, except that a
    // negated is:dm counts as a channel term.
    let channelish = false;
    let dmish = false;
    for (const t of out) {
      if (t.kind === "is" && t.what === "dm") {
        if (t.negated) channelish = true;
        else dmish = true;
      } else if (!t.negated) {
        if (t.kind === "channel" || t.kind === "channelsPublic" || t.kind === "topic") channelish = true;
        if (t.kind === "dm" || t.kind === "dmIncluding" || t.kind === "groupPmWith") dmish = true;
      }
    }
    if (channelish && dmish) throw new NarrowError("No message can be both a channel message and direct message");
    return out;
  }

  /**
   * ok_to_include_history, literally: the last non-negated channel term decides, channels:public sets it, any is: but
   * resolved clears it.
   */
  includeHistory(user: RefUser, terms: readonly Resolved[]): boolean {
    let include = false;
    for (const t of terms) {
      if (t.kind === "channel" && !t.negated) include = this.canAccessChannelHistory(user, this.channel(t.channelId));
      else if (t.kind === "channelsPublic" && !t.negated && user.role !== ROLE_GUEST) include = true;
    }
    for (const t of terms) if (t.kind === "is" && t.what !== "resolved") include = false;
    return include;
  }

  /** One operator's condition (before negation). `row` is the viewer's row, if any. */
  private holds(t: Resolved, m: RefMessage, me: RefUser, row: RefRow | undefined): boolean {
    const isDm = m.dmUsers !== null;
    switch (t.kind) {
      case "channel":
        return m.channelId === t.channelId;
      case "channelsPublic":
        return m.channelId !== null && !this.channel(m.channelId).inviteOnly;
      case "topic":
        return m.channelId !== null && upper(m.topic) === upper(t.topic);
      case "sender":
        return m.senderId === t.userId;
      case "dm": {
        if (t.userIds.length === 0) return false;
        const participants = [...new Set([...t.userIds, me.id])].sort((a, b) => a - b);
        return isDm && JSON.stringify(m.dmUsers) === JSON.stringify(participants);
      }
      case "dmIncluding":
        if (t.userId === me.id) return isDm;
        return isDm && m.dmUsers!.includes(me.id) && m.dmUsers!.includes(t.userId);
      case "groupPmWith":
        return isDm && m.dmUsers!.length >= 3 && m.dmUsers!.includes(me.id) && m.dmUsers!.includes(t.userId);
      case "is":
        switch (t.what) {
          case "dm":
            return isDm;
          case "starred":
            return row?.starred ?? false;
          case "unread":
            return row !== undefined && !row.read;
          case "mentioned":
            return row?.mentioned ?? false;
          case "resolved":
            return m.channelId !== null && m.topic.startsWith(RESOLVED_PREFIX);
          case "followed":
            return m.channelId !== null && this.policyOf(me.id, m.channelId, m.topic) === POLICY_FOLLOWED;
          case "muted":
            return !this.passesMuting(me.id, m, null);
        }
        throw new Error(`model: is:${t.what}`);
      case "hasLink":
        return m.hasLink;
      case "inHome":
        return this.passesMuting(me.id, m, null);
      case "inAll":
        return true;
      case "search":
        return t.words.every((w) => this.wordsOf(m).has(w));
      case "id":
        return m.id === t.messageId;
    }
  }

  private matches(terms: readonly Resolved[], m: RefMessage, me: RefUser): boolean {
    const row = this.rows.get(me.id)?.get(m.id);
    // `in:all` is a no-op even when negated.
    return terms.every((t) => t.kind === "inAll" || this.holds(t, m, me, row) !== t.negated);
  }

  /**
   * find_first_unread_anchor: personal rows, the narrow, unread, muting (channel = first channel term, negated or not).
   */
  firstUnread(me: RefUser, terms: readonly Resolved[]): number {
    const firstChannel = terms.find(
      (t) => t.kind === "channel" && !(this.quirks.firstUnreadIgnoresNegatedChannel && t.negated),
    );
    const channelId = firstChannel?.kind === "channel" ? firstChannel.channelId : null;
    const rows = this.rowsOf(me.id);
    for (const m of this.realmMessages()) {
      const row = rows.get(m.id);
      if (!row || row.read) continue;
      if (!this.matches(terms, m, me)) continue;
      if (!this.passesMuting(me.id, m, channelId)) continue;
      return m.id;
    }
    return LARGER_THAN_MAX_MESSAGE_ID;
  }

  /** The sorted IDs matching the narrow for `me` (universe chosen by ok_to_include_history). */
  matchingIds(me: RefUser, terms: readonly Resolved[]): number[] {
    const shared = this.includeHistory(me, terms);
    const rows = this.rowsOf(me.id);
    const universe = this.realmMessages().filter((m) => (shared ? true : rows.has(m.id)));
    return universe.filter((m) => this.matches(terms, m, me)).map((m) => m.id);
  }

  /** The API flag list of a message for a user. */
  flagsOf(userId: number, messageId: number): string[] {
    const row = this.rows.get(userId)?.get(messageId);
    if (!row) return ["read", "historical"];
    const flags: string[] = [];
    if (row.read) flags.push("read");
    if (row.starred) flags.push("starred");
    if (row.collapsed) flags.push("collapsed");
    if (row.mentioned) flags.push("mentioned");
    if (row.historical) flags.push("historical");
    return flags;
  }

  private parseAnchor(me: RefUser, terms: readonly Resolved[], anchor: RefAnchor): number {
    if (anchor === "oldest") return 0;
    if (anchor === "newest") return LARGER_THAN_MAX_MESSAGE_ID;
    if (anchor === "first_unread") return this.firstUnread(me, terms);
    if (anchor < 0) return 0;
    if (anchor > LARGER_THAN_MAX_MESSAGE_ID) return LARGER_THAN_MAX_MESSAGE_ID;
    return anchor;
  }

  /** Runs the narrow + range machinery shared by GET /messages and flags by narrow. */
  private fetch(q: RefQuery): RefError | { anchor: number; window: ReturnType<typeof referenceWindow> } {
    const me = this.user(q.userId);
    if (!me.active) return { error: { code: "NOT_FOUND", message: "Account is deactivated" } };
    // get_messages_backend validates the range before building the narrow query.
    if (q.numBefore > 0 && q.numAfter > 0 && !q.includeAnchor) {
      return { error: { code: "BAD_REQUEST", message: "The anchor can only be excluded at an end of the range" } };
    }
    let terms: Resolved[];
    try {
      terms = this.resolveNarrow(me, q.narrow);
    } catch (e) {
      if (e instanceof NarrowError) return { error: { code: "BAD_NARROW", message: e.message } };
      throw e;
    }
    const anchor = this.parseAnchor(me, terms, q.anchor);
    const matching = this.matchingIds(me, terms);
    return { anchor, window: referenceWindow(matching, anchor, q.numBefore, q.numAfter, q.includeAnchor) };
  }

  /** GET /messages. */
  getMessages(q: RefQuery): RefGetMessages | RefError {
    const r = this.fetch(q);
    if ("error" in r) return r;
    const { window, anchor } = r;
    return {
      anchor,
      foundAnchor: window.foundAnchor,
      foundOldest: window.foundOldest,
      foundNewest: window.foundNewest,
      historyLimited: window.historyLimited,
      messages: window.ids.map((id) => ({ id, flags: this.flagsOf(q.userId, id) })),
    };
  }

  /** do_update_message_flags (doc §5.1). Mutates the model unless it errors. */
  updateFlags(
    userId: number,
    messageIds: readonly number[],
    flag: EditableFlag,
    op: "add" | "remove",
  ): RefFlagChange | RefError {
    const me = this.user(userId);
    if (!me.active) return { error: { code: "NOT_FOUND", message: "Account is deactivated" } };
    const adding = op === "add";
    const markingUnread = flag === "read" && !adding;
    const byId = new Map(this.messages.map((m) => [m.id, m]));
    let ids = [...new Set(messageIds)].sort((a, b) => a - b);
    const ignored = new Set<number>();
    if (markingUnread) {
      ids = ids.filter((id) => {
        const m = byId.get(id);
        // Deliberate deviation from Zulip: only messages the user may read are skipped
        // (and their channel reported); others fail below like missing IDs.
        const readable = m !== undefined && (this.rowsOf(userId).has(id) || this.canAccessRowless(me, m));
        if (m && m.channelId !== null && !this.isSubscribed(userId, m.channelId) && readable) {
          ignored.add(m.channelId);
          return false;
        }
        return true;
      });
    }
    const rows = this.rowsOf(userId);
    const toUpdate: number[] = [];
    const toCreate: number[] = [];
    for (const id of ids) {
      const row = rows.get(id);
      if (row) {
        if (row[flag] !== adding) toUpdate.push(id);
        continue;
      }
      // No row: the message counts as read+historical.
      const current = flag === "read";
      if (current === adding) continue;
      if (!this.canAccessRowless(me, byId.get(id)))
        return { error: { code: "BAD_REQUEST", message: "Invalid message(s)" } };
      toCreate.push(id);
    }
    for (const id of toCreate)
      rows.set(id, { read: true, starred: false, collapsed: false, mentioned: false, historical: true });
    for (const id of [...toUpdate, ...toCreate]) rows.get(id)![flag] = adding;
    this.log.push(`updateFlags user=${userId} ids=${JSON.stringify(messageIds)} ${op} ${flag}`);
    const result: RefFlagChange = { updatedCount: toUpdate.length + toCreate.length };
    return markingUnread
      ? { ...result, ignoredBecauseNotSubscribedChannels: [...ignored].sort((a, b) => a - b) }
      : result;
  }

  /** POST /messages/flags/narrow (doc §5.2). */
  updateFlagsForNarrow(q: RefQuery, flag: EditableFlag, op: "add" | "remove"): RefNarrowFlagChange | RefError {
    const numBefore = Math.min(
      q.numBefore,
      Math.max(MAX_MESSAGES_PER_UPDATE - q.numAfter, Math.floor(MAX_MESSAGES_PER_UPDATE / 2)),
    );
    const numAfter = Math.min(q.numAfter, MAX_MESSAGES_PER_UPDATE - numBefore);
    const r = this.fetch({ ...q, numBefore, numAfter });
    if ("error" in r) return r;
    const ids = r.window.ids;
    const change = this.updateFlags(q.userId, ids, flag, op);
    if ("error" in change) return change;
    this.log.push(`  (by narrow ${JSON.stringify(q)})`);
    return {
      ...change,
      processedCount: ids.length,
      firstProcessedId: ids[0] ?? null,
      lastProcessedId: ids[ids.length - 1] ?? null,
      foundOldest: r.window.foundOldest,
      foundNewest: r.window.foundNewest,
    };
  }
}
