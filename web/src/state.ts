/**
 * What the client knows besides the open message list: people, subscriptions, recent
 * DM conversations, recent topics per channel and unread counts. Built from register's
 * state, changed only by events (apply) and by messages the list loads (noteMessages).
 */
import { conversationKey, dmKey, dmUserIds, type Directory } from "./narrow.js";
import type { InitialState, Message, ServerEvent, Subscription, User } from "./types.js";
import { Unreads } from "./unread.js";

/** Topics remembered per channel (the sidebar shows the newest few). */
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
  readonly unreads: Unreads;
  /** Who is typing where (conversation key), until when (ms). */
  typing: TypingNote[] = [];

  /** `self`: from GET /users/me (register's realm_user section, which has it, is not fetched). */
  constructor(state: InitialState, self: { email: string; full_name: string }) {
    this.me = state.user_id;
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
    if (map.size > TOPICS_PER_CHANNEL) {
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
          const mentioned = flags.some(
            (f) => f === "mentioned" || f === "stream_wildcard_mentioned" || f === "topic_wildcard_mentioned",
          );
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
        }
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
