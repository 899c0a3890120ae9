/**
 * @module bench/peer/workloads
 * The PostgreSQL side of each workload, in Zulip's SQL shapes
 * (reference/zulip-messages.md §2.4, §4.5, §5, §6): literal flag masks so the planner
 * can use the partial indexes, REPEATABLE READ READ ONLY for fetches, the two-step
 * flags fetch for shared-history narrows, the first_unread probe, message bodies
 * fetched by ID (Zulip's memcached miss path), and the send path's row per active
 * subscriber. Values are inlined as literals, as psycopg2 does client-side.
 */
import type pg from "pg";
import type { Manifest } from "../../tools/generate/manifest.js";
import { RECIPIENT } from "../../tools/generate/pg-copy.js";
import { NO_SYNC_SEND_WORKLOAD, READY_JSON_WORKLOAD, SEND_TOPIC } from "../workloads/engine.js";

export interface PeerWorkload {
  readonly name: string;
  run(): Promise<number[]>;
  /** As EngineWorkload.timed: the system's work without the comparison's normalisation. */
  timed?(): Promise<unknown>;
  reset?(): Promise<void>;
}

/** A SQL string literal, as psycopg2 inlines it. */
export const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** An IN list (NULL when empty, which matches nothing). */
export const ids = (list: readonly number[]) => (list.length === 0 ? "NULL" : list.join(","));
const B = (user: number) =>
  `SELECT message_id, flags FROM zerver_usermessage JOIN zerver_message ON zerver_usermessage.message_id = zerver_message.id WHERE user_profile_id = ${user}`;

/** Zulip's post_process_limited_query: last num_before below the anchor, the anchor, first num_after above. */
function postProcess(
  ids: number[],
  around: { anchor: number; numBefore: number; numAfter: number } | undefined,
): number[] {
  if (!around) return ids;
  const before = ids.filter((id) => id < around.anchor).slice(-around.numBefore);
  const at = ids.filter((id) => id === around.anchor);
  const after = ids.filter((id) => id > around.anchor).slice(0, around.numAfter);
  return [...before, ...at, ...after];
}

interface Row {
  message_id: number;
  flags?: string;
}

