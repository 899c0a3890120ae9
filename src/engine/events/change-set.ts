/**
 * @module events/change-set
 * What one committed write changed, typed: the entity kinds and IDs it touched, and for
 * messages which fields. Every derived cache or read model (in this process, or in
 * another one tailing the change log) decides from it what to drop; none guesses from
 * client events.
 *
 * A change set is built during the write from two sources:
 * - each client event the write emits, through `changesOfEvent`: one exhaustive switch
 *   over the event union, so a new event type does not compile until it is classified;
 * - `WriteContext.changed(...)`, for what a write changes without telling clients
 *   (realm settings, custom emoji records, passwords, queued mail and push work).
 *   With PARLEY_CHECK_CHANGES=1 (the test suite sets it) a write that wrote a table whose
 *   kind (storage/tables.ts `change`) its change set does not name fails.
 *
 * It is released to `Store.onChanges` listeners after the commit, before the write's
 * events; a failed write releases `everything` instead (its in-memory effects were
 * undone: anything derived since may be stale). It is also written, encoded, into the
 * change log in the same transaction (events/change-log.ts `decodeChangeSet`).
 *
 * Conventions, per part (every part is a map, empty when the write touched nothing of
 * that kind; a reader never sees undefined):
 * - entity kinds map an ID to `{ op, fields }`: "added", "changed" (with the record
 *   fields that changed when known, null when any may have) or "removed". "Added" and
 *   "removed" also cover becoming visible or hidden to someone (a role change reveals
 *   channels and bots); such a change comes with the change that caused it.
 *   The ID is the record's own ID, except where the kind says "per realm" or "per user".
 * - `subscription` and `userTopic` map a user ID to the channel IDs whose subscription or
 *   topic policies changed for that user (null: any of the user's channels).
 * - `message` maps a message ID to its realm and the fields that changed: "added" (a new
 *   message, with its initial flags for every recipient), "content", "topic", "channel",
 *   "reactions", "submessages", "history" (edit history), "deleted". Flags are per
 *   reader and go in `flags` instead: user ID to the message IDs whose flags changed for
 *   that user (a "mark all read" names 50,000 messages; one list per user costs nothing,
 *   one map entry per message would).
 */
import type { Channel, Realm, User, UserGroup } from "../types.js";
import type { EngineEvent, RealmUserChange } from "./types.js";

export type EntityOp = "added" | "changed" | "removed";

/** Kinds keyed by one ID each. See the module comment for what the ID is. */
export const ENTITY_KINDS = [
  "realm",
  /** Per realm: the organization's defaults for new users' settings. */
  "realmDefaults",
  /** Per realm: the list of default channels. */
  "defaultChannels",
  /** Per realm: its invitations (Zulip's invites_changed names no invitation). */
  "invites",
  /** Per realm: its code playgrounds. */
  "playgrounds",
  /** Per realm: its linkifiers (they change every message object's topic_links). */
  "linkifiers",
  "channelFolder",
  /** Per realm: its email domains. */
  "realmDomains",
  /** Per realm: its custom profile fields (users' values are user changes). */
  "profileFields",
  "user",
  /** Per user: their personal settings. */
  "userSettings",
  /** Per user: their password record. */
  "password",
  /** Per user: their presence record. */
  "presence",
  /** Per user: their requested email changes. */
  "emailChange",
  "channel",
  "group",
  "conversation",
  "scheduledMessage",
  "realmEmoji",
  "draft",
  "savedSnippet",
  "device",
  "attachment",
  /** Outgoing mail (the durable mail queue). */
  "mail",
  /** Work for the push bouncer (the push outbox). */
  "pushItem",
  /** Calls for outgoing webhook bots (the webhook outbox). */
  "webhookItem",
  /** Per user: their missed messages waiting for the batched email. */
  "missedEmail",
  /** Per user: their status (text and emoji). */
  "userStatus",
  /** Per user: the users they muted. */
  "mutedUsers",
  /** Per user: their alert words. */
  "alertWords",
  /** Per bot: its key-value storage (/bot_storage). */
  "botStorage",
  /** Per user: push tokens registered through Zulip's legacy endpoints. */
  "legacyPushTokens",
  /** Per user: their navigation views. */
  "navigationViews",
  /** Per user: their web client sessions. */
  "webSession",
  /** A topic registry row (its name and renames: the topic of the messages naming it). */
  "topic",
] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** Record fields a change may name, for the kinds whose readers tell fields apart. */
interface EntityFields {
  realm: keyof Realm;
  user: keyof User;
  channel: keyof Channel;
  group: keyof UserGroup;
}
export type FieldOf<K extends EntityKind> = K extends keyof EntityFields ? EntityFields[K] & string : never;

