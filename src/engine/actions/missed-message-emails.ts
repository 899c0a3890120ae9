/**
 * @module actions/missed-message-emails
 * Zulip's missed-message emails. On send (inside the message's write) each recipient
 * who is away (actions/notification-triggers.ts, the test push uses) and for whom a
 * trigger applies with their email settings gets the message added to their batch
 * (one per user): the first message of a batch sets it due
 * after the user's email_notifications_batching_period_seconds, later ones join it, as
 * Zulip's ScheduledMessageNotificationEmail rows do.
 *
 * A batch is a head (missed_emails: the user and the due time) and one key per message
 * (missed_email_items), so adding a message costs the same however long the batch is: a
 * user away while a followed topic is busy had every later send rewrite their whole list.
 * Heads written before schema 4 carry their items inline: read with the keys, and moved to
 * keys when the batch next grows.
 *
 * When a batch is due, one write removes it and enqueues its emails in the durable mail
 * outbox: the messages still there, still unread and still the user's, one email per
 * conversation (Zulip's buckets: a channel topic, a one-on-one sender, a group direct
 * message), the least recently active first. Nothing is sent when nothing remains.
 * A restart between the two writes loses nothing and sends nothing twice: the batch is
 * on disk until the write that turns it into mail.
 *
 * Who is looked at on send, so that a send to a 10,000-subscriber channel does not
 * cost 10,000 checks: the direct message's participants; in a channel, the users the
 * send wrote a bit for (mentions, alert words), those with a policy on the topic
 * (followers: index/topic-policy-holders.ts), and every subscriber only for a channel-wide wildcard mention.
 * Channel email notifications (enable_stream_email_notifications and the subscription's
 * email_notifications) are not sent: they would need every subscriber looked at.
 * A content edit adds the users it newly mentions (enqueueEditMissedEmails), past
 * state.editEmailChunkUsers of them in later writes of chunks stored with the edit; a send
 * with more candidates than that does the same.
 */
import { key } from "../index/keys.js";
import { topicPolicyHolders } from "../index/topic-policy-holders.js";
import { missedMessageMail, type MissedMessage } from "../mail/missed-message.js";
import { enqueueMailInTxn } from "../mail/outbox.js";
import type { FlagsAtSend } from "../queries/message-flags.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Channel, EmailTrigger, Message, MissedEmailBatch, Realm, User } from "../types.js";
import { getMessageRecord } from "../storage/message-records.js";
import { receivedAtSend } from "../access.js";
import { realmPropertyValue } from "./realm-settings.js";
import { channelTrigger, directTrigger, offlineEnabled, recentlyActive } from "./notification-triggers.js";
import { topicPolicyOf } from "./user-topics.js";

/**
 * At most this many of a send's candidates a write looks at (the send's, then each stored chunk's),
 * fewer than an edit's: on a loaded machine the first @**all** in the 10,000-subscriber channel after
 * its unmeasured twin held the loop 93-196 ms with chunks of 500 and 31-41 ms with chunks of 100
 * (bench:worst at 100k, load ~8; server CPU of that send 151-245 and 71-92 ms). A smaller setting
 * (StoreOptions.editEmailChunkUsers) wins.
 */
export const SEND_EMAIL_CHUNK_USERS = 100;

/**
 * Inside a new message's write: adds it to the batch of each away recipient it triggers an email
 * for. A channel message with more candidates than sendEmailChunkUsers looks at the first
 * ones (personally and group mentioned first, then topic followers, then subscribers) in its own
 * write and stores the rest as an edit does (edit_email_chunks, with each user's flags at send),
 * for later writes to decide as at send: @**all** in a 10,000-subscriber channel read and wrote
 * 10,000 batches in the send's write (~90 ms of CPU).
 */
