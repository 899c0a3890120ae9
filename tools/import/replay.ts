/**
 * @module tools/import/replay
 * Builds a parley realm from a read Zulip export by replaying it through the engine's
 * own actions, in the order things happened: users, then one timeline of channel
 * subscription changes (from the audit log) and messages (by Zulip message ID, each
 * with its original date_sent), then per-user flags, reactions, user groups, topic
 * policies and deactivations. Replaying rather than writing records keeps every
 * derived index, receive interval (who received which message, so protected history
 * stays protected) and bitmap exactly as parley builds them itself.
 *
 * Zulip IDs are mapped to new parley IDs (the mapping is returned for the report).
 * A row that parley refuses is skipped and counted with the engine's reason; nothing
 * is silently dropped. Every action runs as the realm owner or as the user concerned,
 * through the same permission checks as the API.
 */
import { ROLE, type BotType, type Role, type Store } from "../../src/engine/index.js";
import { replayAvatars } from "./replay-avatars.js";
import { botConfigAtCreation, replayBotStorage } from "./replay-bots.js";
import { replayEditHistories } from "./replay-history.js";
import { replayInvites } from "./replay-invites.js";
import { replayPresence } from "./replay-presence.js";
import { replayGroupSettings } from "./replay-realm.js";
import { applySubscriptionSettings } from "./replay-subscriptions.js";
import { replayChannelsAndPersonalData, replayRealmSettings } from "./replay-settings.js";
import type { SettingsReplay } from "./settings-replay.js";
import { AUDIT, RECIPIENT, type ZulipExport, type ZulipMessage, type ZulipUser } from "./zulip-export.js";

export interface IdMaps {
  readonly users: Map<number, number>;
  readonly channels: Map<number, number>;
  readonly messages: Map<number, number>;
  readonly groups: Map<number, number>;
}

export interface ImportReport {
  readonly realm: { readonly id: number; readonly subdomain: string; readonly name: string };
  readonly imported: Record<string, number>;
  /** What could not be carried over: reason -> count (with a few examples). */
  readonly notCarried: Record<string, { count: number; examples: string[] }>;
  /** Tables in the export that parley has no place for, with row counts. */
  readonly ignoredTables: Record<string, number>;
}

export interface ReplayOptions {
  readonly subdomain: string;
  /** Called with (done, total) as messages are replayed. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Sets the clock the store's actions read (the store was opened with it). */
  readonly setClock: (unixSeconds: number) => void;
  /** The data directory uploads and emoji images are copied into (the export's unpacked files are read). */
  readonly dataDir?: string;
}

const ROLES = new Set<number>([ROLE.OWNER, ROLE.ADMINISTRATOR, ROLE.MODERATOR, ROLE.MEMBER, ROLE.GUEST]);

