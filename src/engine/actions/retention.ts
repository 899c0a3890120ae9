/**
 * @module actions/retention
 * Zulip's message retention policies (zerver/lib/retention.py archive_messages, a daily
 * cron job there): a channel's messages older than its `message_retention_days` (null:
 * the realm's), and direct messages older than the realm's, are deleted. -1 keeps them
 * forever. Each batch is one write through the ordinary deletion path
 * (deleteMessagesInWrite), so the messages leave every narrow, search, unread count and
 * flag, and their uploads lose the claim, exactly as a deletion by hand.
 *
 * As in Zulip, clients are not told: retention sends no delete_message (nor stream
 * first_message_id) events; a client sees the messages gone at its next register.
 * Followers still learn of the change through the write's change set.
 *
 * Zulip selects by date_sent. Message IDs are handed out in sending order (imports keep
 * their order too), so a conversation's expired messages are its lowest IDs: a batch
 * reads records from the lowest up and stops at the first one still within the policy.
 */
import { usersAudience } from "../events/audience.js";
import { sliceByRank } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { StoreState, WriteContext } from "../state.js";
import { getMessageRecord } from "../storage/message-records.js";
import type { Message, Realm } from "../types.js";
import { deleteMessagesInWrite } from "./delete-messages.js";
import { realmPropertyValue } from "./realm-settings.js";

/**
 * Messages deleted per write: Zulip's STREAM_MESSAGE_BATCH_SIZE (its direct messages go
 * by 1000; here a write holds the event loop, so both go by 100, as delete_topic's).
 */
export const RETENTION_BATCH_SIZE = 100;
/** Read bits of deleted messages are purged after this many, so a purge's list stays short. */
export const RETENTION_PURGE_EVERY = 5000;

const SECONDS_PER_DAY = 86_400;

/** The realm's message_retention_days: -1 keeps messages forever. */
export function realmRetentionDays(state: StoreState, realm: Realm): number {
  const days = realmPropertyValue(state, realm, "message_retention_days");
  return typeof days === "number" ? days : -1;
}

/** One set of messages under one policy: a channel's, or a realm's direct messages. */
export type RetentionTarget =
  { readonly kind: "channel"; readonly channelId: number } | { readonly kind: "direct"; readonly realmId: number };

/** Zulip's get_realms_and_streams_for_archiving: what has a policy now, channels first. */
export function retentionTargets(state: StoreState): RetentionTarget[] {
  const channels = [...state.channels.values()]
    .filter((channel) => policyDays(state, { kind: "channel", channelId: channel.id }) !== -1)
    .sort((a, b) => a.id - b.id)
    .map((channel): RetentionTarget => ({ kind: "channel", channelId: channel.id }));
  const realms = [...state.realms.values()]
    .filter((realm) => realmRetentionDays(state, realm) !== -1)
    .sort((a, b) => a.id - b.id)
    .map((realm): RetentionTarget => ({ kind: "direct", realmId: realm.id }));
  return [...channels, ...realms];
}

/** The target's policy: a channel's own, else its realm's (Zulip's null); -1 keeps forever. */
function policyDays(state: StoreState, target: RetentionTarget): number {
  if (target.kind === "channel") {
    const channel = state.channels.get(target.channelId);
    if (channel === undefined) return -1;
    if (channel.messageRetentionDays !== null) return channel.messageRetentionDays;
    const realm = state.realms.get(channel.realmId);
    return realm === undefined ? -1 : realmRetentionDays(state, realm);
  }
  const realm = state.realms.get(target.realmId);
  return realm === undefined ? -1 : realmRetentionDays(state, realm);
}

/** The target's expired messages, oldest first, at most `limit`. */
function expiredMessages(state: StoreState, target: RetentionTarget, limit: number): Message[] {
  const days = policyDays(state, target);
  if (days === -1) return [];
  const cutoff = state.now() - days * SECONDS_PER_DAY;
  const messages = state.bitmaps.get(
    target.kind === "channel" ? key.channel(target.channelId) : key.allDirect(target.realmId),
  );
  const out: Message[] = [];
  for (const id of sliceByRank(messages, 0, limit)) {
    const message = getMessageRecord(state.tables, id);
    if (message === undefined) continue;
    if (message.dateSent >= cutoff) break;
    out.push(message);
  }
  return out;
}

const NOBODY = usersAudience([]);

/**
 * A write context whose events reach no client (Zulip's retention sends none); they are
 * still emitted, so the write's change set records what they say changed, for followers.
 */
function silent(ctx: WriteContext): WriteContext {
  return {
    afterCommit: (fn) => ctx.afterCommit(fn),
    changed: (change) => ctx.changed(change),
    emit: (event) => ctx.emit(event, () => NOBODY),
  };
}

/**
 * Deletes one batch of the target's expired messages in one write. Returns how many
 * went; 0 when none has expired. Readers' read bits are left to a pending read purge
 * (continueReadPurge), so that a pass's batches rewrite each read bitmap once.
 */
export function deleteExpiredMessagesBatch(
  state: StoreState,
  target: RetentionTarget,
  batchSize: number = RETENTION_BATCH_SIZE,
): number {
  const messages = expiredMessages(state, target, batchSize);
  if (messages.length === 0) return 0;
  state.write((ctx) => deleteMessagesInWrite(state, silent(ctx), messages, null, 0));
  return messages.length;
}