export function enqueueMissedEmails(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  channel: Channel | null,
  participants: readonly number[],
  flags: FlagsAtSend,
): void {
  const candidates = new Set<number>();
  if (channel === null) for (const id of participants) candidates.add(id);
  else {
    // Born read (a notice for a channel's thousands, a muted sender's message): nothing was missed.
    for (const id of flags.unreadUsersWithBits()) candidates.add(id);
    // Followers: a user the topic's policy holders do not list follows nothing here.
    for (const id of topicPolicyHolders(state.bitmaps, channel.id, message.topic)) candidates.add(id);
    if (message.wildcard === "stream") for (const id of state.subscribers.get(channel.id) ?? []) candidates.add(id);
  }
  candidates.delete(message.senderId);
  const users: number[] = [];
  for (const userId of candidates) if (!flags.bornRead(userId)) users.push(userId);
  const chunk =
    channel === null ? users.length : Math.max(1, Math.min(state.editEmailChunkUsers, SEND_EMAIL_CHUNK_USERS));
  const flagsOf = (userId: number) => flags.flagsFor(userId);
  const receives =
    channel === null ? () => true : (userId: number) => subscribedAtSend(state, userId, message.id, channel.id);
  emailSendRecipients(state, ctx, message, channel, users.slice(0, chunk), flagsOf, receives);
  if (channel !== null && users.length > chunk)
    storeChunks(state, ctx, message, channel, users.slice(chunk), flagsOf, true, chunk);
}

/**
 * The send's checks (enqueueMissedEmails) for `users`, none born read, with the flags the send
 * gave each; `receives` tells who received the message.
 */
function emailSendRecipients(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  channel: Channel | null,
  users: readonly number[],
  flagsOf: (userId: number) => readonly string[],
  receives: (userId: number) => boolean,
): void {
  const muters = state.mutingUsers.get(message.senderId);
  for (const userId of users) {
    if (userId === message.senderId || muters?.has(userId)) continue;
    const user = state.users.get(userId);
    if (!user || user.realmId !== message.realmId || !user.isActive || user.isBot) continue;
    if (recentlyActive(state, userId) || !receives(userId)) continue;
    const settings = state.settingsOf(userId);
    const decision =
      channel === null
        ? directTrigger(settings, "email")
        : channelTrigger(state, user, settings, message, channel, flagsOf(userId), "email");
    if (decision === null) continue;
    const before = state.tables.missedEmails.get(userId) as MissedEmailBatch | undefined;
    addToBatch(state, ctx, userId, before, settings.email_notifications_batching_period_seconds, {
      messageId: message.id,
      trigger: decision.trigger,
      mentionedGroupId: decision.mentionedGroupId,
    });
  }
}

/**
 * Whether a user receives a channel message being sent: their subscription covers it, as
 * push decides. Not receivedAtSend: a message not yet moved has no withdrawn or granted
 * rows (only a move writes them), and looking for them cost each of a channel-wide
 * mention's 10,000 candidates two bitmap lookups more.
 */
function subscribedAtSend(state: StoreState, userId: number, messageId: number, channelId: number): boolean {
  const sub = state.subsByUser.get(userId)?.get(channelId);
  return sub !== undefined && sub.intervals.some((iv) => messageId >= iv.from && (iv.to === null || messageId < iv.to));
}

/**
 * Inside a channel message's content edit (Zulip's maybe_enqueue_notifications_for_message_update):
 * a user the edit newly mentions (personally, through a group or a wildcard) gets the message in
 * their email, unless a mention was there before or it is in their batch already. `candidates`
 * hold every such user (the mentioned ones, or the subscribers when the edit adds a channel-wide
 * wildcard); `mentionedBefore` and `mentionFlags` tell each user's mentions before and after.
 *
 * The edit's write looks at the first state.editEmailChunkUsers candidates; the rest are stored
 * in the same write (edit_email_chunks, a record per chunk) and later writes, one per turn of the
 * event loop, each look at one chunk and remove its record. A wildcard added in a
 * 10,000-subscriber channel read and wrote 10,000 batches in the edit's write, holding the loop
 * ~65 ms (bench:worst). Zulip too queues these after the edit (Tornado, then its
 * missedmessage_emails worker). A crash before the last chunk loses nothing: the writer resumes
 * the stored chunks when it opens the store (resumeEditEmails).
 */