type TimelineItem =
  | {
      readonly kind: "sub";
      readonly order: number;
      readonly sub: number;
      readonly at: number;
      readonly user: number;
      readonly stream: number;
      readonly active: boolean;
    }
  | {
      readonly kind: "message";
      readonly order: number;
      readonly sub: number;
      readonly at: number;
      readonly message: ZulipMessage;
    };

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function replayExport(
  store: Store,
  data: ZulipExport,
  options: ReplayOptions,
): { report: ImportReport; ids: IdMaps } {
  const ids: IdMaps = { users: new Map(), channels: new Map(), messages: new Map(), groups: new Map() };
  const imported: Record<string, number> = {};
  const notCarried: ImportReport["notCarried"] = {};
  const count = (what: string, n = 1) => (imported[what] = (imported[what] ?? 0) + n);
  const skip = (why: string, example: string) => {
    const entry = (notCarried[why] ??= { count: 0, examples: [] });
    entry.count++;
    if (entry.examples.length < 3) entry.examples.push(example);
  };
  const firstTime = Math.min(
    data.realm.date_created ?? Infinity,
    data.messages[0]?.date_sent ?? Infinity,
    ...data.audit.map((a) => a.event_time),
  );
  options.setClock(Math.floor(Number.isFinite(firstTime) ? firstTime : Date.now() / 1000));

  // ---- users: the realm's first active human owner creates it; bots after humans (their owners exist) ----
  const humans = data.users.filter((u) => u.is_bot !== true);
  const owner =
    humans.find((u) => u.role === ROLE.OWNER && u.is_active !== false) ??
    humans.find((u) => u.role === ROLE.ADMINISTRATOR && u.is_active !== false);
  if (!owner) throw new Error("the export has no active owner or administrator to create the realm with");
  const emailOf = (u: ZulipUser) => (u.delivery_email && u.delivery_email !== "" ? u.delivery_email : u.email);
  const { realm, owner: parleyOwner } = store.createRealm({
    subdomain: options.subdomain,
    name: data.realm.name,
    owner: {
      email: emailOf(owner),
      fullName: owner.full_name,
      ...(owner.timezone ? { timezone: owner.timezone } : {}),
    },
  });
  ids.users.set(owner.id, parleyOwner.id);
  count("users");
  const ownerId = parleyOwner.id;
  for (const u of [...humans, ...data.users.filter((x) => x.is_bot === true)]) {
    if (u.id === owner.id) continue;
    try {
      const role: Role = u.role !== undefined && ROLES.has(u.role) ? (u.role as Role) : ROLE.MEMBER;
      const botOwner = u.bot_owner === null || u.bot_owner === undefined ? null : (ids.users.get(u.bot_owner) ?? null);
      const user = store.createUser({
        realmId: realm.id,
        email: emailOf(u),
        fullName: u.full_name,
        role,
        ...(u.timezone ? { timezone: u.timezone } : {}),
        ...(u.is_bot === true
          ? {
              bot: {
                type: (u.bot_type !== null && u.bot_type !== undefined && u.bot_type >= 1 && u.bot_type <= 4
                  ? u.bot_type
                  : 1) as BotType,
                ownerId: botOwner,
                config: botConfigAtCreation(data, u),
              },
            }
          : {}),
      });
      ids.users.set(u.id, user.id);
      count(u.is_bot === true ? "bots" : "users");
    } catch (error) {
      skip(`user refused: ${reason(error)}`, `user ${u.id} (${emailOf(u)})`);
    }
  }

  // ---- the realm's settings, custom emoji and uploads: before the messages that use them ----
  const settings: SettingsReplay = {
    store,
    data,
    realmId: realm.id,
    ownerId,
    users: ids.users,
    channels: ids.channels,
    groups: ids.groups,
    messages: ids.messages,
    count,
    skip,
    setClock: options.setClock,
    dataDir: options.dataDir,
    emoji: new Map(),
    rewriteContent: (content) => content,
  };
  replayAvatars(settings);
  const uploadPaths = replayRealmSettings(settings);

  // ---- the timeline: subscription changes and messages ----
  const streamByRecipient = new Map<number, number>();
  const membersOfRecipient = new Map<number, number[]>();
  for (const r of data.recipients.values()) if (r.type === RECIPIENT.STREAM) streamByRecipient.set(r.id, r.type_id);
  for (const s of data.subscriptions) {
    const r = data.recipients.get(s.recipient);
    if (r?.type === RECIPIENT.DIRECT_MESSAGE_GROUP)
      (membersOfRecipient.get(r.id) ?? membersOfRecipient.set(r.id, []).get(r.id)!).push(s.user_profile);
  }
  const streams = new Map(data.streams.map((s) => [s.id, s]));
  const byTime = [...data.messages].sort((a, b) => a.date_sent - b.date_sent || a.id - b.id);
  /** The last message sent at or before `t` (so a change logged at t comes after it). */
  const lastMessageAt = (t: number): number => {
    let lo = 0;
    let hi = byTime.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byTime[mid]!.date_sent <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : byTime[lo - 1]!.id;
  };
  const timeline: TimelineItem[] = [];
  const withHistory = new Set<string>();
  const subEvents = data.audit
    .filter(
      (a) =>
        a.event_type === AUDIT.SUBSCRIPTION_CREATED ||
        a.event_type === AUDIT.SUBSCRIPTION_ACTIVATED ||
        a.event_type === AUDIT.SUBSCRIPTION_DEACTIVATED,
    )
    .sort((a, b) => a.event_time - b.event_time || (a.id ?? 0) - (b.id ?? 0));
  subEvents.forEach((a, i) => {
    if (
      a.modified_user === null ||
      a.modified_user === undefined ||
      a.modified_stream === null ||
      a.modified_stream === undefined
    )
      return;
    withHistory.add(`${a.modified_user}:${a.modified_stream}`);
    // event_last_message_id places the change exactly between messages; without it, by time.
    const after = a.event_last_message_id ?? lastMessageAt(a.event_time);
    timeline.push({
      kind: "sub",
      order: after + 0.5,
      sub: i,
      at: a.event_time,
      user: a.modified_user,
      stream: a.modified_stream,
      active: a.event_type !== AUDIT.SUBSCRIPTION_DEACTIVATED,
    });
  });
  // Subscriptions the audit log says nothing about: from their current state.
  let approximated = 0;
  for (const s of data.subscriptions) {
    const stream = streamByRecipient.get(s.recipient);
    if (stream === undefined || withHistory.has(`${s.user_profile}:${stream}`)) continue;
    approximated++;
    timeline.push({ kind: "sub", order: -1, sub: -1, at: firstTime, user: s.user_profile, stream, active: true });
    if (s.active === false)
      timeline.push({
        kind: "sub",
        order: Number.MAX_SAFE_INTEGER,
        sub: 0,
        at: firstTime,
        user: s.user_profile,
        stream,
        active: false,
      });
  }
  if (approximated > 0)
    skip(
      "subscription history: no audit-log entries, so subscribed from the start (and unsubscribed at the end if inactive)",
      `${approximated} subscription(s)`,
    );
  for (const m of data.messages) timeline.push({ kind: "message", order: m.id, sub: 0, at: m.date_sent, message: m });
  timeline.sort((a, b) => a.order - b.order || a.sub - b.sub);
  // Each channel subscription's row, and the place of its last change (where an ended one takes its settings).
  const subscriptionRows = new Map<string, (typeof data.subscriptions)[number]>();
  for (const s of data.subscriptions) {
    const stream = streamByRecipient.get(s.recipient);
    if (stream !== undefined) subscriptionRows.set(`${s.user_profile}:${stream}`, s);
  }
  const lastChange = new Map<string, number>();
  timeline.forEach((item, i) => {
    if (item.kind === "sub") lastChange.set(`${item.user}:${item.stream}`, i);
  });
  const subscriptionSettings = { store, count, skip };

  const channelFor = (streamId: number, firstUser: number): number | null => {
    const known = ids.channels.get(streamId);
    if (known !== undefined) return known;
    const s = streams.get(streamId);
    if (!s) return null;
    const result = store.subscribe(ownerId, {
      channels: [{ name: s.name, ...(s.description !== undefined ? { description: s.description } : {}) }],
      principals: [firstUser],
      newChannel: {
        inviteOnly: s.invite_only === true,
        historyPublicToSubscribers: s.history_public_to_subscribers ?? s.invite_only !== true,
        isWebPublic: s.is_web_public === true,
      },
    });
    const created = result.createdChannelIds[0];
    if (created === undefined) throw new Error(`channel ${s.name} was not created`);
    ids.channels.set(streamId, created);
    count("channels");
    return created;
  };
  const mentionIds = /(@_?\*\*)([^*|]+)\|(\d+)(\*\*)/g;
  const uploadLink = /\/user_uploads\/([^\s)\]"'<>]+)/g;
  const rewrite = (content: string) =>
    content
      .replace(mentionIds, (all, open: string, name: string, zid: string, close: string) => {
        const mapped = ids.users.get(Number(zid));
        return mapped === undefined ? all : `${open}${name}|${mapped}${close}`;
      })
      .replace(uploadLink, (all, path: string) => {
        const mapped = uploadPaths.get(path) ?? uploadPaths.get(decodeURIComponentSafe(path));
        return mapped === undefined ? all : `/user_uploads/${mapped}`;
      });
  settings.rewriteContent = rewrite;

  const total = data.messages.length;
  let done = 0;
  for (const [index, item] of timeline.entries()) {
    options.setClock(Math.floor(item.at));
    if (item.kind === "sub") {
      const user = ids.users.get(item.user);
      if (user === undefined) continue;
      try {
        const known = ids.channels.get(item.stream);
        if (known === undefined) {
          if (item.active) channelFor(item.stream, user);
          continue;
        }
        const name = store.getChannel(known)!.name;
        const pair = `${item.user}:${item.stream}`;
        const row = subscriptionRows.get(pair);
        if (!item.active && lastChange.get(pair) === index && row?.active === false)
          applySubscriptionSettings(subscriptionSettings, user, known, row, `user ${item.user} stream ${item.stream}`);
        if (item.active) store.subscribe(ownerId, { channels: [{ name }], principals: [user] });
        else store.unsubscribe(ownerId, [name], [user]);
        count(item.active ? "subscriptions" : "unsubscriptions");
      } catch (error) {
        skip(`subscription change refused: ${reason(error)}`, `user ${item.user} stream ${item.stream}`);
      }
      continue;
    }
    const m = item.message;
    done++;
    if (done % 200 === 0 || done === total) options.onProgress?.(done, total);
    const sender = ids.users.get(m.sender);
    if (sender === undefined) {
      skip(
        data.crossRealmUserIds.has(m.sender)
          ? "message from a Zulip system bot (not a user of the realm)"
          : "message from a user that was not imported",
        `message ${m.id}`,
      );
      continue;
    }
    const recipient = data.recipients.get(m.recipient);
    try {
      let to;
      if (recipient?.type === RECIPIENT.STREAM) {
        const channel = channelFor(recipient.type_id, sender);
        if (channel === null) throw new Error(`unknown stream ${recipient.type_id}`);
        to = { type: "channel" as const, channel, topic: m.subject ?? m.topic_name ?? "" };
      } else if (recipient?.type === RECIPIENT.PERSONAL) {
        const other = ids.users.get(recipient.type_id);
        if (other === undefined) throw new Error("its recipient was not imported");
        to = { type: "direct" as const, users: [other] };
      } else if (recipient?.type === RECIPIENT.DIRECT_MESSAGE_GROUP) {
        const members = (membersOfRecipient.get(recipient.id) ?? [])
          .map((u) => ids.users.get(u))
          .filter((u): u is number => u !== undefined && u !== sender);
        to = { type: "direct" as const, users: members };
      } else throw new Error(`unknown recipient ${m.recipient}`);
      const client = m.sending_client === undefined ? undefined : data.clients.get(m.sending_client);
      const { id } = store.sendMessage({
        senderId: sender,
        to,
        content: rewrite(m.content),
        dateSent: Math.floor(m.date_sent),
        readBySender: false,
        automaticPolicies: false,
        // History, not new messages: no outgoing webhook bot is called for it, no one is emailed about it.
        callServiceBots: false,
        missedMessageEmails: false,
        // Zulip's export carries no submessages and its import makes none: a /poll arrives as text.
        widgets: false,
        ...(client ? { client } : {}),
      });
      ids.messages.set(m.id, id);
      count("messages");
    } catch (error) {
      skip(`message refused: ${reason(error)}`, `message ${m.id}`);
    }
  }
  options.onProgress?.(total, total);
  const lastTime = data.messages.reduce((t, m) => Math.max(t, m.date_sent), firstTime);
  options.setClock(Math.floor(Number.isFinite(lastTime) ? lastTime : Date.now() / 1000));

  // ---- flags: read, starred and collapsed as Zulip had them; mentions are recomputed from content ----
  const byUserFlag = new Map<string, number[]>();
  for (const um of data.userMessages) {
    const user = ids.users.get(um.user);
    const message = ids.messages.get(um.message);
    if (user === undefined || message === undefined) continue;
    for (const flag of ["read", "starred", "collapsed"])
      if (um.flags.has(flag))
        (byUserFlag.get(`${user}:${flag}`) ?? byUserFlag.set(`${user}:${flag}`, []).get(`${user}:${flag}`)!).push(
          message,
        );
  }
  for (const [keyText, messages] of byUserFlag) {
    const [user, flag] = keyText.split(":") as [string, string];
    try {
      store.updateFlags(Number(user), messages, flag, "add");
      count(`${flag} flags`, messages.length);
    } catch {
      // One inaccessible message fails the whole call: retry one by one to keep the rest.
      for (const message of messages) {
        try {
          store.updateFlags(Number(user), [message], flag, "add");
          count(`${flag} flags`);
        } catch (error) {
          skip(`${flag} flag refused: ${reason(error)}`, `parley message ${message} user ${user}`);
        }
      }
    }
  }

  // ---- reactions ----
  for (const r of data.reactions) {
    const user = ids.users.get(r.user_profile);
    const message = ids.messages.get(r.message);
    if (user === undefined || message === undefined) continue;
    const realmEmoji = r.reaction_type === "realm_emoji";
    const emojiCode = realmEmoji ? settings.emoji.get(Number(r.emoji_code)) : r.emoji_code;
    if (emojiCode === undefined) {
      skip("reaction with a custom emoji that was not imported", `:${r.emoji_name}: on message ${r.message}`);
      continue;
    }
    try {
      store.addReaction(user, message, {
        emojiName: r.emoji_name,
        emojiCode: String(emojiCode),
        reactionType: realmEmoji
          ? "realm_emoji"
          : r.reaction_type === "zulip_extra_emoji"
            ? "zulip_extra_emoji"
            : "unicode_emoji",
      });
      count("reactions");
    } catch (error) {
      skip(`reaction refused: ${reason(error)}`, `:${r.emoji_name}: on message ${r.message}`);
    }
  }

  // ---- user groups (named, non-system), then subgroups ----
  for (const g of data.groups) {
    const members = data.groupMembers
      .filter((m) => m.user_group === g.id)
      .map((m) => ids.users.get(m.user_profile))
      .filter((u): u is number => u !== undefined);
    try {
      const group = store.createGroup(ownerId, { name: g.name, description: g.description, members });
      ids.groups.set(g.id, group.id);
      count("user groups");
    } catch (error) {
      skip(`user group refused: ${reason(error)}`, g.name);
    }
  }
  const subgroupsOf = new Map<number, number[]>();
  for (const gm of data.groupSubgroups) {
    const parent = ids.groups.get(gm.supergroup);
    const child = ids.groups.get(gm.subgroup);
    if (parent !== undefined && child !== undefined)
      (subgroupsOf.get(parent) ?? subgroupsOf.set(parent, []).get(parent)!).push(child);
  }
  for (const [parent, children] of subgroupsOf) {
    try {
      store.updateGroupSubgroups(ownerId, parent, children, []);
    } catch (error) {
      skip(`subgroups refused: ${reason(error)}`, `group ${parent}`);
    }
  }
  replayGroupSettings(settings);
  for (const g of data.groups) {
    const id = ids.groups.get(g.id);
    if (g.deactivated && id !== undefined) store.deactivateGroup(ownerId, id);
  }

  // ---- settings of the subscriptions still active (ended ones took theirs as they ended), topic policies ----
  const deactivated = new Set(data.users.filter((u) => u.is_active === false).map((u) => u.id));
  for (const s of data.subscriptions) {
    const stream = streamByRecipient.get(s.recipient);
    const user = ids.users.get(s.user_profile);
    const channel = stream === undefined ? undefined : ids.channels.get(stream);
    if (user === undefined || channel === undefined || s.active === false) continue;
    const example = `user ${s.user_profile} stream ${stream}`;
    if (!store.isUserSubscribed(user, user, channel)) {
      // Ended by the deactivation the export logs as its end: Zulip keeps it active, so it comes back
      // (its interval, reopened here, closes again at the deactivation below, before any other message).
      if (!deactivated.has(s.user_profile)) continue;
      try {
        store.subscribe(ownerId, { channels: [{ name: store.getChannel(channel)!.name }], principals: [user] });
        count("subscriptions kept through a deactivation");
      } catch (error) {
        skip(`subscription change refused: ${reason(error)}`, example);
        continue;
      }
    }
    applySubscriptionSettings(subscriptionSettings, user, channel, s, example);
  }
  for (const t of data.userTopics) {
    const user = ids.users.get(t.user_profile);
    const channel = ids.channels.get(t.stream);
    if (user === undefined || channel === undefined) continue;
    try {
      store.setTopicPolicy(user, channel, t.topic_name, t.visibility_policy ?? 1);
      count("topic policies");
    } catch (error) {
      skip(`topic policy refused: ${reason(error)}`, `${t.topic_name}`);
    }
  }

  // ---- channels nobody used, channel folders and permissions, archiving; each person's own data ----
  replayChannelsAndPersonalData(settings, membersOfRecipient);
  // Edit histories once every channel a move names exists (unused channels are made just above).
  replayEditHistories(
    { store, users: ids.users, channels: ids.channels, messages: ids.messages, rewrite, count, skip },
    data.messages,
  );

  replayBotStorage(settings);
  replayInvites(settings);
  replayPresence(settings);
  // ---- deactivations last: deactivated users still sent and received their messages ----
  for (const u of data.users) {
    const id = ids.users.get(u.id);
    if (u.is_active === false && id !== undefined) {
      store.setUserActive(id, false);
      count("deactivated users");
    }
  }
  skip("API keys and passwords (every user gets a new API key)", `${ids.users.size} user(s)`);
  return {
    report: {
      realm: { id: realm.id, subdomain: realm.subdomain, name: realm.name },
      imported,
      notCarried,
      ignoredTables: data.ignoredTables,
    },
    ids,
  };
}
