/**
 * What the client knows besides the open message list: people, subscriptions, recent
 * DM conversations, recent topics per channel and unread counts. Built from register's
 * state, changed only by events (apply) and by messages the list loads (noteMessages).
 */
import { contentEditOf, deletedIdsOf, isMention, moveOf } from "./message-events.js";
import { conversationKey, dmKey, dmUserIds, topicKey, type Directory } from "./narrow.js";
import { EmojiCatalog } from "./emoji-catalog.js";
import { RealmEmojiSet } from "./realm-emoji.js";
import { Permissions, policyFrom, ROLE } from "./permissions.js";
import type { InitialState, Message, ServerEvent, Subscription, User } from "./types.js";
import { Unreads } from "./unread.js";

/** Topics remembered per channel from messages seen (a channel's list from the server is kept whole). */
const TOPICS_PER_CHANNEL = 200;

export interface TypingNote {
  readonly key: string;
  readonly userId: number;
  readonly until: number;
}

export class ClientState implements Directory {
  readonly me: number;
  readonly users = new Map<number, User>();
  readonly subs = new Map<number, Subscription>();
  /** DM conversation key -> [user IDs, newest message ID]. */
  readonly dms = new Map<string, { userIds: readonly number[]; maxId: number }>();
  /** Channel -> lower-case topic -> [display name, newest message ID]. */
  readonly topics = new Map<number, Map<string, { name: string; maxId: number }>>();
  /** Channels whose whole topic list came from GET /users/me/{stream_id}/topics. */
  readonly topicsLoaded = new Set<number>();
  /** Loaded channels whose list a move or deletion may have changed (fetched again when shown). */
  readonly topicsStale = new Set<number>();
  readonly unreads: Unreads;
  readonly permissions: Permissions;
  /** The realm's custom emoji (register's realm_emoji, then realm_emoji events). */
  readonly realmEmoji: RealmEmojiSet;
  /** Every emoji by name, for the picker and `:` autocomplete (loaded when first needed). */
  readonly emojiCatalog: EmojiCatalog;
  /** Topics this user muted (user_topic visibility_policy 1): channel -> lower-case names. */
  readonly mutedTopics = new Map<number, Set<string>>();
  /** Who is typing where (conversation key), until when (ms). */
  typing: TypingNote[] = [];

  /** `self`: from GET /users/me (register's realm_user section, which has it, is not fetched). */
  constructor(state: InitialState, self: { email: string; full_name: string; role?: number }) {
    this.me = state.user_id;
    this.permissions = new Permissions(this.me, self.role ?? ROLE.member, policyFrom(state));
    for (const u of state.realm_users ?? []) this.users.set(u.user_id, { ...u });
    this.users.set(
      this.me,
      this.users.get(this.me) ?? { user_id: this.me, email: self.email, full_name: self.full_name, is_bot: false },
    );
    for (const s of state.subscriptions) this.subs.set(s.stream_id, { ...s });
    for (const c of state.recent_private_conversations) {
      const ids = c.user_ids.length > 0 ? [...c.user_ids] : [this.me];
      this.dms.set(dmKey(ids), { userIds: ids, maxId: c.max_message_id });
    }
    this.unreads = new Unreads(state.unread_msgs, this.me);
    this.realmEmoji = new RealmEmojiSet(state.realm_emoji);
    this.emojiCatalog = new EmojiCatalog(state.server_emoji_data_url ?? null, this.realmEmoji);
    for (const t of state.user_topics ?? []) this.setTopicPolicy(t.stream_id, t.topic_name, t.visibility_policy);
    for (const c of this.unreads.conversations()) {
      if (c.conv.streamId !== null) this.#noteTopic(c.conv.streamId, c.conv.topic, c.maxId);
      else this.#noteDm(c.conv.userIds, c.maxId);
    }
  }

  channelIdByName(name: string): number | undefined {
    const lower = name.toLowerCase();
    for (const s of this.subs.values()) if (s.name.toLowerCase() === lower) return s.stream_id;
    return undefined;
  }

  userIdByEmail(email: string): number | undefined {
    const lower = email.toLowerCase();
    for (const u of this.users.values()) if (u.email.toLowerCase() === lower) return u.user_id;
    return undefined;
  }

  userName(id: number): string {
    return this.users.get(id)?.full_name ?? `user ${id}`;
  }

  channelName(id: number): string {
    return this.subs.get(id)?.name ?? `channel ${id}`;
  }

  /** Newest topics of a channel first. */
  topicsOf(streamId: number): { name: string; maxId: number }[] {
    return [...(this.topics.get(streamId)?.values() ?? [])].sort((a, b) => b.maxId - a.maxId);
  }