export function enqueueEditMissedEmails(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  channel: Channel,
  candidates: Iterable<number>,
  mentionedBefore: (userId: number) => boolean,
  mentionFlags: (userId: number) => readonly string[],
): void {
  // The edit gives nothing to the others, whenever they are looked at: later chunks need not know them.
  const users: number[] = [];
  for (const userId of candidates) if (userId !== message.senderId && !mentionedBefore(userId)) users.push(userId);
  const chunk = Math.max(1, state.editEmailChunkUsers);
  if (users.length <= chunk) {
    emailEditMentions(state, ctx, message, channel, users, mentionFlags);
    return;
  }
  // Ascending, so that a stored chunk holds small differences (subscribers come nearly sorted).
  users.sort((a, b) => a - b);
  emailEditMentions(state, ctx, message, channel, users.slice(0, chunk), mentionFlags);
  storeChunks(state, ctx, message, channel, users.slice(chunk), mentionFlags, false, chunk);
}

/**
 * Inside a send's or an edit's write: the candidates it leaves to later writes, stored `chunk`
 * users a record (in ascending order) under the next edit ID, and a loop to write them once it commits.
 */
function storeChunks(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  channel: Channel,
  users: number[],
  flagsOf: (userId: number) => readonly string[],
  send: boolean,
  chunk: number,
): void {
  users.sort((a, b) => a - b);
  const editId = nextEditId(state);
  for (let from = 0, n = 0; from < users.length; from += chunk, n++) {
    const record = chunkRecord(message.id, channel.id, users.slice(from, from + chunk), flagsOf, send);
    state.tables.editEmailChunks.putSync([editId, n], record);
  }
  ctx.afterCommit(() => resumeEditEmails(state));
}

/**
 * One stored chunk of an edit's or a send's email candidates (edit_email_chunks, key [editId,
 * chunk]; edit IDs ascend in commit order). `users` ascend, each after the first stored as its
 * difference from the one before: 500 users of a 100,000-user store take ~1 byte each instead of
 * 5, and the record stays within a page. `masks`: each user's personal mention flags after the
 * edit or at the send (bits in CHUNK_FLAGS order), present when any user has one. `send`: the
 * send's checks decide (emailSendRecipients), not the edit's.
 */
interface EditEmailChunk {
  readonly messageId: number;
  readonly channelId: number;
  readonly users: readonly number[];
  readonly masks?: readonly number[];
  readonly send?: true;
}

/**
 * The personal flags a chunk can carry: update-message.ts's MENTION_FLAGS, and the alert word a
 * send's trigger also reads (a send's other flags, read and the stream wildcard's, are not kept:
 * born-read users are not stored, and the stream wildcard is the message's).
 */
const CHUNK_FLAGS = ["mentioned", "group_mentioned", "topic_wildcard_mentioned", "has_alert_word"] as const;

function chunkRecord(
  messageId: number,
  channelId: number,
  users: readonly number[],
  flagsOf: (userId: number) => readonly string[],
  send: boolean,
): EditEmailChunk {
  const deltas: number[] = [];
  const masks: number[] = [];
  let anyMask = false;
  let last = 0;
  for (const userId of users) {
    deltas.push(userId - last);
    last = userId;
    let mask = 0;
    for (const flag of flagsOf(userId)) {
      const bit = CHUNK_FLAGS.indexOf(flag as (typeof CHUNK_FLAGS)[number]);
      if (bit >= 0) mask |= 1 << bit;
      else if (!send) throw new Error(`an edit's stored email chunk cannot carry the flag ${flag}`);
    }
    masks.push(mask);
    if (mask !== 0) anyMask = true;
  }
  return {
    messageId,
    channelId,
    users: deltas,
    ...(anyMask ? { masks } : {}),
    ...(send ? { send: true as const } : {}),
  };
}

const isId = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v > 0;

