/**
 * @module actions/push-notifications
 * Who gets a mobile notification, decided where mentions, policies, settings and flags
 * live, and the durable push outbox that carries the decision to src/push.
 *
 * On send (inside the message's write): for each user with a device registered for
 * push — found through the device index, so a send costs what the realm's push users
 * cost, not what the channel's subscribers cost — Zulip's rules pick a trigger (its
 * order of precedence: direct message, mention, wildcard mentions in followed topics,
 * wildcard mentions, alert word, followed topic, channel push; actions/notification-triggers.ts,
 * shared with missed-message email), and an outbox item is written with the message.
 * Zulip's notification rules: never the sender; direct messages, personal or group
 * mentions and alert words with enable_offline_push_notifications; wildcard mentions
 * per wildcard_mentions_notify (the subscription's, else the user's), not in muted
 * channels or topics unless followed; followed topics with
 * enable_followed_topic_push_notifications; channels whose push_notifications is on
 * (the subscription's, else enable_stream_push_notifications), not when muted. A user
 * active in the last OFFLINE_THRESHOLD_SECS (by presence) gets none unless
 * enable_online_push_notifications.
 *
 * Each notified message is marked active_mobile_push_notification for the user (Zulip's
 * flag); marking such messages read writes a removal item in the flag change's write.
 */
import { key } from "../index/keys.js";
import { RoaringBitmap32, type ReadonlyBitmap } from "../index/bitmap-store.js";
import type { FlagsAtSend } from "../queries/message-flags.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Channel, Device, Message, PushOutboxItem, PushTrigger, PushTokenKind, Realm, User } from "../types.js";
import { channelTrigger, directTrigger, recentlyActive, type TriggerDecision } from "./notification-triggers.js";
import { requireHuman, updateDeviceInTxn } from "./devices.js";
import { NoActivePushDeviceError } from "../errors.js";
import { realmUuid } from "./realms.js";
import { getMessageRecord } from "../storage/message-records.js";

/** Outbox items older than this are given up (a notification a day late helps no one). */
export const PUSH_ITEM_MAX_AGE_SECS = 24 * 3600;

function canPush(device: Device): boolean {
  return device.pushKey !== null && device.pushKeyId !== null;
}

/** Devices the bouncer knows (a confirmed token) with a key to encrypt for. */
function pushTargets(state: StoreState, userId: number): PushTarget[] {
  const out: PushTarget[] = [];
  for (const id of state.devicesByUser.get(userId) ?? []) {
    const d = state.devices.get(id);
    if (d && canPush(d) && d.pushTokenId !== null && d.pushTokenKind !== null) {
      out.push({
        deviceId: d.id,
        pushKey: d.pushKey!,
        pushKeyId: d.pushKeyId!,
        tokenKind: d.pushTokenKind,
        tokenId: d.pushTokenId,
      });
    }
  }
  return out.sort((a, b) => a.deviceId - b.deviceId);
}

/**
 * Writes the outbox items of a new message, inside its write. `participants` are a
 * direct message's (the conversation may be new in this very write).
 */
export function enqueueMessagePushes(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  channel: Channel | null,
  participants: readonly number[],
  flags: FlagsAtSend,
): void {
  if (state.devicesByUser.size === 0) return;
  const muters = state.mutingUsers.get(message.senderId);
  for (const [userId, deviceIds] of state.devicesByUser) {
    if (userId === message.senderId || muters?.has(userId)) continue;
    const user = state.users.get(userId);
    if (!user || user.realmId !== message.realmId || !user.isActive || user.isBot) continue;
    if (![...deviceIds].some((id) => canPush(state.devices.get(id)!))) continue;
    const settings = state.settingsOf(userId);
    if (!settings.enable_online_push_notifications && recentlyActive(state, userId)) continue;
    let decision: TriggerDecision<PushTrigger> | null;
    if (channel === null) {
      decision = participants.includes(userId) ? directTrigger(settings, "push") : null;
    } else {
      const sub = state.subsByUser.get(userId)?.get(channel.id);
      const received =
        sub !== undefined &&
        sub.intervals.some((iv) => message.id >= iv.from && (iv.to === null || message.id < iv.to));
      decision = received
        ? channelTrigger(state, user, settings, message, channel, flags.flagsFor(userId), "push")
        : null;
    }
    if (decision === null) continue;
    const item: PushOutboxItem = {
      id: state.allocate("nextPushOutboxId"),
      kind: "message",
      userId,
      messageId: message.id,
      trigger: decision.trigger,
      mentionedGroupId: decision.mentionedGroupId,
      createdAt: state.now(),
    };
    state.tables.pushOutbox.putSync(item.id, item);
    ctx.changed({ kind: "pushItem", id: item.id, op: "added" });
    state.bitmaps.add(key.userFlag(userId, "active_mobile_push_notification"), message.id);
  }
}