/** `noSyncDb` is a session with `synchronous_commit = off`, for the no-fsync rows. */
export function peerWorkloads(db: pg.Client, m: Manifest, noSyncDb: pg.Client = db): PeerWorkload[] {
  const s = m.subjects;
  const R = m.realmId;
  const X = RECIPIENT.stream(m.generalChannelId);
  const q = async <T extends pg.QueryResultRow>(sql: string): Promise<T[]> => (await db.query<T>(sql)).rows;

  // get_raw_unread_data: inactive subscriptions and muted topics first, then the capped
  // unread rows, aggregated in the app (grouped by conversation, as Zulip's does).
  const rawUnread = async () => {
    const inactive = (
      await q<{ recipient_id: number }>(
        `SELECT recipient_id FROM zerver_subscription WHERE user_profile_id = ${s.hundred} AND NOT active`,
      )
    ).map((r) => r.recipient_id);
    await q(
      `SELECT recipient_id, topic_name FROM zerver_usertopic WHERE user_profile_id = ${s.hundred} AND visibility_policy = 1`,
    );
    const rows = await q<{
      message_id: number;
      sender_id: number;
      subject: string;
      recipient_id: number;
      flags: string;
    }>(
      `SELECT zerver_usermessage.message_id, zerver_message.sender_id, zerver_message.subject, zerver_message.recipient_id, zerver_usermessage.flags FROM zerver_usermessage JOIN zerver_message ON zerver_usermessage.message_id = zerver_message.id WHERE user_profile_id = ${s.hundred}${inactive.length ? ` AND NOT (recipient_id IN (${ids(inactive)}))` : ""} AND (flags & 1) = 0 ORDER BY message_id DESC LIMIT 50000`,
    );
    const byConversation = new Map<string, number[]>();
    for (const r of rows) {
      const k = `${r.recipient_id}\u0000${r.subject.toUpperCase()}`;
      const list = byConversation.get(k);
      if (list) list.push(r.message_id);
      else byConversation.set(k, [r.message_id]);
    }
    return { rows, byConversation };
  };

  /** One read-only fetch transaction: the ID query, the two-step flags query if needed, then bodies. */
  const fetch = async (
    idSql: string,
    opts: { user: number; sharedHistory: boolean; around?: { anchor: number; numBefore: number; numAfter: number } },
  ): Promise<number[]> => {
    await db.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    try {
      const rows = await q<Row>(`/* get_messages */ ${idSql}`);
      const list = postProcess(
        rows.map((r) => Number(r.message_id)),
        opts.around,
      );
      if (opts.sharedHistory && list.length > 0)
        await q(
          `SELECT message_id, flags FROM zerver_usermessage WHERE user_profile_id = ${opts.user} AND message_id IN (${ids(list)})`,
        );
      if (list.length > 0)
        await q(
          `SELECT id, sender_id, recipient_id, subject, rendered_content, date_sent, has_link, has_image, has_attachment FROM zerver_message WHERE id IN (${ids(list)})`,
        );
      await db.query("COMMIT");
      return list;
    } catch (error) {
      await db.query("ROLLBACK");
      throw error;
    }
  };
  const newestB = (user: number, where: string, limit = 100) =>
    `SELECT anon_1.message_id, anon_1.flags FROM (${B(user)} AND ${where} ORDER BY message_id DESC LIMIT ${limit}) AS anon_1 ORDER BY message_id ASC`;
  const newestC = (where: string, limit = 100) =>
    `SELECT anon_1.message_id FROM (SELECT id AS message_id FROM zerver_message WHERE realm_id = ${R} AND ${where} ORDER BY zerver_message.id DESC LIMIT ${limit}) AS anon_1 ORDER BY message_id ASC`;
  const search = (word: string) => {
    const tsq = `plainto_tsquery('zulip.english_us_search', ${lit(word)})`;
    const hl = (text: string) =>
      `ts_headline('zulip.english_us_search', ${text}, ${tsq}, 'HighlightAll = TRUE, StartSel = <ts-match>, StopSel = </ts-match>')`;
    return `SELECT anon_1.message_id, anon_1.flags, anon_1.content_matches, anon_1.topic_matches FROM (SELECT message_id, flags, subject, rendered_content, ${hl("rendered_content")} AS content_matches, ${hl("escape_html(subject)")} AS topic_matches FROM zerver_usermessage JOIN zerver_message ON zerver_usermessage.message_id = zerver_message.id WHERE user_profile_id = ${s.main} AND search_tsvector @@ ${tsq} ORDER BY message_id DESC LIMIT 100) AS anon_1 ORDER BY message_id ASC`;
  };
  const mutedClauses = (user: number) =>
    m.mutedTopics
      .filter((t) => t.userId === user)
      .map(
        (t) => ` AND NOT (recipient_id = ${RECIPIENT.stream(t.channelId)} AND upper(subject) = upper(${lit(t.topic)}))`,
      )
      .join("");
  const mid = Math.floor(m.lastMessageId / 2);

  let lockedRows: string[] = [];
  let thousand: number[] = [];
  const backlogUnreadInGeneral = async (): Promise<number[]> =>
    (
      await q<Row>(
        `SELECT message_id FROM zerver_usermessage JOIN zerver_message ON zerver_usermessage.message_id = zerver_message.id WHERE user_profile_id = ${s.backlog} AND recipient_id = ${X} AND (flags & 1) = 0 ORDER BY message_id`,
      )
    ).map((r) => Number(r.message_id));

  const reads: PeerWorkload[] = [
    {
      name: "channel newest 100",
      run: () => fetch(newestC(`recipient_id = ${X}`), { user: s.main, sharedHistory: true }),
    },
    {
      name: "channel+topic newest 100",
      run: () =>
        fetch(newestC(`recipient_id = ${X} AND upper(subject) = upper(${lit(m.bigTopic)}) AND is_channel_message`), {
          user: s.main,
          sharedHistory: true,
        }),
    },
    {
      name: "sender newest 100",
      run: () => fetch(newestB(s.main, `sender_id = ${s.sender}`), { user: s.main, sharedHistory: false }),
    },
    {
      name: "1:1 dm newest 100",
      run: () =>
        fetch(
          newestB(
            s.main,
            `(flags & 2048) <> 0 AND realm_id = ${R} AND (sender_id = ${s.dmPartner} AND recipient_id = ${RECIPIENT.personal(s.main)} OR sender_id = ${s.main} AND recipient_id = ${RECIPIENT.personal(s.dmPartner)})`,
          ),
          { user: s.main, sharedHistory: false },
        ),
    },
    {
      name: "is:starred newest 100",
      run: () => fetch(newestB(s.main, `(flags & 2) <> 0`), { user: s.main, sharedHistory: false }),
    },
    {
      name: "is:mentioned newest 100",
      run: () => fetch(newestB(s.main, `(flags & 120) <> 0`), { user: s.main, sharedHistory: false }),
    },
    {
      name: "is:unread first_unread 60/150",
      run: async () => {
        // find_first_unread_anchor: its own query before the range query.
        const probe = await q<Row>(
          `${B(s.backlog)} AND (flags & 1) = 0${mutedClauses(s.backlog)} ORDER BY message_id ASC LIMIT 1`,
        );
        const anchor = probe[0] ? Number(probe[0].message_id) : null;
        const sql =
          anchor === null
            ? newestB(s.backlog, `(flags & 1) = 0`, 60)
            : `SELECT anon_1.message_id, anon_1.flags FROM ((${B(s.backlog)} AND (flags & 1) = 0 AND message_id <= ${anchor - 1} ORDER BY message_id DESC LIMIT 60) UNION ALL (${B(s.backlog)} AND (flags & 1) = 0 AND message_id >= ${anchor} ORDER BY message_id ASC LIMIT 151)) AS anon_1 ORDER BY message_id ASC`;
        return fetch(
          sql,
          anchor === null
            ? { user: s.backlog, sharedHistory: false }
            : { user: s.backlog, sharedHistory: false, around: { anchor, numBefore: 60, numAfter: 150 } },
        );
      },
    },
    {
      name: `search common '${m.commonWord}'`,
      run: () => fetch(search(m.commonWord), { user: s.main, sharedHistory: false }),
    },
    {
      name: `search rare '${m.rareWord}'`,
      run: () => fetch(search(m.rareWord), { user: s.main, sharedHistory: false }),
    },
    {
      name: "numeric anchor mid-history",
      run: () =>
        fetch(
          `SELECT anon_1.message_id, anon_1.flags FROM ((SELECT message_id, flags FROM zerver_usermessage WHERE user_profile_id = ${s.main} AND message_id <= ${mid - 1} ORDER BY message_id DESC LIMIT 100) UNION ALL (SELECT message_id, flags FROM zerver_usermessage WHERE user_profile_id = ${s.main} AND message_id >= ${mid} ORDER BY message_id ASC LIMIT 101)) AS anon_1 ORDER BY message_id ASC`,
          { user: s.main, sharedHistory: false, around: { anchor: mid, numBefore: 100, numAfter: 100 } },
        ),
    },
    {
      name: "unread summary (100 subs)",
      timed: () => rawUnread(),
      run: async () => (await rawUnread()).rows.map((r) => Number(r.message_id)).sort((a, b) => a - b),
    },
    {
      name: "window 1000 + JSON",
      run: () => windowJson(),
    },
    // PostgreSQL has no ready-bytes path: the same fetch + serialize is its best.
    { name: READY_JSON_WORKLOAD, run: () => windowJson() },
  ];

  async function windowJson(): Promise<number[]> {
    await db.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const list = (await q<Row>(`/* get_messages */ ${newestC(`recipient_id = ${X}`, 1000)}`)).map((r) =>
      Number(r.message_id),
    );
    const flagRows = await q<{ message_id: number; flags: string }>(
      `SELECT message_id, flags FROM zerver_usermessage WHERE user_profile_id = ${s.main} AND message_id IN (${ids(list)})`,
    );
    const bodies = await q<{
      id: number;
      sender_id: number;
      full_name: string;
      email: string;
      recipient_id: number;
      subject: string;
      rendered_content: string;
      date_sent: Date;
    }>(
      `SELECT zerver_message.id, sender_id, full_name, email, recipient_id, subject, rendered_content, date_sent FROM zerver_message JOIN zerver_userprofile ON zerver_userprofile.id = sender_id WHERE zerver_message.id IN (${ids(list)}) ORDER BY zerver_message.id`,
    );
    await db.query("COMMIT");
    const flags = new Map(flagRows.map((r) => [Number(r.message_id), Number(r.flags)]));
    const json = JSON.stringify({
      result: "success",
      msg: "",
      messages: bodies.map((b) => {
        const f = flags.get(b.id);
        return {
          id: b.id,
          sender_id: b.sender_id,
          sender_full_name: b.full_name,
          sender_email: b.email,
          sender_realm_str: "",
          avatar_url: null,
          client: "website",
          content: b.rendered_content,
          content_type: "text/html",
          display_recipient: "general",
          is_me_message: false,
          reactions: [],
          recipient_id: b.recipient_id,
          stream_id: m.generalChannelId,
          subject: b.subject,
          submessages: [],
          timestamp: Math.floor(b.date_sent.getTime() / 1000),
          topic_links: [],
          type: "stream",
          flags:
            f === undefined
              ? ["read", "historical"]
              : [...(f & 1 ? ["read"] : []), ...(f & 2 ? ["starred"] : []), ...(f & 8 ? ["mentioned"] : [])],
        };
      }),
    });
    if (json.length === 0) throw new Error("empty JSON");
    return list;
  }

  /**
   * Zulip's send: get_recipient_info (active subscribers and their idle state), then one
   * transaction: the message row, one usermessage row per non-idle subscriber (+ sender),
   * the FTS log (its trigger).
   */
  const send = async (client: pg.Client): Promise<number[]> => {
    const sq = async <T extends pg.QueryResultRow>(sql: string): Promise<T[]> => (await client.query<T>(sql)).rows;
    const subs = await sq<{ user_profile_id: number; long_term_idle: boolean }>(
      `SELECT zerver_subscription.user_profile_id, zerver_userprofile.long_term_idle, zerver_subscription.is_muted FROM zerver_subscription JOIN zerver_userprofile ON zerver_userprofile.id = zerver_subscription.user_profile_id WHERE zerver_subscription.recipient_id = ${X} AND zerver_subscription.active AND zerver_userprofile.is_active`,
    );
    const rows = subs
      .filter((r) => !r.long_term_idle || r.user_profile_id === s.main)
      .map((r) => r.user_profile_id)
      .sort((a, b) => a - b);
    const content = `Benchmark message with a ${m.commonWord} word.`;
    await client.query("BEGIN");
    const inserted = await sq<{ id: number }>(
      `INSERT INTO zerver_message (sender_id, recipient_id, realm_id, type, subject, content, rendered_content, rendered_content_version, date_sent, sending_client_id, has_attachment, has_image, has_link, is_channel_message) VALUES (${s.main}, ${X}, ${R}, 1, ${lit(SEND_TOPIC)}, ${lit(content)}, ${lit(`<p>${content}</p>`)}, 1, now(), 1, false, false, false, true) RETURNING id`,
    );
    const id = inserted[0]!.id;
    await client.query(
      `INSERT INTO zerver_usermessage (user_profile_id, message_id, flags) VALUES ${rows.map((u) => `(${u}, ${id}, ${u === s.main ? 1 : 0})`).join(",")} ON CONFLICT DO NOTHING`,
    );
    await client.query("COMMIT");
    return [id];
  };

  const writes: PeerWorkload[] = [
    {
      name: "mark channel read (big backlog)",
      run: async () => {
        // do_mark_stream_messages_as_read: one transaction, lock every unread row, one UPDATE.
        await db.query("BEGIN");
        const locked = await q<{ id: string; message_id: number }>(
          `SELECT zerver_usermessage.id, zerver_usermessage.message_id FROM zerver_usermessage INNER JOIN zerver_message ON zerver_usermessage.message_id = zerver_message.id WHERE user_profile_id = ${s.backlog} AND recipient_id = ${X} AND (flags & 1) = 0 ORDER BY zerver_usermessage.message_id FOR UPDATE OF zerver_usermessage`,
        );
        lockedRows = locked.map((r) => r.id);
        const updated = await db.query(
          `UPDATE zerver_usermessage SET flags = (flags | 1) WHERE id IN (SELECT U0.id FROM zerver_usermessage U0 INNER JOIN zerver_message U2 ON U0.message_id = U2.id WHERE U0.user_profile_id = ${s.backlog} AND U2.recipient_id = ${X} AND (U0.flags & 1) = 0)`,
        );
        await db.query("COMMIT");
        return [updated.rowCount ?? 0];
      },
      reset: async () => {
        if (lockedRows.length > 0)
          await db.query(
            `UPDATE zerver_usermessage SET flags = flags & ~1::bigint WHERE id IN (${lockedRows.join(",")})`,
          );
      },
    },
    {
      name: "flags by 1000 IDs",
      run: async () => {
        if (thousand.length === 0) thousand = (await backlogUnreadInGeneral()).slice(-1000);
        // do_update_message_flags: lock the rows in ID order, skip unchanged ones, update the rest.
        await db.query("BEGIN");
        const rows = await q<{ message_id: number; flags: string }>(
          `SELECT message_id, flags FROM zerver_usermessage WHERE user_profile_id = ${s.backlog} AND message_id IN (${ids(thousand)}) ORDER BY message_id FOR UPDATE`,
        );
        const change = rows.filter((r) => (Number(r.flags) & 1) === 0).map((r) => Number(r.message_id));
        const updated = change.length
          ? await db.query(
              `UPDATE zerver_usermessage SET flags = (flags | 1) WHERE user_profile_id = ${s.backlog} AND message_id IN (${ids(change)})`,
            )
          : { rowCount: 0 };
        await db.query("COMMIT");
        return [updated.rowCount ?? 0];
      },
      reset: async () => {
        await db.query(
          `UPDATE zerver_usermessage SET flags = flags & ~1::bigint WHERE user_profile_id = ${s.backlog} AND message_id IN (${ids(thousand)})`,
        );
      },
    },
    { name: "send to 10k-subscriber channel", run: () => send(db) },
    { name: NO_SYNC_SEND_WORKLOAD, run: () => send(noSyncDb) },
  ];
  return [...reads, ...writes];
}