/** A stored chunk with its users' IDs, or null when the record is not one (verify reports it). */
function parseChunk(value: unknown): EditEmailChunk | null {
  if (typeof value !== "object" || value === null) return null;
  const { messageId, channelId, users, masks, send } = value as Record<string, unknown>;
  if (!isId(messageId) || !isId(channelId) || !Array.isArray(users) || users.length === 0) return null;
  if (send !== undefined && send !== true) return null;
  const kind = send === true ? { send: true as const } : {};
  const ids: number[] = [];
  let last = 0;
  for (const delta of users as unknown[]) {
    // 0 only after the first: a user repeated (looked at twice, the second time finding the item).
    if (!(isId(delta) || (delta === 0 && last > 0))) return null;
    ids.push((last += delta));
  }
  if (masks === undefined) return { messageId, channelId, users: ids, ...kind };
  const maskList = masks as unknown[];
  const maxMask = (1 << CHUNK_FLAGS.length) - 1;
  if (!Array.isArray(masks) || maskList.length !== ids.length) return null;
  if (!maskList.every((m) => typeof m === "number" && Number.isInteger(m) && m >= 0 && m <= maxMask)) return null;
  return { messageId, channelId, users: ids, masks: maskList as number[], ...kind };
}

const isChunkKey = (key: unknown): key is [number, number] =>
  Array.isArray(key) && key.length === 2 && isId(key[0]) && Number.isSafeInteger(key[1]) && (key[1] as number) >= 0;

/** Above every stored edit's: IDs restart at 1 once none is pending. */
function nextEditId(state: StoreState): number {
  // The last key, unless something else was stored there (verify reports it).
  for (const key of state.tables.editEmailChunks.getKeys({ reverse: true })) if (isChunkKey(key)) return key[0] + 1;
  return 1;
}

function anyChunkLeft(state: StoreState): boolean {
  for (const _ of state.tables.editEmailChunks.getKeys({ limit: 1 })) return true;
  return false;
}

/**
 * One write's work: the oldest stored chunk's users are looked at and its record removed.
 * A message deleted or moved out of its channel meanwhile takes the edit's later chunks with
 * it, unread (the emails would leave it out anyway). The message is read as it is now (its
 * topic, its wildcard), as the batch's email reads it. Answers whether any chunk is left.
 */
function emailNextChunk(state: StoreState, ctx: WriteContext): boolean {
  const table = state.tables.editEmailChunks;
  for (const { key, value } of table.getRange({ limit: 1 })) {
    const chunk = parseChunk(value);
    if (!isChunkKey(key) || chunk === null) {
      console.error(`parley engine: edit_email_chunks ${JSON.stringify(key)} is not an email chunk: removed`);
      table.removeSync(key);
      break;
    }
    const message = getMessageRecord(state.tables, chunk.messageId);
    const channel = state.channels.get(chunk.channelId);
    if (message?.recipient.type !== "channel" || message.recipient.channelId !== chunk.channelId || !channel) {
      for (const k of table.getKeys({ start: [key[0]], end: [key[0] + 1] })) table.removeSync(k);
      break;
    }
    table.removeSync(key);
    const flags = new Map<number, readonly string[]>();
    chunk.users.forEach((userId, i) => {
      const mask = chunk.masks?.[i] ?? 0;
      if (mask !== 0)
        flags.set(
          userId,
          CHUNK_FLAGS.filter((_, bit) => (mask & (1 << bit)) !== 0),
        );
    });
    const flagsOf = (userId: number) => flags.get(userId) ?? [];
    if (chunk.send !== true) emailEditMentions(state, ctx, message, channel, chunk.users, flagsOf);
    else {
      // Moved since (out and back): who received it is in its withdrawn and granted rows.
      const moved = message.lastMovedTimestamp !== null;
      const receives = (userId: number) =>
        moved ? receivedAtSend(state, userId, message) : subscribedAtSend(state, userId, message.id, channel.id);
      emailSendRecipients(state, ctx, message, channel, chunk.users, flagsOf, receives);
    }
  }
  return anyChunkLeft(state);
}

/** Each store's running chunk loop (resumeEditEmails), while one runs. */
const editEmailLoops = new WeakMap<StoreState, Promise<void>>();