/**
 * Inside a channel message's content edit (Zulip's maybe_enqueue_notifications_for_message_update
 * and do_update_mobile_push_notification): a user the edit newly mentions gets a
 * notification, unless one already reached them at send (their channel's or followed
 * topic's push) or a mention had (prior mentions are not notified twice); a user it no
 * longer mentions loses the notification a mention gave them. Edits of direct messages
 * notify no one, as in Zulip. `mentionedBefore` and `mentionFlags` tell each user's
 * mention flags before and after the edit (the stream wildcard is the message's).
 */
export function enqueueEditPushes(
  state: StoreState,
  ctx: WriteContext,
  message: Message,
  channel: Channel,
  mentionedBefore: (userId: number) => boolean,
  mentionFlags: (userId: number) => readonly string[],
): void {
  if (state.devicesByUser.size === 0) return;
  const removals: number[] = [];
  // A muted sender's edits notify the muter of nothing either (Zulip's muted_sender_user_ids).
  const muters = state.mutingUsers.get(message.senderId);
  for (const [userId, deviceIds] of state.devicesByUser) {
    if (userId === message.senderId || muters?.has(userId)) continue;
    const user = state.users.get(userId);
    if (!user || user.realmId !== message.realmId || !user.isActive || user.isBot) continue;
    const sub = state.subsByUser.get(userId)?.get(channel.id);
    if (!sub || !sub.intervals.some((iv) => message.id >= iv.from && (iv.to === null || message.id < iv.to))) continue;
    const settings = state.settingsOf(userId);
    const flags = mentionFlags(userId);
    const decision = channelTrigger(state, user, settings, message, channel, flags, "push");
    const notifiedAtSend =
      decision?.trigger === "stream_push_notify" || decision?.trigger === "followed_topic_push_notify";
    const mentionedNow = decision !== null && !notifiedAtSend;
    const activeKey = key.userFlag(userId, "active_mobile_push_notification");
    if (mentionedBefore(userId)) {
      if (!mentionedNow && !notifiedAtSend && state.bitmaps.get(activeKey).has(message.id)) {
        state.bitmaps.removeMany(activeKey, [message.id]);
        removals.push(userId);
      }
      continue;
    }
    if (!mentionedNow || ![...deviceIds].some((id) => canPush(state.devices.get(id)!))) continue;
    if (!settings.enable_online_push_notifications && recentlyActive(state, userId)) continue;
    const item: PushOutboxItem = {
      id: state.allocate("nextPushOutboxId"),
      kind: "message",
      userId,
      messageId: message.id,
      trigger: decision.trigger,
      mentionedGroupId: decision.mentionedGroupId,
      createdAt: state.now(),
    };
    state.tables.pushOutbox.putSync(item.id, item);
    ctx.changed({ kind: "pushItem", id: item.id, op: "added" });
    state.bitmaps.add(activeKey, message.id);
  }
  for (const userId of removals) {
    const item: PushOutboxItem = {
      id: state.allocate("nextPushOutboxId"),
      kind: "remove",
      userId,
      messageIds: [message.id],
      createdAt: state.now(),
    };
    state.tables.pushOutbox.putSync(item.id, item);
    ctx.changed({ kind: "pushItem", id: item.id, op: "added" });
  }
}