export interface EntityChange<F extends string = never> {
  readonly op: EntityOp;
  /** For "changed": the record fields that changed; null when any may have (and for "added", "removed"). */
  readonly fields: ReadonlySet<F> | null;
}

/** Kinds keyed by user ID, holding the channel IDs concerned (null: any). */
export const PAIR_KINDS = ["subscription", "userTopic"] as const;
export type PairKind = (typeof PAIR_KINDS)[number];

export const MESSAGE_FIELDS = [
  "added",
  "content",
  "topic",
  "channel",
  "reactions",
  "submessages",
  "history",
  "deleted",
] as const;
export type MessageField = (typeof MESSAGE_FIELDS)[number];

/** Each field's bit in an interned change's mask. */
const MESSAGE_FIELD_BITS = new Map<MessageField, number>(MESSAGE_FIELDS.map((field, i) => [field, 1 << i]));

export interface MessageChange {
  readonly realmId: number;
  readonly fields: ReadonlySet<MessageField>;
}

/** A message change shared by every message of its realm and fields (never changed: a new field is another one). */
interface InternedMessageChange extends MessageChange {
  readonly mask: number;
}

/**
 * The builder's message changes, interned by realm and fields: a topic move names its
 * 5,000 messages with the same two or three fields, and a Set and an object for each
 * (and their garbage) were a tenth of its write. At most one per realm and set of fields.
 */
const internedMessageChanges = new Map<number, InternedMessageChange>();

/** The last one asked for: a move's thousands ask for the same one in a row. */
let lastInterned: InternedMessageChange | null = null;

function messageChangeOf(realmId: number, mask: number): InternedMessageChange {
  if (lastInterned !== null && lastInterned.mask === mask && lastInterned.realmId === realmId) return lastInterned;
  const slot = realmId * 2 ** MESSAGE_FIELDS.length + mask;
  const known = internedMessageChanges.get(slot);
  if (known !== undefined) return (lastInterned = known);
  const fields = new Set(MESSAGE_FIELDS.filter((_, i) => (mask & (1 << i)) !== 0));
  // The mask is the builder's: readers comparing changes see a realm and fields, as before.
  const change = { realmId, fields } as MessageChange as InternedMessageChange;
  Object.freeze(Object.defineProperty(change, "mask", { value: mask, enumerable: false }));
  internedMessageChanges.set(slot, change);
  return (lastInterned = change);
}

function maskOf(fields: readonly MessageField[]): number {
  let mask = 0;
  for (const field of fields) mask |= MESSAGE_FIELD_BITS.get(field) ?? 0;
  return mask;
}

export type ChangeParts = { readonly [K in EntityKind]: ReadonlyMap<number, EntityChange<FieldOf<K>>> } & {
  readonly [K in PairKind]: ReadonlyMap<number, ReadonlySet<number> | null>;
} & {
  readonly message: ReadonlyMap<number, MessageChange>;
  /** User ID -> the message IDs whose flags changed for that user (in the order the write named them). */
  readonly flags: ReadonlyMap<number, readonly number[]>;
};

export type ChangeKind = keyof ChangeParts;
/** Every kind, in one order (readers iterate it; the log encodes kinds by name). */
export const CHANGE_KINDS: readonly ChangeKind[] = [...ENTITY_KINDS, ...PAIR_KINDS, "message", "flags"];

export type ChangeSet = ChangeParts & {
  /** The write's change-log sequence number; 0 when nothing was logged (a rollback, a change held in memory only). */
  readonly seq: number;
  /** After a failed write: anything may have changed (every part is empty); drop everything derived. */
  readonly everything: boolean;
};