/**
 * Writes the stored chunks, oldest first, one write per turn of the event loop (StoreState.pacer), unless a loop
 * already runs (it reads the table, so it takes later edits' chunks too). Called after an edit
 * that stored chunks, and by the writer when it opens the store (chunks a crash or a close
 * left). A store closed meanwhile keeps the rest for its next open; a failed write stops the
 * loop and leaves its chunk to the next edit's or open's loop.
 */
export function resumeEditEmails(state: StoreState): void {
  if (editEmailLoops.has(state) || state.isClosed || !anyChunkLeft(state)) return;
  const run = async () => {
    try {
      for (;;) {
        // A turn of its own, not shared with a deletion's batch or another background write.
        await state.pacer.turn();
        if (state.isClosed) return;
        if (!state.write((ctx) => emailNextChunk(state, ctx))) return;
      }
    } finally {
      // In the microtask of the last write: an edit committed after it starts a loop of its own.
      editEmailLoops.delete(state);
    }
  };
  const done = run().catch((error: unknown) => {
    if (state.isClosed) return;
    console.error(
      "parley engine: an edit's missed-message email chunk failed; the stored chunks wait for the next edit " +
        "or open (the store's next writes are unaffected)",
      error,
    );
  });
  editEmailLoops.set(state, done);
}

/** Settles once the running chunk loop ends (every stored chunk written, or the store closed): tests, tools. */
export function editEmailsWritten(state: StoreState): Promise<void> {
  return editEmailLoops.get(state) ?? Promise.resolve();
}

/** What verify finds wrong in the stored chunks: unreadable records, unknown messages or users. */
export function editEmailChunkProblems(state: StoreState): string[] {
  const problems: string[] = [];
  for (const { key, value } of state.tables.editEmailChunks.getRange()) {
    const chunk = parseChunk(value);
    const name = `edit_email_chunks ${JSON.stringify(key)}`;
    if (!isChunkKey(key) || chunk === null) problems.push(`${name} is not a chunk of an edit's email candidates`);
    else if (chunk.messageId > state.lastMessageId)
      problems.push(`${name} names message ${chunk.messageId}, above the allocated maximum ${state.lastMessageId}`);
    // A message deleted since leaves its chunks to the loop, which drops them.
    else if (getMessageRecord(state.tables, chunk.messageId) !== undefined) {
      const unknown = chunk.users.find((userId) => !state.users.has(userId));
      if (unknown !== undefined) problems.push(`${name} names user ${unknown}, who does not exist`);
    }
  }
  return problems;
}

/** The edit's checks for users it does not count as mentioned before (enqueueEditMissedEmails). */
function emailEditMentions(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  channel: Channel,
  users: readonly number[],
  mentionFlags: (userId: number) => readonly string[],
): void {
  const muters = state.mutingUsers.get(message.senderId);
  for (const userId of users) {
    if (userId === message.senderId || muters?.has(userId)) continue;
    const user = state.users.get(userId);
    if (!user || user.realmId !== message.realmId || !user.isActive || user.isBot) continue;
    if (recentlyActive(state, userId) || !receivedAtSend(state, userId, message)) continue;
    // The chunks from the message's on: not each of thousands of users' whole read history.
    if (state.bitmaps.getFrom(key.userFlag(userId, "read"), message.id).has(message.id)) continue;
    const settings = state.settingsOf(userId);
    // A followed topic's message was in the email at send already (Zulip skips users notified at send).
    const followed = topicPolicyOf(state, userId, channel.id, message.topic) === 3;
    if (followed && settings.enable_followed_topic_email_notifications) continue;
    const decision = channelTrigger(state, user, settings, message, channel, mentionFlags(userId), "email");
    if (decision === null || decision.trigger === "followed_topic_email_notify") continue;
    const before = state.tables.missedEmails.get(userId) as MissedEmailBatch | undefined;
    if (before !== undefined && inBatch(state, before, message.id)) continue;
    addToBatch(state, ctx, userId, before, settings.email_notifications_batching_period_seconds, {
      messageId: message.id,
      trigger: decision.trigger,
      mentionedGroupId: decision.mentionedGroupId,
    });
  }
}