/** Inside a flag change's write: messages just read that a notification shows get a removal. */
export function enqueueReadRemovals(state: StoreState, ctx: WriteContext, userId: number, read: ReadonlyBitmap): void {
  const activeKey = key.userFlag(userId, "active_mobile_push_notification");
  const shown = RoaringBitmap32.and(read, state.bitmaps.get(activeKey));
  if (shown.size === 0) return;
  state.bitmaps.removeMany(activeKey, shown);
  const item: PushOutboxItem = {
    id: state.allocate("nextPushOutboxId"),
    kind: "remove",
    userId,
    messageIds: shown.toArray(),
    createdAt: state.now(),
  };
  state.tables.pushOutbox.putSync(item.id, item);
  ctx.changed({ kind: "pushItem", id: item.id, op: "added" });
}

/**
 * Inside a deletion's write: the deleted messages a notification of the user's shows
 * get a removal (Zulip's do_clear_mobile_push_notifications_for_ids); the caller has
 * cleared their active_mobile_push_notification bits with the message.
 */
export function enqueueDeletedRemovals(
  state: StoreState,
  ctx: WriteContext,
  userId: number,
  messageIds: readonly number[],
): void {
  if (messageIds.length === 0) return;
  const item: PushOutboxItem = {
    id: state.allocate("nextPushOutboxId"),
    kind: "remove",
    userId,
    messageIds: [...messageIds],
    createdAt: state.now(),
  };
  state.tables.pushOutbox.putSync(item.id, item);
  ctx.changed({ kind: "pushItem", id: item.id, op: "added" });
}

// ---- the outbox, as src/push drains it ----

/** A device to encrypt for and address at the bouncer. */
export interface PushTarget {
  readonly deviceId: number;
  /** Base64 of the cryptosystem byte and the key. */
  readonly pushKey: string;
  readonly pushKeyId: number;
  readonly tokenKind: PushTokenKind;
  readonly tokenId: string;
}

interface DeliveryBase {
  readonly itemId: number;
  readonly realm: Realm;
  readonly realmUuid: string;
  readonly userId: number;
}

/** What one outbox item asks of the bouncer, resolved against current state. */
export type PushDelivery =
  | (DeliveryBase & {
      readonly kind: "message";
      readonly targets: readonly PushTarget[];
      readonly message: Message;
      readonly sender: User;
      readonly channel: Channel | null;
      /** A direct message's participants, sorted (user and sender included). */
      readonly recipientUserIds: readonly number[] | null;
      readonly mentionedGroup: { readonly id: number; readonly name: string } | null;
    })
  | (DeliveryBase & {
      readonly kind: "remove";
      readonly targets: readonly PushTarget[];
      readonly messageIds: readonly number[];
    })
  | (DeliveryBase & {
      readonly kind: "register";
      readonly deviceId: number;
      readonly tokenId: string;
      readonly bouncerPublicKey: string;
      readonly encryptedPushRegistration: string;
    });

/** Outbox items after `afterId`, oldest first. */
export function pushOutboxItems(state: StoreState, afterId: number, limit: number): PushOutboxItem[] {
  const out: PushOutboxItem[] = [];
  for (const { value } of state.tables.pushOutbox.getRange({ start: Math.max(afterId + 1, 1), limit }))
    out.push(value as PushOutboxItem);
  return out;
}

/**
 * What an item needs sent now, or null when there is nothing left to send (the user
 * or device is gone, no device is registered, the message was read meanwhile): the
 * caller then finishes the item as dropped.
 */
export function resolvePushItem(state: StoreState, itemId: number): PushDelivery | null {
  const item = state.tables.pushOutbox.get(itemId) as PushOutboxItem | undefined;
  if (!item) return null;
  const user = state.users.get(item.userId);
  const realm = user && state.realms.get(user.realmId);
  if (!user || !realm || !user.isActive || realm.deactivated) return null;
  const base = { itemId, realm, realmUuid: realmUuid(realm), userId: user.id };
  if (item.kind === "register") {
    const device = state.devices.get(item.deviceId);
    if (!device || device.userId !== user.id || device.pendingPushTokenId !== item.tokenId) return null;
    return {
      ...base,
      kind: "register",
      deviceId: device.id,
      tokenId: item.tokenId,
      bouncerPublicKey: item.bouncerPublicKey,
      encryptedPushRegistration: item.encryptedPushRegistration,
    };
  }
  const targets = pushTargets(state, user.id);
  if (targets.length === 0) return null;
  if (item.kind === "remove") return { ...base, kind: "remove", targets, messageIds: item.messageIds };
  const message = getMessageRecord(state.tables, item.messageId);
  const sender = message && state.users.get(message.senderId);
  if (!message || !sender) return null;
  // Read while the bouncer was away: a notification now would only be noise.
  if (state.bitmaps.get(key.userFlag(user.id, "read")).has(message.id)) return null;
  const channel =
    message.recipient.type === "channel" ? (state.channels.get(message.recipient.channelId) ?? null) : null;
  const recipientUserIds =
    message.recipient.type === "direct"
      ? [...(state.conversations.get(message.recipient.conversationId)?.userIds ?? [])].sort((a, b) => a - b)
      : null;
  const group = item.mentionedGroupId === null ? undefined : state.groups.get(item.mentionedGroupId);
  return {
    ...base,
    kind: "message",
    targets,
    message,
    sender,
    channel,
    recipientUserIds,
    mentionedGroup: group ? { id: group.id, name: group.name } : null,
  };
}

