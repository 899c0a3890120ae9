/**
 * @module bench/peer/mutations
 * Issue #28's rows on the PostgreSQL peer: the SQL Zulip runs for the same operation,
 * statement by statement, in its transaction shapes (zerver/actions/message_edit.py
 * check_update_message / do_update_message, zerver/lib/topic.py
 * update_messages_for_topic_edit, zerver/lib/user_message.py bulk_insert_all_ums,
 * zerver/lib/user_topics.py, zerver/actions/message_send.py for Notification Bot's
 * notices, zerver/views/streams.py delete_in_topic, zerver/actions/message_delete.py
 * and zerver/lib/retention.py move_messages_to_archive). Queries Zulip answers from
 * memcached or its request middleware (realm, user, linkifiers, group membership) are
 * left out, as is Tornado's event fan-out; the engine side has no listener either.
 *
 * Search: Zulip updates search_tsvector after the commit, in process_fts_updates
 * (the trigger queues the row in fts_update_log). `ftsCatchUp` runs that worker's
 * batch; the harness times it apart from the request and runs it before comparing
 * search narrows.
 */
import type pg from "pg";
import type { Manifest } from "../../tools/generate/manifest.js";
import { RECIPIENT } from "../../tools/generate/pg-copy.js";
import {
  CHECK_DEPTH,
  PRIVATE_CHANNEL_NAME,
  RESOLVED_PREFIX,
  TOPIC_SIZES,
  WORDS,
  editContent,
  mutationChecks,
  topicContent,
  topicName,
  userTopicKey,
  type CheckValues,
  type MutationCast,
  type MutationKind,
} from "../workloads/mutations.js";
import { ids, lit } from "./workloads.js";
import { prepareMutationTables } from "./mutation-schema.js";

/** Zulip's UserMessage flag bits used here. */
const F = { read: 1, mentioned: 8, historical: 1024, anyMention: 120 } as const;
const GUEST = 600;
const MESSAGE_COLUMNS =
  "id, sender_id, recipient_id, realm_id, type, subject, content, rendered_content, rendered_content_version, date_sent, sending_client_id, last_edit_time, edit_history, has_attachment, has_image, has_link, is_channel_message";

type Q = <T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string) => Promise<T[]>;

/** The peer's rendering of the engine's message Markdown: mentions and paragraphs, nothing else appears here. */
function renderLikeZulip(content: string): string {
  const escaped = content.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const withMentions = escaped.replace(
    /@(_?)\*\*([^|*]+)\|(\d+)\*\*/g,
    (_all, silent: string, name: string, id: string) =>
      `<span class="user-mention${silent ? " silent" : ""}" data-user-id="${id}">@${name}</span>`,
  );
  return `<p>${withMentions}</p>`;
}

/** Picks the cast from the peer's users: active (awake) and soft-deactivated ones. */
export async function chooseCast(db: pg.Client, m: Manifest): Promise<MutationCast> {
  const s = m.subjects;
  const users = (
    await db.query<{ id: number; full_name: string; long_term_idle: boolean }>(
      `SELECT id, full_name, long_term_idle FROM zerver_userprofile ORDER BY id`,
    )
  ).rows;
  const named = (id: number) => ({ id, name: users.find((u) => u.id === id)!.full_name });
  const subjects = new Set(Object.values(s));
  const active = users.filter((u) => !u.long_term_idle && !subjects.has(u.id) && u.id !== m.ownerId).map((u) => u.id);
  const idle = users.filter((u) => u.long_term_idle && u.id !== m.ownerId).map((u) => u.id);
  return {
    actor: s.main,
    admin: m.ownerId,
    topicSender: s.sender,
    mentionedBefore: named(s.dmPartner),
    mentionedAfter: named(s.backlog),
    privateMembers: [s.main, s.dmPartner, ...active.slice(0, 8), ...idle.slice(0, 40)].sort((a, b) => a - b),
    losingUser: s.backlog,
    topicPolicies: [
      { userId: s.main, policy: 3 },
      { userId: s.backlog, policy: 1 },
      { userId: s.dmPartner, policy: 2 },
    ],
  };
}

export interface PeerMutations {
  /** `engineIds`: the IDs the engine's setup sent, which the peer's rows take. */
  setup(kind: MutationKind, iteration: number, engineIds: readonly number[]): Promise<void>;
  /**
   * The request. `asWritten`: the move's losing-rows DELETE exactly as Zulip's ORM
   * writes it (subqueries); otherwise with its user and message IDs inlined (see
   * moveOrRename). Answers how long that DELETE took (moves only).
   */
  run(kind: MutationKind, iteration: number, asWritten: boolean): Promise<{ losingRowsDeleteMs: number | null }>;
  /** process_fts_updates until fts_update_log is empty; returns the rows it indexed. */
  ftsCatchUp(): Promise<number>;
  check(kind: MutationKind, iteration: number): Promise<CheckValues>;
}

/**
 * The peer side. `privateChannelId` and `botId` are the engine's (the channel it
 * created for the move target, its Notification Bot), so message rows line up.
 */