/** One change, as a write declares it with `WriteContext.changed`. */
export type Change =
  | {
      [K in EntityKind]: {
        readonly kind: K;
        readonly id: number;
        readonly op?: EntityOp;
        readonly fields?: readonly FieldOf<K>[];
      };
    }[EntityKind]
  | { readonly kind: PairKind; readonly userId: number; readonly channelId: number | null }
  | {
      readonly kind: "message";
      readonly id: number;
      readonly realmId: number;
      readonly fields: readonly MessageField[];
    }
  /** The same fields of many messages of a realm (a topic move's thousands: one declaration, not one each). */
  | {
      readonly kind: "messages";
      readonly ids: readonly number[];
      readonly realmId: number;
      readonly fields: readonly MessageField[];
    }
  | { readonly kind: "flags"; readonly userId: number; readonly messageIds: readonly number[] };

const NO_CHANGES: ReadonlyMap<number, never> = new Map<number, never>();
const ADDED: EntityChange<string> = Object.freeze({ op: "added", fields: null });
const REMOVED: EntityChange<string> = Object.freeze({ op: "removed", fields: null });
const CHANGED_ANY: EntityChange<string> = Object.freeze({ op: "changed", fields: null });

/** A change set with nothing in it but `everything`, for a failed write (or a log entry older than change sets). */
export function everythingChanged(seq = 0): ChangeSet {
  return emptySet(seq, true);
}

/**
 * Every part, empty: a change set inherits it and owns only the parts its write touched
 * (a send touches one of 27; copying 27 properties per write cost more than the rest).
 * Not frozen: a frozen prototype's properties cannot be shadowed by assignment.
 */
const EMPTY_PARTS = Object.fromEntries(CHANGE_KINDS.map((kind) => [kind, NO_CHANGES])) as unknown as ChangeParts;

/** Which Realm field a realm event changed (a window cache drops what depends on it). */
const REALM_EVENT_FIELDS = {
  deactivated: "deactivated",
  update_message_policy: "messagePolicy",
  update_announcements_channel: "newChannelAnnouncementsChannelId",
  update_group_setting: "groupSettings",
} as const satisfies Record<string, FieldOf<"realm">>;

const REALM_FIELD_OF_PROPERTY: Readonly<Record<string, FieldOf<"realm">>> = {
  name: "name",
  topics_policy: "topicsPolicy",
  enable_spectator_access: "enableSpectatorAccess",
};

function emptySet(seq: number, everything: boolean): ChangeSet {
  const set = Object.create(EMPTY_PARTS) as { seq: number; everything: boolean };
  set.seq = seq;
  set.everything = everything;
  return set as ChangeSet;
}

/** True when the set names nothing (and is not `everything`). */
export function isEmptyChangeSet(set: ChangeSet): boolean {
  if (set.everything) return false;
  for (const kind of CHANGE_KINDS) if (set[kind].size > 0) return false;
  return true;
}

/** Collects one write's changes; `build` freezes them into a ChangeSet. */
export class ChangeSetBuilder {
  readonly #entities = new Map<EntityKind, Map<number, EntityChange<string>>>();
  readonly #pairs = new Map<PairKind, Map<number, Set<number> | null>>();
  #messages: Map<number, InternedMessageChange> | null = null;
  #flags: Map<number, number[][]> | null = null;

  get isEmpty(): boolean {
    return this.#entities.size === 0 && this.#pairs.size === 0 && this.#messages === null && this.#flags === null;
  }

  /** Whether anything of the kind was recorded (the table-write check asks). */
  has(kind: ChangeKind): boolean {
    if (kind === "message") return this.#messages !== null;
    if (kind === "flags") return this.#flags !== null;
    if (kind === "subscription" || kind === "userTopic") return this.#pairs.has(kind);
    return this.#entities.has(kind);
  }

  add(change: Change): void {
    switch (change.kind) {
      case "message":
        this.#message(change.id, change.realmId, maskOf(change.fields));
        return;
      case "messages":
        this.messages(change.ids, change.realmId, change.fields);
        return;
      case "flags":
        this.flags(change.userId, change.messageIds);
        return;
      case "subscription":
      case "userTopic":
        this.pair(change.kind, change.userId, change.channelId);
        return;
      default:
        this.entity(change.kind, change.id, change.op ?? "changed", change.fields ?? null);
    }
  }

  entity<K extends EntityKind>(kind: K, id: number, op: EntityOp, fields: readonly FieldOf<K>[] | null = null): void {
    let byId = this.#entities.get(kind);
    if (!byId) this.#entities.set(kind, (byId = new Map()));
    byId.set(id, merged(byId.get(id), op, fields));
  }