  /** A channel's topics from the server (newest first), keeping any that arrived since it answered. */
  setChannelTopics(streamId: number, topics: readonly { name: string; max_id: number }[]): void {
    const newest = topics.reduce((max, t) => Math.max(max, t.max_id), 0);
    const map = new Map<string, { name: string; maxId: number }>();
    for (const t of topics) map.set(t.name.toLowerCase(), { name: t.name, maxId: t.max_id });
    for (const [key, t] of this.topics.get(streamId) ?? []) if (t.maxId > newest) map.set(key, t);
    this.topics.set(streamId, map);
    this.topicsLoaded.add(streamId);
    this.topicsStale.delete(streamId);
  }

  isMutedTopic(streamId: number, topic: string): boolean {
    return this.mutedTopics.get(streamId)?.has(topic.toLowerCase()) === true;
  }

  /** Unread messages a channel's badge counts: none in the topics this user muted. */
  channelUnread(streamId: number): number {
    let count = this.unreads.channel(streamId);
    for (const topic of this.mutedTopics.get(streamId) ?? [])
      count -= this.unreads.conversation(topicKey(streamId, topic));
    return count;
  }

  /** A topic's visibility policy for this user (register, a user_topic event, or the user's own change). */
  setTopicPolicy(streamId: number, topic: string, policy: number): void {
    const muted = this.mutedTopics.get(streamId) ?? new Set<string>();
    // Zulip's visibility policies: 1 muted (0 inherit, 2 unmuted, 3 followed are not).
    if (policy === 1) muted.add(topic.toLowerCase());
    else muted.delete(topic.toLowerCase());
    if (muted.size > 0) this.mutedTopics.set(streamId, muted);
    else this.mutedTopics.delete(streamId);
  }

  /** Whether the message was sent by a bot this user owns (they may delete its messages). */
  sentByMyBot(m: Message): boolean {
    return this.users.get(m.sender_id)?.bot_owner_id === this.me;
  }

  /** The realm's people (GET /users), replacing what messages taught. */
  setUsers(users: readonly User[]): void {
    for (const u of users) this.users.set(u.user_id, { ...u });
  }

  /** Messages seen in a loaded list teach topics, DM conversations and names. */
  noteMessages(messages: readonly Message[]): void {
    for (const m of messages) {
      if (!this.users.has(m.sender_id))
        this.users.set(m.sender_id, {
          user_id: m.sender_id,
          email: m.sender_email,
          full_name: m.sender_full_name,
          is_bot: false,
          ...(m.avatar_url !== undefined ? { avatar_url: m.avatar_url } : {}),
        });
      if (typeof m.display_recipient !== "string") {
        for (const r of m.display_recipient)
          if (!this.users.has(r.id))
            this.users.set(r.id, { user_id: r.id, email: r.email, full_name: r.full_name, is_bot: false });
      }
      if (m.type === "stream") this.#noteTopic(m.stream_id ?? 0, m.subject, m.id);
      else this.#noteDm(dmUserIds(m, this.me), m.id);
    }
  }