export async function peerMutations(
  db: pg.Client,
  m: Manifest,
  cast: MutationCast,
  privateChannelId: number,
  botId: number,
): Promise<PeerMutations> {
  const R = m.realmId;
  const G = m.generalChannelId;
  const RG = RECIPIENT.stream(G);
  const P = privateChannelId;
  const RP = RECIPIENT.stream(P);
  // BENCH_SQL_TRACE=MS prints every statement slower than MS (to see where PostgreSQL's time goes).
  const trace = Number(process.env["BENCH_SQL_TRACE"] ?? "NaN");
  const q: Q = async <T extends pg.QueryResultRow>(sql: string) => {
    const t0 = performance.now();
    const rows = (await db.query<T>(sql)).rows;
    const ms = performance.now() - t0;
    if (ms >= trace) process.stderr.write(`    [sql ${ms.toFixed(1)} ms, ${rows.length} rows] ${sql.slice(0, 160)}\n`);
    return rows;
  };
  const names = new Map(
    (await q<{ id: number; full_name: string }>(`SELECT id, full_name FROM zerver_userprofile`)).map((r) => [
      r.id,
      r.full_name,
    ]),
  );

  await prepareMutationTables(db, cast.admin);
  // The engine's new private channel (protected history) and its Notification Bot.
  await db.query("BEGIN");
  await db.query(`INSERT INTO zerver_recipient (id, type_id, type) VALUES (${RP}, ${P}, 2)`);
  await db.query(
    `INSERT INTO zerver_stream (id, name, realm_id, invite_only, recipient_id, history_public_to_subscribers, date_created) VALUES (${P}, ${lit(PRIVATE_CHANNEL_NAME)}, ${R}, true, ${RP}, false, now())`,
  );
  await db.query(
    `INSERT INTO zerver_subscription (user_profile_id, recipient_id, active, is_muted) SELECT u, ${RP}, true, false FROM unnest(ARRAY[${ids(cast.privateMembers)}]) u`,
  );
  await db.query(
    `INSERT INTO zerver_userprofile (id, email, full_name, realm_id, is_active, is_bot, long_term_idle) VALUES (${botId}, 'notification-bot@zulip.com', 'Notification Bot', ${R}, true, true, false) ON CONFLICT DO NOTHING`,
  );
  await db.query("COMMIT");

  const topicIs = (recipientId: number, topic: string) =>
    `realm_id = ${R} AND recipient_id = ${recipientId} AND upper(subject::text) = upper(${lit(topic)}) AND is_channel_message`;
  const activeSubs = (channelId: number, opts: { includeDeactivated?: boolean; excludeIdle?: boolean } = {}) =>
    `SELECT s.user_profile_id FROM zerver_subscription s JOIN zerver_recipient r ON r.id = s.recipient_id JOIN zerver_userprofile u ON u.id = s.user_profile_id WHERE r.type = 2 AND r.type_id = ${channelId} AND s.active${opts.includeDeactivated ? "" : " AND s.is_user_active"}${opts.excludeIdle ? " AND NOT u.long_term_idle" : ""}`;
  const now = () => Math.floor(Date.now() / 1000);
  const historyJson = (entry: Record<string, unknown>) => JSON.stringify([entry]);

  /** access_message(lock_message=True) with Message.DEFAULT_SELECT_RELATED, then the stream for has_message_access. */
  const accessMessageLocked = async (id: number) => {
    const rows = await q<{ edit_history: string | null; content: string; rendered_content: string; subject: string }>(
      `SELECT zerver_message.*, zerver_userprofile.full_name, zerver_userprofile.email, zerver_recipient.type FROM zerver_message JOIN zerver_userprofile ON zerver_userprofile.id = zerver_message.sender_id JOIN zerver_recipient ON zerver_recipient.id = zerver_message.recipient_id WHERE zerver_message.id = ${id} FOR UPDATE OF zerver_message`,
    );
    await q(`SELECT * FROM zerver_stream WHERE id = ${G}`);
    return rows[0]!;
  };

  /** update_message_cache: the changed rows with their select_related joins, reactions, submessages. */
  const refreshMessageCache = async (messageIds: readonly number[]) => {
    await q(
      `SELECT zerver_message.*, zerver_userprofile.full_name, zerver_userprofile.email, zerver_recipient.type, zerver_recipient.type_id FROM zerver_message JOIN zerver_userprofile ON zerver_userprofile.id = zerver_message.sender_id JOIN zerver_recipient ON zerver_recipient.id = zerver_message.recipient_id WHERE zerver_message.id IN (${ids(messageIds)})`,
    );
    await q(
      `SELECT zerver_reaction.message_id, emoji_name, emoji_code, reaction_type, zerver_userprofile.email, user_profile_id, zerver_userprofile.full_name FROM zerver_reaction JOIN zerver_userprofile ON zerver_userprofile.id = user_profile_id WHERE message_id IN (${ids(messageIds)})`,
    );
    await q(
      `SELECT id, message_id, sender_id, msg_type, content FROM zerver_submessage WHERE message_id IN (${ids(messageIds)}) ORDER BY message_id, id`,
    );
  };

  /**
   * internal_send_stream_message inside the caller's transaction: get_recipient_info's
   * subscribers, the message row, a UserMessage row per awake subscriber plus the sender
   * and the acting user (read for them; with `unreadFor`, read for everyone else too).
   */
  const sendNotice = async (
    channelId: number,
    topic: string,
    content: string,
    actingUser: number,
    options: { type?: number; unreadFor?: ReadonlySet<number> } = {},
  ) => {
    const subs = await q<{ user_profile_id: number; long_term_idle: boolean }>(
      `SELECT zerver_subscription.user_profile_id, zerver_userprofile.long_term_idle, zerver_subscription.is_muted FROM zerver_subscription JOIN zerver_userprofile ON zerver_userprofile.id = zerver_subscription.user_profile_id WHERE zerver_subscription.recipient_id = ${RECIPIENT.stream(channelId)} AND zerver_subscription.active AND zerver_userprofile.is_active`,
    );
    const rows = new Set(subs.filter((r) => !r.long_term_idle).map((r) => r.user_profile_id));
    rows.add(botId);
    rows.add(actingUser);
    const rendered = renderLikeZulip(content);
    const [row] = await q<{ id: number }>(
      `INSERT INTO zerver_message (sender_id, recipient_id, realm_id, type, subject, content, rendered_content, rendered_content_version, date_sent, sending_client_id, has_attachment, has_image, has_link, is_channel_message) VALUES (${botId}, ${RECIPIENT.stream(channelId)}, ${R}, ${options.type ?? 1}, ${lit(topic)}, ${lit(content)}, ${lit(rendered)}, 1, now(), 1, false, false, false, true) RETURNING id`,
    );
    const flagsOf = (u: number) =>
      u === botId || u === actingUser || (options.unreadFor !== undefined && !options.unreadFor.has(u)) ? F.read : 0;
    await q(
      `INSERT INTO zerver_usermessage (user_profile_id, message_id, flags) VALUES ${[...rows]
        .sort((a, b) => a - b)
        .map((u) => `(${u}, ${row!.id}, ${flagsOf(u)})`)
        .join(",")} ON CONFLICT DO NOTHING`,
    );
    return row!.id;
  };

  /**
   * bulk_do_set_user_topic_visibility_policy: the users' current rows, then a delete
   * (INHERIT) or Zulip's INSERT ... ON CONFLICT upsert.
   */
  const setTopicPolicies = async (users: readonly number[], channelId: number, topic: string, policy: number) => {
    if (users.length === 0) return;
    const where = `user_profile_id IN (${ids(users)}) AND stream_id = ${channelId} AND upper(topic_name::text) = upper(${lit(topic)})`;
    const rows = await q<{ user_profile_id: number; visibility_policy: number }>(
      `SELECT zerver_usertopic.*, zerver_userprofile.full_name FROM zerver_usertopic JOIN zerver_userprofile ON zerver_userprofile.id = user_profile_id WHERE ${where}`,
    );
    if (policy === 0) {
      await q(`DELETE FROM zerver_usertopic WHERE ${where}`);
      return;
    }
    const changing = users.filter((u) => rows.find((r) => r.user_profile_id === u)?.visibility_policy !== policy);
    if (changing.length > 0)
      await q(
        `INSERT INTO zerver_usertopic (user_profile_id, stream_id, recipient_id, topic_name, last_updated, visibility_policy) SELECT * FROM UNNEST(ARRAY[${ids(changing)}]) AS user_profile(user_profile_id) CROSS JOIN (VALUES (${channelId}, ${RECIPIENT.stream(channelId)}, ${lit(topic)}, now(), ${policy})) AS other_values(stream_id, recipient_id, topic_name, last_updated, visibility_policy) ON CONFLICT (user_profile_id, stream_id, lower(topic_name::text)) DO UPDATE SET last_updated = EXCLUDED.last_updated, visibility_policy = EXCLUDED.visibility_policy`,
      );
  };

  /**
   * The user_topic migration of a full-topic move (moved_all_visible_messages): rows of
   * users losing access are removed; the others' old-topic rows are removed and their
   * policy set on the target topic (the target held no messages, so the old policy wins).
   */
  const migrateUserTopics = async (
    fromChannel: number,
    fromTopic: string,
    toChannel: number,
    toTopic: string,
    losingAccess: ReadonlySet<number>,
  ) => {
    const topicRows = (channelId: number, topic: string) =>
      q<{ user_profile_id: number; visibility_policy: number }>(
        `SELECT zerver_usertopic.*, zerver_userprofile.full_name, zerver_userprofile.realm_id FROM zerver_usertopic JOIN zerver_userprofile ON zerver_userprofile.id = user_profile_id WHERE stream_id = ${channelId} AND upper(topic_name::text) = upper(${lit(topic)})`,
      );
    const orig = await topicRows(fromChannel, fromTopic);
    const target = await topicRows(toChannel, toTopic);
    await setTopicPolicies(
      orig.filter((r) => losingAccess.has(r.user_profile_id)).map((r) => r.user_profile_id),
      fromChannel,
      fromTopic,
      0,
    );
    const byPair = new Map<string, number[]>();
    for (const r of orig.filter((x) => !losingAccess.has(x.user_profile_id))) {
      const t = target.find((x) => x.user_profile_id === r.user_profile_id)?.visibility_policy ?? 0;
      const k = `${r.visibility_policy}:${t}`;
      byPair.set(k, [...(byPair.get(k) ?? []), r.user_profile_id]);
    }
    for (const [pair, users] of byPair) {
      const [origPolicy, targetPolicy] = pair.split(":").map(Number) as [number, number];
      if (origPolicy !== 0) await setTopicPolicies(users, fromChannel, fromTopic, 0);
      if (origPolicy !== targetPolicy) await setTopicPolicies(users, toChannel, toTopic, origPolicy);
    }
    return orig;
  };

  /** Rows of one message the edit or move leaves in place, for the event's per-user flags. */
  const userMessagesOf = (messageId: number, extra = "") =>
    q<{ id: string; user_profile_id: number; flags: string }>(
      `SELECT * FROM zerver_usermessage WHERE message_id = ${messageId}${extra}`,
    );

  // ---- the four operations ----

  const sentIds = new Map<string, readonly number[]>();
  const key = (kind: MutationKind, iteration: number) => `${kind}:${iteration}`;
  const mention = (who: { readonly id: number; readonly name: string }) => who;

  const editMessage = async (iteration: number) => {
    const [target] = sentIds.get(key("edit", iteration))!;
    const content = editContent(iteration, mention(cast.mentionedAfter), WORDS.after);
    const rendered = renderLikeZulip(content);
    await db.query("BEGIN");
    const message = await accessMessageLocked(target!);
    await q(`SELECT * FROM zerver_stream WHERE id = ${G} AND realm_id = ${R}`);
    // MentionData: the mentioned users by name and ID.
    await q(
      `SELECT id, full_name, email, is_active, is_bot FROM zerver_userprofile WHERE realm_id = ${R} AND is_active AND (upper(full_name) = upper(${lit(cast.mentionedAfter.name)}) OR id = ${cast.mentionedAfter.id})`,
    );
    // get_mentions_for_message_updates, then event_recipient_ids_for_action_on_messages.
    const prior = await q<{ user_profile_id: number }>(
      `SELECT user_profile_id FROM zerver_usermessage WHERE message_id = ${target} AND (flags & ${F.historical}) = 0 AND (flags & ${F.anyMention}) <> 0`,
    );
    await q(`SELECT * FROM zerver_stream WHERE id = ${G}`);
    await q(activeSubs(G, { excludeIdle: true }));
    await q(
      `SELECT zerver_usermessage.user_profile_id FROM zerver_usermessage JOIN zerver_userprofile ON zerver_userprofile.id = zerver_usermessage.user_profile_id WHERE message_id IN (${target}) AND NOT (zerver_userprofile.role = ${GUEST}) AND NOT zerver_userprofile.long_term_idle`,
    );
    // update_message_content: get_recipient_info, then every UserMessage row's flags.
    await q(
      `SELECT zerver_subscription.user_profile_id, zerver_userprofile.long_term_idle, zerver_subscription.is_muted FROM zerver_subscription JOIN zerver_userprofile ON zerver_userprofile.id = zerver_subscription.user_profile_id WHERE zerver_subscription.recipient_id = ${RG} AND zerver_subscription.active AND zerver_userprofile.is_active`,
    );
    const ums = await userMessagesOf(target!);
    for (const um of ums) {
      const before = Number(um.flags);
      const after = um.user_profile_id === cast.mentionedAfter.id ? before | F.mentioned : before & ~F.anyMention;
      if (after !== before) await q(`UPDATE zerver_usermessage SET flags = ${after} WHERE id = ${um.id}`);
    }
    // do_update_mobile_push_notification: withdraw pushes of users no longer mentioned.
    const removed = prior.map((r) => r.user_profile_id).filter((u) => u !== cast.mentionedAfter.id);
    if (removed.length > 0)
      await q(
        `SELECT user_profile_id, message_id FROM zerver_usermessage WHERE message_id IN (${target}) AND user_profile_id IN (${ids(removed)}) AND (flags & 4096) <> 0`,
      );
    // check_attachment_reference_change.
    await q(
      `SELECT zerver_attachment.* FROM zerver_attachment JOIN zerver_attachment_messages ON zerver_attachment_messages.attachment_id = zerver_attachment.id WHERE zerver_attachment_messages.message_id = ${target}`,
    );
    const history = JSON.parse(message.edit_history ?? "[]") as unknown[];
    history.unshift({
      user_id: cast.actor,
      timestamp: now(),
      prev_content: message.content,
      prev_rendered_content: message.rendered_content,
      prev_rendered_content_version: 1,
    });
    await q(
      `UPDATE zerver_message SET subject = ${lit(message.subject)}, content = ${lit(content)}, rendered_content = ${lit(rendered)}, rendered_content_version = 1, last_edit_time = now(), edit_history = ${lit(JSON.stringify(history))}, has_attachment = false, has_image = false, has_link = false, recipient_id = ${RG} WHERE id = ${target}`,
    );
    await refreshMessageCache([target!]);
    await q(
      `${activeSubs(G, { excludeIdle: true })} AND NOT (s.user_profile_id IN (${ids(ums.map((u) => u.user_profile_id))}))`,
    );
    await db.query("COMMIT");
  };

  /** The shared part of a change_all move or rename, up to the messages' own UPDATEs. */
  const moveOrRename = async (
    kind: "move" | "resolve",
    iteration: number,
    change: { channelId?: number; topic?: string },
    asWritten = false,
  ) => {
    const topic = topicName(kind, iteration);
    const ids0 = sentIds.get(key(kind, iteration))!;
    const target = ids0[ids0.length - 1]!;
    const toChannel = change.channelId ?? G;
    const toRecipient = RECIPIENT.stream(toChannel);
    const toTopic = change.topic ?? topic;
    const ts = now();
    const moved = `${topicIs(RG, topic)} AND NOT (id = ${target})`;
    const changed = `SELECT id FROM zerver_message WHERE (id = ${target} OR (${moved}))`;
    const oldSubscribers = `SELECT U0.id FROM zerver_userprofile U0 WHERE U0.id IN (SELECT s.user_profile_id FROM zerver_subscription s JOIN zerver_recipient r ON r.id = s.recipient_id WHERE r.type = 2 AND r.type_id = ${G})`;
    const newSubscribers = `SELECT U0.id FROM zerver_userprofile U0 WHERE U0.id IN (${activeSubs(toChannel, { includeDeactivated: true })})`;
    const losing = `(${oldSubscribers}) EXCEPT (${newSubscribers})`;

    await db.query("BEGIN");
    const message = await accessMessageLocked(target);
    await q(`SELECT * FROM zerver_stream WHERE id = ${G} AND realm_id = ${R}`);
    if (change.channelId !== undefined) {
      // access_stream_by_id_for_message: the target channel and the actor's subscription to it.
      await q(`SELECT * FROM zerver_stream WHERE id = ${toChannel} AND realm_id = ${R}`);
      await q(
        `SELECT id FROM zerver_subscription WHERE user_profile_id = ${cast.actor} AND recipient_id = ${toRecipient} AND active LIMIT 1`,
      );
      // check_time_limit_for_change_all_propagate_mode (the actor is not a moderator).
      await q(`SELECT * FROM zerver_stream WHERE id = ${G} AND realm_id = ${R}`);
      await q(`SELECT id, date_sent FROM zerver_message WHERE ${topicIs(RG, topic)} ORDER BY id`);
    }
    let gaining: number[] = [];
    if (change.channelId !== undefined) gaining = (await q<{ id: number }>(newSubscribers)).map((r) => r.id);
    await q(`SELECT 1 AS a FROM zerver_message WHERE ${topicIs(toRecipient, toTopic)} LIMIT 1`);
    // update_messages_for_topic_edit's IDs, then do_update_message's changed_message_ids.
    await q(`SELECT id FROM zerver_message WHERE ${moved}`);
    const changedIds = (await q<{ id: number }>(changed)).map((r) => r.id);
    let losingAccess = new Set<number>();
    let losingRowsDeleteMs: number | null = null;
    if (change.channelId !== undefined) {
      if (gaining.length > 0)
        await q(
          `INSERT INTO zerver_usermessage (user_profile_id, message_id, flags) SELECT user_profile_id, message_id, ${F.read} AS flags FROM UNNEST(ARRAY[${ids(gaining)}]::integer[]) user_profile_id CROSS JOIN UNNEST(ARRAY[${ids(changedIds)}]::integer[]) message_id ON CONFLICT DO NOTHING`,
        );
      // Zulip's DELETE names the losing users and the moved messages by subqueries. On this
      // data PostgreSQL estimates a handful of losing users (a subscription count averaged over
      // every recipient) and the topic at a few hundred messages, and walks each losing user's
      // rows: at 1M messages that took 288 s. The timed runs inline both ID lists instead (the
      // same rows go; Zulip evaluates the losing users anyway), which it plans by message.
      const t0 = performance.now();
      if (asWritten) {
        await q(`DELETE FROM zerver_usermessage WHERE user_profile_id IN (${losing}) AND message_id IN (${changed})`);
        losingAccess = new Set((await q<{ id: number }>(losing)).map((r) => r.id));
      } else {
        losingAccess = new Set((await q<{ id: number }>(losing)).map((r) => r.id));
        const t1 = performance.now();
        await q(
          `DELETE FROM zerver_usermessage WHERE user_profile_id IN (${ids([...losingAccess])}) AND message_id IN (${ids(changedIds)})`,
        );
        losingRowsDeleteMs = performance.now() - t1;
      }
      losingRowsDeleteMs ??= performance.now() - t0;
      // Attachment.is_realm_public caches reset: the channels differ in privacy.
      await q(
        `UPDATE zerver_attachment SET is_realm_public = NULL WHERE id IN (SELECT U0.id FROM zerver_attachment U0 JOIN zerver_attachment_messages U1 ON U1.attachment_id = U0.id WHERE U1.message_id IN (SELECT U0.id FROM zerver_message U0 WHERE U0.id IN (${changed})))`,
      );
      await q(
        `UPDATE zerver_archivedattachment SET is_realm_public = NULL WHERE id IN (SELECT U0.id FROM zerver_archivedattachment U0 JOIN zerver_archivedattachment_messages U1 ON U1.archivedattachment_id = U0.id WHERE U1.archivedmessage_id IN (SELECT U0.id FROM zerver_message U0 WHERE U0.id IN (${changed})))`,
      );
    }
    const entry: Record<string, unknown> = { user_id: cast.actor, timestamp: ts };
    if (change.topic !== undefined) Object.assign(entry, { prev_topic: topic, topic: toTopic });
    if (change.channelId !== undefined) Object.assign(entry, { prev_stream: G, stream: toChannel });
    const history = JSON.parse(message.edit_history ?? "[]") as unknown[];
    history.unshift(entry);
    // save_message_for_edit_use_case, then the propagation UPDATE of every other message.
    await q(
      `UPDATE zerver_message SET subject = ${lit(toTopic)}, content = ${lit(message.content)}, rendered_content = ${lit(message.rendered_content)}, rendered_content_version = 1, last_edit_time = to_timestamp(${ts}), edit_history = ${lit(JSON.stringify(history))}, has_attachment = false, has_image = false, has_link = false, recipient_id = ${toRecipient} WHERE id = ${target}`,
    );
    const sets = [
      `last_edit_time = to_timestamp(${ts})`,
      `edit_history = ((${lit(historyJson(entry))})::jsonb || (COALESCE(edit_history, '[]'))::jsonb)::text`,
      ...(change.channelId !== undefined ? [`recipient_id = ${toRecipient}`] : []),
      ...(change.topic !== undefined ? [`subject = ${lit(toTopic)}`] : []),
    ];
    await q(`UPDATE zerver_message SET ${sets.join(", ")} WHERE ${moved}`);
    await refreshMessageCache(changedIds);
    // users_to_be_notified: rows kept on the target message, then subscribers without rows.
    const kept = await userMessagesOf(
      target,
      change.channelId !== undefined ? ` AND NOT (user_profile_id IN (${losing}))` : "",
    );
    const keptIds = kept.map((r) => r.user_profile_id);
    const notMine = `AND NOT (s.user_profile_id IN (${ids(keptIds)}))`;
    if (change.channelId !== undefined) {
      await q(`${activeSubs(G, { excludeIdle: true })} ${notMine} AND NOT (s.user_profile_id IN (${losing}))`);
      await q(activeSubs(toChannel));
      await q(
        `${activeSubs(toChannel, { excludeIdle: true })} ${notMine} AND NOT (s.user_profile_id IN (${losing})) AND NOT (s.user_profile_id IN ((SELECT U0.id FROM zerver_userprofile U0 WHERE U0.role = ${GUEST} AND U0.id IN (${activeSubs(toChannel, { includeDeactivated: true })})) EXCEPT (SELECT U0.id FROM zerver_userprofile U0 WHERE U0.id IN (${activeSubs(G, { includeDeactivated: true })}))))`,
      );
    } else {
      await q(`${activeSubs(G, { excludeIdle: true })} ${notMine}`);
    }
    const orig = await migrateUserTopics(G, topic, toChannel, toTopic, losingAccess);
    return { target, topic, toTopic, changedIds, orig, losingRowsDeleteMs };
  };

  const moveTopic = async (iteration: number, asWritten: boolean) => {
    const { topic, changedIds, losingRowsDeleteMs } = await moveOrRename(
      "move",
      iteration,
      { channelId: P },
      asWritten,
    );
    // The "moved here" notice: first whether the actor sees earlier messages in the target topic.
    await q(
      `SELECT id FROM zerver_subscription WHERE user_profile_id = ${cast.actor} AND recipient_id = ${RP} AND active LIMIT 1`,
    );
    await q(
      `SELECT 1 AS a FROM zerver_message WHERE ${topicIs(RP, topic)} AND NOT (id IN (${ids(changedIds)})) AND realm_id = ${R} AND recipient_id = ${RP} AND EXISTS(SELECT 1 AS a FROM zerver_usermessage U0 WHERE U0.user_profile_id = ${cast.actor} AND U0.message_id = zerver_message.id LIMIT 1) LIMIT 1`,
    );
    await sendNotice(
      P,
      topic,
      `This topic was moved here from #**general>${topic}** by @_**${names.get(cast.actor)}|${cast.actor}**.`,
      cast.actor,
    );
    await db.query("COMMIT");
    return losingRowsDeleteMs;
  };

  const resolveTopic = async (iteration: number) => {
    const topic = topicName("resolve", iteration);
    const { toTopic, orig } = await moveOrRename("resolve", iteration, { topic: RESOLVED_PREFIX + topic });
    // maybe_delete_previous_resolve_topic_notification: the resolved topic's newest message.
    await q(`SELECT * FROM zerver_message WHERE ${topicIs(RG, toTopic)} ORDER BY id DESC LIMIT 1`);
    // get_unread_user_ids_for_resolved_topic_notifications (default policy: unread for followers).
    await q(`SELECT * FROM zerver_userprofile WHERE id IN (${activeSubs(G)}) AND NOT is_bot`);
    const followers = new Set(orig.filter((r) => r.visibility_policy === 3).map((r) => r.user_profile_id));
    await sendNotice(
      G,
      toTopic,
      `@_**${names.get(cast.actor)}|${cast.actor}** has marked this topic as resolved.`,
      cast.actor,
      {
        type: 2,
        unreadFor: followers,
      },
    );
    await db.query("COMMIT");
  };

  /** One 100-message batch of delete_in_topic: select and lock, then do_delete_messages. False when none was left. */
  const deleteBatch = async (topic: string): Promise<boolean> => {
    await db.query("BEGIN");
    const batch = (
      await q<{ id: number }>(
        `SELECT zerver_message.* FROM zerver_message WHERE ${topicIs(RG, topic)} AND realm_id = ${R} AND recipient_id = ${RG} ORDER BY id DESC LIMIT 100 FOR UPDATE OF zerver_message`,
      )
    ).map((r) => r.id);
    if (batch.length === 0) {
      await db.query("COMMIT");
      return false;
    }
    await q(`SELECT * FROM zerver_stream WHERE recipient_id = ${RG}`);
    // event_recipient_ids_for_action_on_messages (public channel, shared history).
    await q(`SELECT * FROM zerver_recipient WHERE id = ${RG}`);
    await q(activeSubs(G, { excludeIdle: true }));
    await q(
      `SELECT zerver_usermessage.user_profile_id FROM zerver_usermessage JOIN zerver_userprofile ON zerver_userprofile.id = zerver_usermessage.user_profile_id WHERE message_id IN (${ids(batch)}) AND NOT (zerver_userprofile.role = ${GUEST}) AND NOT zerver_userprofile.long_term_idle`,
    );
    // move_messages_to_archive(chunk_size=100): run_archiving_in_chunks until a short chunk.
    for (;;) {
      const [tx] = await q<{ id: number }>(
        `INSERT INTO zerver_archivetransaction (timestamp, restored, restored_timestamp, protect_from_deletion, type, realm_id) VALUES (now(), false, NULL, false, 2, ${R}) RETURNING id`,
      );
      const chunk = (
        await q<{ id: number }>(
          `INSERT INTO zerver_archivedmessage (${MESSAGE_COLUMNS}, archive_transaction_id) SELECT ${MESSAGE_COLUMNS.split(
            ", ",
          )
            .map((c) => `zerver_message.${c}`)
            .join(
              ",",
            )}, ${tx!.id} FROM zerver_message WHERE zerver_message.id IN (${ids(batch)}) LIMIT 100 ON CONFLICT (id) DO UPDATE SET archive_transaction_id = ${tx!.id} RETURNING id`,
        )
      ).map((r) => r.id);
      if (chunk.length > 0) {
        const inChunk = `IN (${ids(chunk)})`;
        await q(
          `INSERT INTO zerver_archivedreaction (id, message_id, user_profile_id, emoji_name, reaction_type, emoji_code) SELECT zerver_reaction.id, zerver_reaction.message_id, zerver_reaction.user_profile_id, zerver_reaction.emoji_name, zerver_reaction.reaction_type, zerver_reaction.emoji_code FROM zerver_reaction WHERE zerver_reaction.message_id ${inChunk} ON CONFLICT (id) DO NOTHING`,
        );
        await q(
          `INSERT INTO zerver_archivedsubmessage (id, message_id, sender_id, msg_type, content) SELECT zerver_submessage.id, zerver_submessage.message_id, zerver_submessage.sender_id, zerver_submessage.msg_type, zerver_submessage.content FROM zerver_submessage WHERE zerver_submessage.message_id ${inChunk} ON CONFLICT (id) DO NOTHING`,
        );
        await q(
          `INSERT INTO zerver_archivedusermessage (id, user_profile_id, message_id, flags) SELECT zerver_usermessage.id, zerver_usermessage.user_profile_id, zerver_usermessage.message_id, zerver_usermessage.flags FROM zerver_usermessage WHERE zerver_usermessage.message_id ${inChunk} ON CONFLICT (id) DO NOTHING`,
        );
        await q(
          `INSERT INTO zerver_archivedattachment (id, file_name, path_id, owner_id, realm_id, create_time, size, is_realm_public, is_web_public, content_type) SELECT zerver_attachment.id, zerver_attachment.file_name, zerver_attachment.path_id, zerver_attachment.owner_id, zerver_attachment.realm_id, zerver_attachment.create_time, zerver_attachment.size, zerver_attachment.is_realm_public, zerver_attachment.is_web_public, zerver_attachment.content_type FROM zerver_attachment INNER JOIN zerver_attachment_messages ON zerver_attachment_messages.attachment_id = zerver_attachment.id WHERE zerver_attachment_messages.message_id ${inChunk} GROUP BY zerver_attachment.id ON CONFLICT (id) DO NOTHING`,
        );
        await q(
          `INSERT INTO zerver_archivedattachment_messages (id, archivedattachment_id, archivedmessage_id) SELECT zerver_attachment_messages.id, zerver_attachment_messages.attachment_id, zerver_attachment_messages.message_id FROM zerver_attachment_messages WHERE zerver_attachment_messages.message_id ${inChunk} ON CONFLICT (id) DO NOTHING`,
        );
        // delete_messages: Django's collector loads the rows, fast-deletes the dependents, then the messages.
        await q(`SELECT * FROM zerver_message WHERE id ${inChunk}`);
        for (const table of [
          "zerver_usermessage",
          "zerver_reaction",
          "zerver_submessage",
          "zerver_attachment_messages",
        ])
          await q(`DELETE FROM ${table} WHERE message_id ${inChunk}`);
        await q(`DELETE FROM zerver_message WHERE id ${inChunk}`);
      } else {
        // archive_transaction.delete(): the collector looks for archived messages first.
        await q(`SELECT id FROM zerver_archivedmessage WHERE archive_transaction_id = ${tx!.id}`);
        await q(`DELETE FROM zerver_archivetransaction WHERE id = ${tx!.id}`);
      }
      if (chunk.length < 100) break;
    }
    // The unclaimed-attachment cleanup after archiving.
    await q(
      `SELECT zerver_attachment.* FROM zerver_attachment LEFT OUTER JOIN zerver_attachment_messages ON zerver_attachment_messages.attachment_id = zerver_attachment.id WHERE zerver_attachment_messages.id IS NULL AND zerver_attachment.id IN (SELECT DISTINCT U0.id FROM zerver_archivedattachment U0 INNER JOIN zerver_archivedattachment_messages U1 ON U1.archivedattachment_id = U0.id WHERE U1.archivedmessage_id IN (${ids(batch)}))`,
    );
    await db.query("COMMIT");
    return true;
  };

  const deleteTopic = async (iteration: number) => {
    const topic = topicName("deleteTopic", iteration);
    // access_stream_by_id: the channel and the admin's subscription.
    await q(`SELECT * FROM zerver_stream WHERE id = ${G} AND realm_id = ${R}`);
    await q(
      `SELECT * FROM zerver_subscription WHERE user_profile_id = ${cast.admin} AND recipient_id = ${RG} AND active`,
    );
    while (await deleteBatch(topic));
    // The topic is gone: its user_topic rows go too.
    const stale = await q<{ user_profile_id: number }>(
      `SELECT zerver_usertopic.*, zerver_userprofile.full_name, zerver_userprofile.realm_id FROM zerver_usertopic JOIN zerver_userprofile ON zerver_userprofile.id = user_profile_id WHERE stream_id = ${G} AND upper(topic_name::text) = upper(${lit(topic)})`,
    );
    await setTopicPolicies(
      stale.map((r) => r.user_profile_id),
      G,
      topic,
      0,
    );
  };

  // ---- setup: the same messages and user_topic rows as the engine's, with its IDs ----

  const insertMessages = async (
    messageIds: readonly number[],
    senderId: number,
    topic: string,
    contentOf: (index: number) => string,
    mentioned: number | null,
  ) => {
    const contents = messageIds.map((_, i) => contentOf(i));
    await db.query("BEGIN");
    await q(
      `INSERT INTO zerver_message (${MESSAGE_COLUMNS}, search_tsvector) SELECT id, ${senderId}, ${RG}, ${R}, 1, ${lit(topic)}, c, r, 1, now(), 1, NULL, NULL, false, false, false, true, to_tsvector('zulip.english_us_search', ${lit(topic)} || r) FROM unnest(ARRAY[${ids(messageIds)}]::integer[], ARRAY[${contents.map(lit).join(",")}]::text[], ARRAY[${contents.map((c) => lit(renderLikeZulip(c))).join(",")}]::text[]) AS t(id, c, r)`,
    );
    // Zulip's send rows: awake subscribers, the sender (read), a mentioned user even if idle.
    const mentionFlag = mentioned === null ? "0" : `CASE WHEN u = ${mentioned} THEN ${F.mentioned} ELSE 0 END`;
    await q(
      `INSERT INTO zerver_usermessage (user_profile_id, message_id, flags) SELECT u, id, (CASE WHEN u = ${senderId} THEN ${F.read} ELSE 0 END) | ${mentionFlag} FROM unnest(ARRAY[${ids(messageIds)}]::integer[]) AS id CROSS JOIN (${activeSubs(G, { excludeIdle: true }).replace("SELECT s.user_profile_id", "SELECT s.user_profile_id AS u")} UNION SELECT ${senderId}${mentioned === null ? "" : ` UNION SELECT ${mentioned}`}) AS users`,
    );
    await q(`DELETE FROM fts_update_log`);
    await q(
      `SELECT setval(pg_get_serial_sequence('zerver_message', 'id'), GREATEST(${messageIds[messageIds.length - 1]!}, (SELECT last_value FROM zerver_message_id_seq)))`,
    );
    await db.query("COMMIT");
  };

  const fetchIds = async (sql: string) =>
    (await q<{ id: number }>(`SELECT id FROM (${sql} LIMIT ${CHECK_DEPTH}) AS t ORDER BY id`)).map((r) => Number(r.id));

  return {
    async setup(kind, iteration, engineIds) {
      const sequence = await q<{ last_value: string }>(`SELECT last_value FROM zerver_message_id_seq`);
      if (Number(sequence[0]!.last_value) !== engineIds[0]! - 1)
        throw new Error(
          `message IDs out of step: PostgreSQL's last ID is ${sequence[0]!.last_value}, the engine's new ones start at ${engineIds[0]}`,
        );
      sentIds.set(key(kind, iteration), engineIds);
      if (kind === "edit") {
        await insertMessages(
          engineIds,
          cast.actor,
          topicName(kind, iteration),
          () => editContent(iteration, cast.mentionedBefore, WORDS.before),
          cast.mentionedBefore.id,
        );
        return;
      }
      const topic = topicName(kind, iteration);
      if (engineIds.length !== TOPIC_SIZES[kind]) throw new Error(`${kind}: ${engineIds.length} messages sent`);
      await insertMessages(engineIds, cast.topicSender, topic, (i) => topicContent(topic, i), null);
      for (const p of cast.topicPolicies) await setTopicPolicies([p.userId], G, topic, p.policy);
      // What autovacuum would have done after a million new rows (the load turned it off for the
      // static read data): without fresh statistics the move's DELETE once took a 200-second plan.
      await q(`ANALYZE zerver_usermessage, zerver_message, zerver_usertopic`);
    },
    async run(kind, iteration, asWritten) {
      if (kind === "move") return { losingRowsDeleteMs: await moveTopic(iteration, asWritten) };
      if (kind === "edit") await editMessage(iteration);
      else if (kind === "resolve") await resolveTopic(iteration);
      else await deleteTopic(iteration);
      return { losingRowsDeleteMs: null };
    },
    async ftsCatchUp() {
      let total = 0;
      for (;;) {
        await db.query("BEGIN");
        const rows = await q<{ id: number; message_id: number }>(
          `SELECT id, message_id FROM fts_update_log ORDER BY id LIMIT 1000 FOR UPDATE SKIP LOCKED`,
        );
        if (rows.length > 0) {
          await q(
            `UPDATE zerver_message SET search_tsvector = to_tsvector('zulip.english_us_search', subject || rendered_content) WHERE ctid IN (SELECT ctid FROM zerver_message WHERE id IN (${ids(rows.map((r) => r.message_id))}) ORDER BY id FOR UPDATE)`,
          );
          await q(`DELETE FROM fts_update_log WHERE id IN (${ids(rows.map((r) => r.id))})`);
        }
        await db.query("COMMIT");
        total += rows.length;
        if (rows.length !== 1000) return total;
      }
    },
    async check(kind, iteration) {
      const values: CheckValues = {};
      for (const c of mutationChecks(kind, iteration, m, cast, P)) {
        if (c.kind === "userTopics") {
          const rows = await q<{
            user_profile_id: number;
            stream_id: number;
            topic_name: string;
            visibility_policy: number;
          }>(
            `SELECT user_profile_id, stream_id, topic_name, visibility_policy FROM zerver_usertopic WHERE user_profile_id IN (${ids(c.userIds)}) AND lower(topic_name) IN (${c.topics.map((t) => `lower(${lit(t)})`).join(",")})`,
          );
          values[c.name] = rows
            .map((r) => userTopicKey(r.user_profile_id, r.stream_id, r.topic_name, r.visibility_policy))
            .sort();
          continue;
        }
        const where: string[] = [];
        if (c.channelId !== undefined) where.push(`recipient_id = ${RECIPIENT.stream(c.channelId)}`);
        if (c.topic !== undefined) where.push(`upper(subject::text) = upper(${lit(c.topic)}) AND is_channel_message`);
        if (c.search !== undefined)
          where.push(`search_tsvector @@ plainto_tsquery('zulip.english_us_search', ${lit(c.search)})`);
        if (c.mentioned) where.push(`(flags & ${F.anyMention}) <> 0`);
        // Shared history (a public channel narrow) reads zerver_message; everything else the user's rows.
        const shared = c.channelId !== undefined && !c.protectedHistory && !c.mentioned;
        values[c.name] = await fetchIds(
          shared
            ? `SELECT id FROM zerver_message WHERE realm_id = ${R} AND ${where.join(" AND ")} ORDER BY id DESC`
            : `SELECT message_id AS id FROM zerver_usermessage JOIN zerver_message ON zerver_usermessage.message_id = zerver_message.id WHERE user_profile_id = ${c.userId}${where.map((w) => ` AND ${w}`).join("")} ORDER BY message_id DESC`,
        );
      }
      return values;
    },
  };
}