  /** A user's subscription or topic policies in a channel (null: in any channel). */
  pair(kind: PairKind, userId: number, channelId: number | null): void {
    let byUser = this.#pairs.get(kind);
    if (!byUser) this.#pairs.set(kind, (byUser = new Map()));
    const channels = byUser.get(userId);
    if (channels === null) return;
    if (channelId === null) byUser.set(userId, null);
    else if (channels === undefined) byUser.set(userId, new Set([channelId]));
    else channels.add(channelId);
  }

  message(id: number, realmId: number, field: MessageField): void {
    this.#message(id, realmId, MESSAGE_FIELD_BITS.get(field) ?? 0);
  }

  /** The same fields of many messages (an event naming thousands). */
  messages(ids: readonly number[], realmId: number, fields: readonly MessageField[]): void {
    const mask = maskOf(fields);
    if (mask === 0) return;
    for (const id of ids) this.#message(id, realmId, mask);
  }

  #message(id: number, realmId: number, mask: number): void {
    if (mask === 0) return;
    const messages = (this.#messages ??= new Map());
    const known = messages.get(id);
    // The first realm named stays, as the fields of a message only ever grow.
    if (known === undefined) messages.set(id, messageChangeOf(realmId, mask));
    else if ((known.mask | mask) !== known.mask) messages.set(id, messageChangeOf(known.realmId, known.mask | mask));
  }