  #noteTopic(streamId: number, topic: string, id: number): void {
    let map = this.topics.get(streamId);
    if (!map) this.topics.set(streamId, (map = new Map()));
    const key = topic.toLowerCase();
    const known = map.get(key);
    if (known && known.maxId >= id) return;
    map.set(key, { name: known?.name ?? topic, maxId: id });
    if (map.size > TOPICS_PER_CHANNEL && !this.topicsLoaded.has(streamId)) {
      const oldest = [...map.entries()].sort((a, b) => a[1].maxId - b[1].maxId)[0];
      if (oldest) map.delete(oldest[0]);
    }
  }

  #noteDm(userIds: readonly number[], id: number): void {
    const key = dmKey(userIds);
    const known = this.dms.get(key);
    if (!known || known.maxId < id) this.dms.set(key, { userIds, maxId: id });
  }

  /** Applies one event to this state (the message list applies its own part). */
  apply(e: ServerEvent): void {
    switch (e.type) {
      case "message": {
        const m = e["message"] as Message;
        const flags = (e["flags"] ?? []) as string[];
        this.noteMessages([m]);
        if (!flags.includes("read")) {
          const mentioned = flags.some(isMention);
          this.unreads.add(
            m.id,
            m.type === "stream"
              ? { key: conversationKey(m, this.me), streamId: m.stream_id ?? 0, topic: m.subject, userIds: [] }
              : { key: conversationKey(m, this.me), streamId: null, topic: "", userIds: dmUserIds(m, this.me) },
            mentioned,
          );
        }
        this.typing = this.typing.filter((t) => !(t.userId === m.sender_id && t.key === conversationKey(m, this.me)));
        return;
      }
      case "update_message_flags": {
        if (e["flag"] !== "read") return;
        const ids = (e["messages"] ?? []) as number[];
        if (e["op"] === "add") {
          if (e["all"] === true) this.unreads.clear();
          for (const id of ids) this.unreads.remove(id);
          return;
        }
        // Marked unread again: message_details says where each message lives.
        const details = (e["message_details"] ?? {}) as Record<
          string,
          { type: string; stream_id?: number; topic?: string; user_ids?: number[]; mentioned?: boolean }
        >;
        for (const id of ids) {
          const d = details[String(id)];
          if (!d) continue;
          if (d.type === "stream" && d.stream_id !== undefined)
            this.unreads.add(
              id,
              {
                key: `s:${d.stream_id}:${(d.topic ?? "").toLowerCase()}`,
                streamId: d.stream_id,
                topic: d.topic ?? "",
                userIds: [],
              },
              d.mentioned === true,
            );
          else {
            const others = (d.user_ids ?? []).filter((u) => u !== this.me);
            const userIds = others.length > 0 ? others : [this.me];
            this.unreads.add(id, { key: dmKey(userIds), streamId: null, topic: "", userIds }, d.mentioned === true);
          }
        }
        return;
      }
      case "update_message": {
        const edit = contentEditOf(e);
        if (edit?.flags) this.unreads.setMentioned(edit.id, edit.flags.some(isMention));
        const move = moveOf(e);
        if (!move) return;
        const conv = {
          key: topicKey(move.toStream, move.toTopic),
          streamId: move.toStream,
          topic: move.toTopic,
          userIds: [],
        };
        for (const id of move.ids) this.unreads.move(id, conv);
        if (move.mode === "change_all") this.topics.get(move.fromStream)?.delete(move.fromTopic.toLowerCase());
        this.#noteTopic(
          move.toStream,
          move.toTopic,
          move.ids.reduce((a, b) => Math.max(a, b), 0),
        );
        // What is left in the old topic (and the new topic's casing) only the server knows.
        for (const id of [move.fromStream, move.toStream]) if (this.topicsLoaded.has(id)) this.topicsStale.add(id);
        return;
      }
      case "delete_message": {
        for (const id of deletedIdsOf(e)) this.unreads.remove(id);
        const streamId = e["stream_id"];
        if (typeof streamId === "number" && this.topicsLoaded.has(streamId)) this.topicsStale.add(streamId);
        return;
      }
      case "realm": {
        if (e["op"] === "update_dict" && typeof e["data"] === "object" && e["data"] !== null)
          this.permissions.updateRealm(e["data"] as Record<string, unknown>);
        return;
      }
      case "subscription": {
        const op = e["op"];
        if (op === "add")
          for (const s of (e["subscriptions"] ?? []) as Subscription[]) this.subs.set(s.stream_id, { ...s });
        else if (op === "remove")
          for (const s of (e["subscriptions"] ?? []) as { stream_id: number }[]) this.subs.delete(s.stream_id);
        else if (op === "update") {
          const sub = this.subs.get(Number(e["stream_id"]));
          const property = String(e["property"]);
          if (sub && (property === "name" || property === "color") && typeof e["value"] === "string")
            sub[property] = e["value"];
          if (sub && (property === "is_muted" || property === "in_home_view") && typeof e["value"] === "boolean")
            sub.is_muted = property === "is_muted" ? e["value"] : !e["value"];
        }
        return;
      }
      case "realm_user": {
        const person = e["person"] as Partial<User> & { user_id: number };
        if (e["op"] === "add") this.users.set(person.user_id, person as User);
        else if (e["op"] === "update") {
          const u = this.users.get(person.user_id);
          if (u && typeof person.full_name === "string") u.full_name = person.full_name;
          if (u && person.avatar_url !== undefined) u.avatar_url = person.avatar_url;
          if (typeof person.role === "number") {
            if (u) u.role = person.role;
            if (person.user_id === this.me) this.permissions.role = person.role;
          }
        }
        return;
      }
      case "user_topic": {
        this.setTopicPolicy(Number(e["stream_id"]), String(e["topic_name"]), Number(e["visibility_policy"]));
        return;
      }
      case "realm_emoji": {
        if (e["op"] === "update") this.realmEmoji.replace(e["realm_emoji"]);
        return;
      }
      case "typing": {
        const sender = (e["sender"] as { user_id: number }).user_id;
        if (sender === this.me) return;
        let key: string;
        if (e["message_type"] === "stream")
          key = `s:${Number(e["stream_id"])}:${String(e["topic"] ?? "").toLowerCase()}`;
        else {
          const ids = ((e["recipients"] ?? []) as { user_id: number }[])
            .map((r) => r.user_id)
            .filter((id) => id !== this.me);
          key = dmKey(ids.length > 0 ? ids : [this.me]);
        }
        this.typing = this.typing.filter((t) => !(t.userId === sender && t.key === key));
        // Zulip's clients drop a typist not heard from for 15 s.
        if (e["op"] === "start") this.typing.push({ key, userId: sender, until: Date.now() + 15_000 });
        return;
      }
      default:
        return;
    }
  }
}