/** How the bouncer answered an item. */
export type PushItemOutcome =
  | { readonly kind: "sent"; readonly deleteTokenIds?: readonly string[] }
  /** The bouncer refused a registration for good (its error code). */
  | { readonly kind: "refused"; readonly code: string }
  /** Nothing to send, or given up: the item goes. */
  | { readonly kind: "dropped" };

/**
 * Removes a delivered (or abandoned) item, in one write with what its answer changes:
 * a registration confirmed or refused; tokens the bouncer no longer knows cleared.
 */
export function finishPushItem(state: StoreState, itemId: number, outcome: PushItemOutcome): void {
  const item = state.tables.pushOutbox.get(itemId) as PushOutboxItem | undefined;
  if (!item) return;
  state.write((ctx) => {
    state.tables.pushOutbox.removeSync(itemId);
    ctx.changed({ kind: "pushItem", id: itemId, op: "removed" });
    if (item.kind === "register") {
      const device = state.devices.get(item.deviceId);
      if (!device || device.pendingPushTokenId !== item.tokenId || outcome.kind === "dropped") return;
      if (outcome.kind === "sent") {
        updateDeviceInTxn(
          state,
          ctx,
          { ...device, pushTokenId: item.tokenId, pendingPushTokenId: null, pushRegistrationErrorCode: null },
          { pushTokenId: item.tokenId, pendingPushTokenId: null },
        );
      } else {
        updateDeviceInTxn(
          state,
          ctx,
          { ...device, pushRegistrationErrorCode: outcome.code },
          { pushRegistrationErrorCode: outcome.code },
        );
      }
      return;
    }
    if (outcome.kind === "sent") clearTokensInTxn(state, ctx, item.userId, outcome.deleteTokenIds ?? []);
  });
}

/** The bouncer's delete_token_ids: those registrations are gone there, so they are cleared here. */
function clearTokensInTxn(state: StoreState, ctx: WriteContext, userId: number, tokenIds: readonly string[]): void {
  if (tokenIds.length === 0) return;
  for (const id of state.devicesByUser.get(userId) ?? []) {
    const device = state.devices.get(id)!;
    if (device.pushTokenId !== null && tokenIds.includes(device.pushTokenId))
      updateDeviceInTxn(state, ctx, { ...device, pushTokenId: null }, { pushTokenId: null });
  }
}

/** Clears expired tokens outside an item (the test notification's answer). */
export function clearPushTokens(state: StoreState, userId: number, tokenIds: readonly string[]): void {
  if (tokenIds.length === 0) return;
  state.write((ctx) => clearTokensInTxn(state, ctx, userId, tokenIds));
}

/**
 * The targets of an E2EE test notification: the user's devices registered with the
 * bouncer, or just `deviceId` (Zulip's send_e2ee_test_push_notification_api).
 */
export function testPushTargets(
  state: StoreState,
  userId: number,
  deviceId: number | null,
): { realm: Realm; realmUuid: string; targets: PushTarget[] } {
  const user = requireHuman(state, userId);
  const realm = state.realms.get(user.realmId)!;
  const targets = pushTargets(state, userId).filter((t) => deviceId === null || t.deviceId === deviceId);
  if (targets.length === 0) throw new NoActivePushDeviceError();
  return { realm, realmUuid: realmUuid(realm), targets };
}