  /** `messageIds` is kept, not copied: the caller must not change it. */
  flags(userId: number, messageIds: readonly number[]): void {
    if (messageIds.length === 0) return;
    const flags = (this.#flags ??= new Map());
    const lists = flags.get(userId);
    if (lists) lists.push(messageIds as number[]);
    else flags.set(userId, [messageIds as number[]]);
  }

  build(seq: number): ChangeSet {
    const set = emptySet(seq, false) as Record<string, unknown>;
    for (const [kind, byId] of this.#entities) set[kind] = byId;
    for (const [kind, byUser] of this.#pairs) set[kind] = byUser;
    if (this.#messages) set["message"] = this.#messages;
    if (this.#flags) {
      const flags = new Map<number, readonly number[]>();
      for (const [userId, lists] of this.#flags) flags.set(userId, lists.length === 1 ? lists[0]! : lists.flat());
      set["flags"] = flags;
    }
    return set as ChangeSet;
  }
}

function merged(
  known: EntityChange<string> | undefined,
  op: EntityOp,
  fields: readonly string[] | null,
): EntityChange<string> {
  if (op === "removed") return REMOVED;
  if (op === "added") return known === undefined || known.op === "added" ? ADDED : CHANGED_ANY;
  // "changed" after "added" in the same write: still new to every reader.
  if (known?.op === "added") return ADDED;
  if (known?.op === "removed") return CHANGED_ANY;
  if (fields === null || (known !== undefined && known.fields === null)) return CHANGED_ANY;
  const all = new Set(known?.fields ?? []);
  for (const field of fields) all.add(field);
  return { op: "changed", fields: all };
}

type KeysOfUnion<T> = T extends unknown ? keyof T : never;

/** realm_user update keys -> the User fields they change. */
const REALM_USER_FIELDS: Readonly<Record<KeysOfUnion<RealmUserChange>, FieldOf<"user">>> = {
  fullName: "fullName",
  role: "role",
  isActive: "isActive",
  timezone: "timezone",
  customProfileField: "profileData",
  deliveryEmail: "deliveryEmail",
  newEmail: "email",
  avatarOf: "avatarVersion",
  botOwnerId: "botOwnerId",
};

/** stream update properties (Zulip's names) -> Channel fields; an unlisted one changes "any field". */
const STREAM_PROPERTY_FIELDS: Readonly<Record<string, FieldOf<"channel">>> = {
  first_message_id: "firstMessageId",
  name: "name",
  description: "description",
  invite_only: "inviteOnly",
  is_web_public: "isWebPublic",
  history_public_to_subscribers: "historyPublicToSubscribers",
  message_retention_days: "messageRetentionDays",
  topics_policy: "topicsPolicy",
  is_archived: "isArchived",
  folder_id: "folderId",
  can_add_subscribers_group: "canAddSubscribersGroup",
  can_remove_subscribers_group: "canRemoveSubscribersGroup",
  can_administer_channel_group: "canAdministerChannelGroup",
  can_delete_any_message_group: "canDeleteAnyMessageGroup",
  can_delete_own_message_group: "canDeleteOwnMessageGroup",
  can_move_messages_out_of_channel_group: "canMoveMessagesOutOfChannelGroup",
  can_move_messages_within_channel_group: "canMoveMessagesWithinChannelGroup",
  can_resolve_topics_group: "canResolveTopicsGroup",
  can_create_topic_group: "canCreateTopicGroup",
  can_send_message_group: "canSendMessageGroup",
  can_subscribe_group: "canSubscribeGroup",
  stream_post_policy: "canSendMessageGroup",
  is_announcement_only: "canSendMessageGroup",
};

/**
 * What an event says changed, added to `out`. Exhaustive: the `never` below makes a new
 * event type a compile error here until it is classified.
 */
export function changesOfEvent(event: EngineEvent, out: ChangeSetBuilder): void {
  switch (event.type) {
    case "message":
      out.message(event.message.id, event.message.realmId, "added");
      return;
    case "delete_message":
      out.messages(event.messageIds, event.realmId, ["deleted"]);
      return;
    case "update_message_flags":
      out.flags(event.userId, event.messages);
      return;
    case "update_message": {
      const moved: MessageField[] = [];
      if (event.move?.newTopic !== undefined) moved.push("topic");
      if (event.move?.newChannelId !== undefined) moved.push("channel");
      out.messages(event.messageIds, event.realmId, moved);
      if (event.content !== null) out.message(event.messageId, event.realmId, "content");
      return;
    }
    case "reaction":
      out.message(event.messageId, event.realmId, "reactions");
      return;
    case "submessage":
      out.message(event.messageId, event.realmId, "submessages");
      return;
    case "subscription":
      switch (event.op) {
        case "add":
          for (const { channel } of event.subscriptions) out.pair("subscription", event.userId, channel.id);
          return;
        case "remove":
          for (const channel of event.channels) out.pair("subscription", event.userId, channel.id);
          return;
        case "update":
          out.pair("subscription", event.userId, event.channelId);
          return;
        default:
          for (const userId of event.userIds)
            for (const channelId of event.channelIds) out.pair("subscription", userId, channelId);
          return;
      }
    case "stream":
      if (event.op === "update") {
        const field = STREAM_PROPERTY_FIELDS[event.property];
        out.entity("channel", event.channel.id, "changed", field === undefined ? null : [field]);
      } else if (event.op === "create" ? event.forUnarchiving === true : event.forArchiving === true) {
        // Archiving keeps the channel; older clients are only told it as a delete or create.
        for (const channel of event.channels) out.entity("channel", channel.id, "changed", ["isArchived"]);
      } else {
        for (const channel of event.channels)
          out.entity("channel", channel.id, event.op === "create" ? "added" : "removed");
      }
      return;
    case "default_streams":
      out.entity("defaultChannels", event.realmId, "changed");
      return;
    case "default_stream_groups":
      out.entity("realm", event.realmId, "changed", ["defaultChannelGroups"]);
      return;
    case "channel_folder":
      if (event.op === "reorder") for (const id of event.order) out.entity("channelFolder", id, "changed");
      else out.entity("channelFolder", event.folder.id, event.op === "add" ? "added" : "changed");
      return;
    case "realm_bot":
      if (event.op === "add") out.entity("user", event.bot.id, "added");
      else if (event.op === "update") out.entity("user", event.bot.id, "changed", ["botConfig"]);
      // Sent when a viewer can no longer see the bot; the change itself is named by its own event.
      else out.entity("user", event.botId, "changed");
      return;
    case "realm_user":
      if (event.op === "add") out.entity("user", event.person.id, "added");
      // Sent when a guest can no longer see the user; the change itself is named by its own event.
      else if (event.op === "remove") out.entity("user", event.userId, "changed");
      else
        out.entity(
          "user",
          event.userId,
          "changed",
          (Object.keys(event.changes) as KeysOfUnion<RealmUserChange>[]).map((k) => REALM_USER_FIELDS[k]),
        );
      return;
    case "realm":
      out.entity("realm", event.realm.id, "changed", [
        event.op === "update_property"
          ? (REALM_FIELD_OF_PROPERTY[event.property] ?? "properties")
          : REALM_EVENT_FIELDS[event.op],
      ]);
      return;
    case "invites_changed":
      out.entity("invites", event.realmId, "changed");
      return;
    case "user_group":
      switch (event.op) {
        case "add":
          out.entity(
            "group",
            event.group.id,
            event.forReactivation ? "changed" : "added",
            event.forReactivation ? ["deactivated"] : null,
          );
          return;
        case "remove":
          out.entity("group", event.groupId, "removed");
          return;
        case "update":
          out.entity("group", event.groupId, "changed", Object.keys(event.data) as FieldOf<"group">[]);
          return;
        case "add_members":
        case "remove_members":
          out.entity("group", event.groupId, "changed", ["members"]);
          return;
        default:
          out.entity("group", event.groupId, "changed", ["subgroups"]);
          return;
      }
    case "user_topic":
      out.pair("userTopic", event.userTopic.userId, event.userTopic.channelId);
      return;
    case "muted_topics":
      out.pair("userTopic", event.userId, null);
      return;
    case "presence":
      out.entity("presence", event.user.id, "changed");
      return;
    case "realm_playgrounds":
      out.entity("playgrounds", event.realmId, "changed");
      return;
    case "realm_domains":
      out.entity("realmDomains", event.realmId, "changed");
      return;
    case "realm_linkifiers":
      out.entity("linkifiers", event.realmId, "changed");
      return;
    case "custom_profile_fields":
      out.entity("profileFields", event.realmId, "changed");
      return;
    case "realm_emoji":
      out.entity("realmEmoji", event.emoji.id, event.op === "add" ? "added" : "changed");
      return;
    case "scheduled_messages":
      if (event.op === "remove") out.entity("scheduledMessage", event.scheduledMessageId, "removed");
      else out.entity("scheduledMessage", event.scheduled.id, event.op === "add" ? "added" : "changed");
      return;
    case "reminders":
      if (event.op === "remove") out.entity("scheduledMessage", event.reminderId, "removed");
      else out.entity("scheduledMessage", event.reminder.id, "added");
      return;
    case "user_settings":
      for (const userId of event.userIds) {
        out.entity("userSettings", userId, "changed");
        // The time zone lives on the user record (realm_user shows it).
        if (event.property === "timezone") out.entity("user", userId, "changed", ["timezone"]);
      }
      return;
    case "realm_user_settings_defaults":
      out.entity("realmDefaults", event.realmId, "changed");
      return;
    case "drafts":
      if (event.op === "add") for (const draft of event.drafts) out.entity("draft", draft.id, "added");
      else if (event.op === "update") out.entity("draft", event.draft.id, "changed");
      else out.entity("draft", event.draftId, "removed");
      return;
    case "saved_snippets":
      if (event.op === "remove") out.entity("savedSnippet", event.snippetId, "removed");
      else out.entity("savedSnippet", event.snippet.id, event.op === "add" ? "added" : "changed");
      return;
    case "device":
      out.entity(
        "device",
        event.deviceId,
        event.op === "add" ? "added" : event.op === "remove" ? "removed" : "changed",
      );
      return;
    case "attachment":
      out.entity(
        "attachment",
        event.attachment.id,
        event.op === "add" ? "added" : event.op === "remove" ? "removed" : "changed",
      );
      return;
    case "user_status":
      out.entity("userStatus", event.userId, "changed");
      return;
    case "muted_users":
      out.entity("mutedUsers", event.userId, "changed");
      return;
    case "alert_words":
      out.entity("alertWords", event.userId, "changed");
      return;
    case "navigation_view":
      out.entity("navigationViews", event.userId, "changed");
      return;
    // Ephemeral (typing), or kept in the meta table, which no reader derives from (realm_export).
    case "typing":
    case "realm_export":
    case "typing_edit_message":
      return;
    default: {
      const unclassified: never = event;
      throw new Error(`unclassified event ${(unclassified as { type: string }).type}`);
    }
  }
}

/** The fields whose values differ between two versions of a record (nested values compared as JSON). */
export function changedFields<R extends object>(before: R, after: R): (keyof R & string)[] {
  const out: (keyof R & string)[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof R & string>;
  for (const k of keys) {
    const a: unknown = before[k];
    const b: unknown = after[k];
    if (a === b) continue;
    if (
      typeof a === "object" &&
      typeof b === "object" &&
      a !== null &&
      b !== null &&
      JSON.stringify(a) === JSON.stringify(b)
    )
      continue;
    out.push(k);
  }
  return out;
}
