/**
 * Which changes to a sent message this user may make, as far as the client can tell:
 * Zulip's rules for editing, moving, resolving and deleting, from register's realm
 * settings, the channel's own settings, the user's role and the groups they are in.
 * Actions the server would refuse are not offered; the server still decides (a
 * refusal is shown as an error), so a rule this copy gets wrong costs a message, not
 * a wrong change.
 */
import type { GroupSettingValue, InitialState, Message, Subscription } from "./types.js";

/** Zulip's role values. */
export const ROLE = { owner: 100, admin: 200, moderator: 300, member: 400, guest: 600 } as const;

/** The realm's settings, by their names in realm update_dict events (register adds `realm_`). */
export interface MessagePolicy {
  allow_message_editing: boolean;
  message_content_edit_limit_seconds: number | null;
  message_content_delete_limit_seconds: number | null;
  move_messages_within_stream_limit_seconds: number | null;
  move_messages_between_streams_limit_seconds: number | null;
  can_move_messages_between_topics_group: GroupSettingValue | null;
  can_move_messages_between_channels_group: GroupSettingValue | null;
  can_resolve_topics_group: GroupSettingValue | null;
  can_delete_any_message_group: GroupSettingValue | null;
  can_delete_own_message_group: GroupSettingValue | null;
}

const LIMITS = [
  "message_content_edit_limit_seconds",
  "message_content_delete_limit_seconds",
  "move_messages_within_stream_limit_seconds",
  "move_messages_between_streams_limit_seconds",
] as const;
const GROUPS = [
  "can_move_messages_between_topics_group",
  "can_move_messages_between_channels_group",
  "can_resolve_topics_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
] as const;
const CHANNEL_GROUPS = [
  "can_administer_channel_group",
  "can_move_messages_within_channel_group",
  "can_move_messages_out_of_channel_group",
  "can_resolve_topics_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
] as const;

export const RESOLVED_PREFIX = "✔ ";

export function isResolved(topic: string): boolean {
  return topic.startsWith(RESOLVED_PREFIX);
}

/** The topic's name after a resolve toggle (Zulip strips every leading ✔ and space to unresolve). */
export function toggledTopic(topic: string): string {
  return isResolved(topic) ? topic.replace(/^[✔ ]+/u, "") : `${RESOLVED_PREFIX}${topic}`;
}

function isGroupSetting(v: unknown): v is GroupSettingValue {
  if (typeof v === "number") return Number.isInteger(v);
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return Array.isArray(o["direct_members"]) && Array.isArray(o["direct_subgroups"]);
}

/** Register's values, Zulip's defaults where a server leaves one out; no group where it names none. */
export function policyFrom(state: InitialState): MessagePolicy {
  const s = state as unknown as Record<string, unknown>;
  const limit = (name: string, fallback: number | null): number | null => {
    const v = s[`realm_${name}`];
    return v === null || typeof v === "number" ? v : fallback;
  };
  const group = (name: string): GroupSettingValue | null => {
    const v = s[`realm_${name}`];
    return isGroupSetting(v) ? v : null;
  };
  return {
    allow_message_editing: state.realm_allow_message_editing ?? true,
    message_content_edit_limit_seconds: limit("message_content_edit_limit_seconds", 600),
    message_content_delete_limit_seconds: limit("message_content_delete_limit_seconds", 600),
    move_messages_within_stream_limit_seconds: limit("move_messages_within_stream_limit_seconds", 604800),
    move_messages_between_streams_limit_seconds: limit("move_messages_between_streams_limit_seconds", 604800),
    can_move_messages_between_topics_group: group("can_move_messages_between_topics_group"),
    can_move_messages_between_channels_group: group("can_move_messages_between_channels_group"),
    can_resolve_topics_group: group("can_resolve_topics_group"),
    can_delete_any_message_group: group("can_delete_any_message_group"),
    can_delete_own_message_group: group("can_delete_own_message_group"),
  };
}

/** Whether `limit` seconds (null: none) have passed since `sentAt`. */
function expired(limit: number | null, sentAt: number, now: number): boolean {
  return limit !== null && now - sentAt >= limit;
}

export interface MessageActions {
  readonly edit: boolean;
  readonly delete: boolean;
  /** Rename the topic (or move within the channel). */
  readonly moveTopic: boolean;
  /** Move to another channel. */
  readonly moveChannel: boolean;
  readonly resolve: boolean;
}

