/**
 * @module test/engine/reference/unread
 * The reference model's /register unread_msgs, from its UserMessage rows as Zulip's
 * get_raw_unread_data and aggregate_unread_data build it: unread rows, minus channels
 * whose Subscription is inactive; channel messages grouped by channel and topic
 * (case-insensitively), 1:1 DMs by the other user, group DMs by everyone's IDs;
 * muted channel/topic messages listed but not counted; `mentions` the unread
 * personally mentioned ones (the model has no wildcard or group mentions).
 */
import type { RefModel } from "./model.js";

export interface RefUnreadSummary {
  readonly count: number;
  /** Topic upper-cased: the listed spelling is not compared. */
  readonly streams: readonly { readonly streamId: number; readonly topic: string; readonly ids: readonly number[] }[];
  readonly pms: readonly { readonly otherUserId: number; readonly ids: readonly number[] }[];
  readonly huddles: readonly { readonly userIdsString: string; readonly ids: readonly number[] }[];
  readonly mentions: readonly number[];
}

/** Groups in a fixed order, so that two summaries compare as JSON. */
export function canonicalUnread(summary: RefUnreadSummary): RefUnreadSummary {
  const byKey =
    <T>(key: (x: T) => string) =>
    (a: T, b: T) =>
      key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
  return {
    count: summary.count,
    streams: [...summary.streams]
      .map((s) => ({ streamId: s.streamId, topic: s.topic.toUpperCase(), ids: [...s.ids].sort((a, b) => a - b) }))
      .sort(byKey((s) => `${String(s.streamId).padStart(10, "0")}:${s.topic}`)),
    pms: [...summary.pms]
      .map((p) => ({ otherUserId: p.otherUserId, ids: [...p.ids].sort((a, b) => a - b) }))
      .sort((a, b) => a.otherUserId - b.otherUserId),
    huddles: [...summary.huddles]
      .map((h) => ({ userIdsString: h.userIdsString, ids: [...h.ids].sort((a, b) => a - b) }))
      .sort(byKey((h) => h.userIdsString)),
    mentions: [...summary.mentions].sort((a, b) => a - b),
  };
}

export function unreadSummary(model: RefModel, userId: number): RefUnreadSummary {
  const rows = model.rowsOf(userId);
  const streams = new Map<string, { streamId: number; topic: string; ids: number[] }>();
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const m of model.realmMessages()) {
    const row = rows.get(m.id);
    if (!row || row.read) continue;
    if (m.channelId !== null) {
      const sub = model.subs.get(`${userId}:${m.channelId}`);
      if (sub && !sub.active) continue;
      const k = `${m.channelId}:${m.topic.toUpperCase()}`;
      let group = streams.get(k);
      if (!group) streams.set(k, (group = { streamId: m.channelId, topic: m.topic, ids: [] }));
      group.ids.push(m.id);
      if (model.passesMuting(userId, m, null)) count++;
    } else {
      const users = m.dmUsers!;
      if (users.length <= 2) {
        const other = users.find((u) => u !== userId) ?? userId;
        pms.set(other, [...(pms.get(other) ?? []), m.id]);
      } else {
        const k = users.join(",");
        huddles.set(k, [...(huddles.get(k) ?? []), m.id]);
      }
      count++;
    }
    if (row.mentioned) mentions.push(m.id);
  }
  return canonicalUnread({
    count,
    streams: [...streams.values()],
    pms: [...pms].map(([otherUserId, ids]) => ({ otherUserId, ids })),
    huddles: [...huddles].map(([userIdsString, ids]) => ({ userIdsString, ids })),
    mentions,
  });
}