type BatchItem = MissedEmailBatch["items"][number];
/** A missed_email_items value (its key is [userId, messageId]). */
type StoredItem = Omit<BatchItem, "messageId">;

function addToBatch(
  state: StoreState,
  ctx: WriteContext,
  userId: number,
  before: MissedEmailBatch | undefined,
  periodSecs: number,
  item: BatchItem,
): void {
  if (before === undefined)
    state.tables.missedEmails.putSync(userId, { userId, dueAt: state.now() + periodSecs, items: [] });
  else if (before.items.length > 0) {
    // A head from before schema 4 carries its items: they move to keys of their own, once,
    // so that later reads of the head decode no list (the first of duplicates is kept, as sending keeps it).
    for (const old of before.items)
      if (!state.tables.missedEmailItems.doesExist([userId, old.messageId]))
        state.tables.missedEmailItems.putSync([userId, old.messageId], {
          trigger: old.trigger,
          mentionedGroupId: old.mentionedGroupId,
        } satisfies StoredItem);
    state.tables.missedEmails.putSync(userId, { ...before, items: [] });
  }
  const stored: StoredItem = { trigger: item.trigger, mentionedGroupId: item.mentionedGroupId };
  state.tables.missedEmailItems.putSync([userId, item.messageId], stored);
  ctx.changed({ kind: "missedEmail", id: userId, op: before ? "changed" : "added" });
}

function inBatch(state: StoreState, head: MissedEmailBatch, messageId: number): boolean {
  return (
    head.items.some((i) => i.messageId === messageId) ||
    state.tables.missedEmailItems.doesExist([head.userId, messageId])
  );
}

/** The user's item keys' range in missed_email_items. */
const itemRange = (userId: number) => ({ start: [userId], end: [userId + 1] });

/** A head with every item of its batch: those it carries (stores before schema 4), then its keys'. */
function withItems(state: StoreState, head: MissedEmailBatch): MissedEmailBatch {
  const items: BatchItem[] = [...head.items];
  for (const { key, value } of state.tables.missedEmailItems.getRange(itemRange(head.userId)))
    items.push({ messageId: key[1], ...(value as StoredItem) });
  return { ...head, items };
}

function missedEmailHeads(state: StoreState): MissedEmailBatch[] {
  const out: MissedEmailBatch[] = [];
  // Key 0 holds the table's msgpackr shared structures.
  for (const { value } of state.tables.missedEmails.getRange({ start: 1 })) out.push(value as MissedEmailBatch);
  return out;
}

/** Every waiting batch (tests and tools). */
export function missedEmailBatches(state: StoreState): MissedEmailBatch[] {
  return missedEmailHeads(state).map((head) => withItems(state, head));
}

/** The earliest due time of a waiting batch (UNIX seconds), or null when none waits. */
export function nextMissedEmailDue(state: StoreState): number | null {
  let next: number | null = null;
  for (const head of missedEmailHeads(state)) if (next === null || head.dueAt < next) next = head.dueAt;
  return next;
}

/** Whether the trigger's setting is still on when the batch goes (the user may have turned it off meanwhile). */
function stillWanted(state: StoreState, userId: number, trigger: EmailTrigger): boolean {
  const settings = state.settingsOf(userId);
  return trigger === "followed_topic_email_notify"
    ? settings.enable_followed_topic_email_notifications
    : offlineEnabled(settings, "email");
}

/** Zulip's realm_name_in_email_notifications_policy: 1 automatic (accounts in several realms), 2 always, 3 never. */
function realmNameInSubject(state: StoreState, user: User): boolean {
  const policy = state.settingsOf(user.id).realm_name_in_email_notifications_policy;
  if (policy !== 1) return policy === 2;
  const email = user.deliveryEmail.toLowerCase();
  for (const other of state.users.values())
    if (other.realmId !== user.realmId && other.isActive && other.deliveryEmail.toLowerCase() === email) return true;
  return false;
}