export const NO_ACTIONS: MessageActions = {
  edit: false,
  delete: false,
  moveTopic: false,
  moveChannel: false,
  resolve: false,
};

export class Permissions {
  /** Group ID -> whether this user is a member (recursively); unknown groups count as not. */
  readonly #member = new Map<number, boolean>();

  constructor(
    readonly me: number,
    public role: number,
    readonly policy: MessagePolicy,
  ) {}

  get isAdmin(): boolean {
    return this.role <= ROLE.admin;
  }

  /** Moderators and above are exempt from the move time limits. */
  get isModerator(): boolean {
    return this.role <= ROLE.moderator;
  }

  get isGuest(): boolean {
    return this.role >= ROLE.guest;
  }

  /** A realm update_dict event's data (only the settings known here are taken). */
  updateRealm(data: Record<string, unknown>): void {
    if (typeof data["allow_message_editing"] === "boolean")
      this.policy.allow_message_editing = data["allow_message_editing"];
    for (const name of LIMITS) {
      const v = data[name];
      if (v === null || typeof v === "number") this.policy[name] = v;
    }
    for (const name of GROUPS) {
      const v = data[name];
      if (isGroupSetting(v)) this.policy[name] = v;
    }
  }

  setMember(groupId: number, member: boolean): void {
    this.#member.set(groupId, member);
  }

  /** Forgets every membership (a group changed): the caller asks again for `unknownGroups`. */
  forgetMemberships(): void {
    this.#member.clear();
  }

  /** The groups the realm's and these channels' settings name whose membership is not known yet. */
  unknownGroups(subs: Iterable<Subscription>): number[] {
    const out = new Set<number>();
    const add = (v: GroupSettingValue | null | undefined): void => {
      if (v === null || v === undefined) return;
      for (const id of typeof v === "number" ? [v] : v.direct_subgroups) if (!this.#member.has(id)) out.add(id);
    };
    for (const name of GROUPS) add(this.policy[name]);
    for (const sub of subs) for (const name of CHANNEL_GROUPS) add(sub[name]);
    return [...out];
  }

  /** Whether the user is in a group setting; `guestsNever` for Zulip's settings that never include guests. */
  in(value: GroupSettingValue | null | undefined, guestsNever = false): boolean {
    if (value === null || value === undefined || (guestsNever && this.isGuest)) return false;
    if (typeof value === "number") return this.#member.get(value) === true;
    return value.direct_members.includes(this.me) || value.direct_subgroups.some((id) => this.#member.get(id) === true);
  }

  /** What this user may do to a message now (`sub`: its channel's subscription, when known). */
  actions(m: Message, sub: Subscription | undefined, now: number, sentByMyBot = false): MessageActions {
    const p = this.policy;
    const channel = m.type === "stream";
    if (channel && sub?.is_archived === true) return NO_ACTIONS;
    const edit =
      p.allow_message_editing &&
      m.sender_id === this.me &&
      !expired(p.message_content_edit_limit_seconds, m.timestamp, now);
    const channelAdmin = this.isAdmin || this.in(sub?.can_administer_channel_group, true);
    const moveTopic =
      channel &&
      (this.in(p.can_move_messages_between_topics_group) ||
        channelAdmin ||
        this.in(sub?.can_move_messages_within_channel_group)) &&
      (this.isModerator || !expired(p.move_messages_within_stream_limit_seconds, m.timestamp, now));
    const moveChannel =
      channel &&
      (this.in(p.can_move_messages_between_channels_group, true) ||
        channelAdmin ||
        this.in(sub?.can_move_messages_out_of_channel_group)) &&
      (this.isModerator || !expired(p.move_messages_between_streams_limit_seconds, m.timestamp, now));
    const resolve = channel && (this.in(p.can_resolve_topics_group) || this.in(sub?.can_resolve_topics_group));
    return { edit, delete: this.#canDelete(m, sub, now, sentByMyBot), moveTopic, moveChannel, resolve };
  }

  #canDelete(m: Message, sub: Subscription | undefined, now: number, sentByMyBot: boolean): boolean {
    const p = this.policy;
    const channel = m.type === "stream";
    if (this.in(p.can_delete_any_message_group, true) || (channel && this.in(sub?.can_delete_any_message_group)))
      return true;
    if (m.sender_id !== this.me && !sentByMyBot) return false;
    if (!this.in(p.can_delete_own_message_group) && !(channel && this.in(sub?.can_delete_own_message_group)))
      return false;
    return !expired(p.message_content_delete_limit_seconds, m.timestamp, now);
  }
}