/**
 * Turns each batch due at `now` (UNIX seconds) into its emails, one write per user;
 * answers how many emails were enqueued. `realmUrl` gives a realm's URL (the engine
 * knows no host).
 */
export function sendDueMissedEmails(state: StoreState, now: number, realmUrl: (realm: Realm) => string): number {
  let sent = 0;
  for (const head of missedEmailHeads(state)) {
    if (head.dueAt > now) continue;
    state.write((ctx) => {
      const batch = withItems(state, head);
      state.tables.missedEmails.removeSync(batch.userId);
      for (const key of state.tables.missedEmailItems.getKeys(itemRange(batch.userId)))
        state.tables.missedEmailItems.removeSync(key);
      ctx.changed({ kind: "missedEmail", id: batch.userId, op: "removed" });
      sent += enqueueBatchMails(state, ctx, batch, realmUrl);
    });
  }
  return sent;
}

function enqueueBatchMails(
  state: StoreState,
  ctx: WriteContext,
  batch: MissedEmailBatch,
  realmUrl: (realm: Realm) => string,
): number {
  const user = state.users.get(batch.userId);
  const realm = user && state.realms.get(user.realmId);
  if (!user || !realm || !user.isActive || realm.deactivated) return 0;
  const read = state.bitmaps.get(key.userFlag(user.id, "read"));
  const buckets = new Map<string, { channel: Channel | null; others: User[]; messages: MissedMessage[] }>();
  const seen = new Set<number>();
  for (const item of [...batch.items].sort((a, b) => a.messageId - b.messageId)) {
    if (seen.has(item.messageId) || read.has(item.messageId) || !stillWanted(state, user.id, item.trigger)) continue;
    seen.add(item.messageId);
    // Deleted meanwhile: no record. Moved out of the user's reach: not received any more.
    const message = getMessageRecord(state.tables, item.messageId);
    const sender = message && state.users.get(message.senderId);
    if (!message || !sender || !receivedAtSend(state, user.id, message)) continue;
    let bucket: string;
    let channel: Channel | null = null;
    let others: User[] = [];
    if (message.recipient.type === "channel") {
      channel = state.channels.get(message.recipient.channelId) ?? null;
      if (channel === null) continue;
      bucket = `c:${channel.id}:${message.topic.toLowerCase()}`;
    } else {
      const userIds = state.conversations.get(message.recipient.conversationId)?.userIds ?? [];
      others = userIds.filter((id) => id !== user.id).flatMap((id) => state.users.get(id) ?? []);
      bucket = others.length >= 2 ? `d:${message.recipient.conversationId}` : `p:${message.senderId}`;
    }
    const group = item.mentionedGroupId === null ? undefined : state.groups.get(item.mentionedGroupId);
    const entry = buckets.get(bucket) ?? { channel, others, messages: [] };
    entry.messages.push({ message, sender, trigger: item.trigger, mentionedGroupName: group?.name ?? null });
    buckets.set(bucket, entry);
  }
  const contentAllowedByRealm = realmPropertyValue(state, realm, "message_content_allowed_in_email_notifications");
  const settings = state.settingsOf(user.id);
  const withRealmName = buckets.size > 0 && realmNameInSubject(state, user);
  // Zulip sends the least recently active conversation first.
  const ordered = [...buckets.values()].sort(
    (a, b) => a.messages[a.messages.length - 1]!.message.id - b.messages[b.messages.length - 1]!.message.id,
  );
  for (const b of ordered) {
    enqueueMailInTxn(
      state,
      ctx,
      missedMessageMail({
        user,
        realm,
        realmUrl: realmUrl(realm),
        channel: b.channel,
        otherParticipants: b.others,
        messages: b.messages,
        contentAllowedByRealm: contentAllowedByRealm !== false,
        contentAllowedByUser: settings.message_content_in_email_notifications,
        realmNameInSubject: withRealmName,
      }),
    );
  }
  return ordered.length;
}
