/**
 * @module push/payload
 * The plaintext of E2EE notifications, in Zulip's shapes (api/mobile-notifications:
 * feature levels 413, 420, 429), and the push_requests that carry them to the bouncer.
 */
import type { PushDelivery, PushTarget, Realm } from "../engine/index.js";
import { avatarUrl } from "../wire/avatar.js";
import { realmUrl } from "../wire/realm-url.js";
import { encryptForDevice } from "./crypto.js";

/** Zulip's truncate_content: notification text is cut to this many characters, with "…". */
export const MAX_PUSH_CONTENT_CHARS = 200;

export { realmUrl };

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/**
 * Rendered message HTML as the plain text a notification shows (Zulip's
 * get_mobile_push_content, simplified): tags dropped, block ends as line breaks,
 * entities decoded, then cut to MAX_PUSH_CONTENT_CHARS.
 */
export function pushContent(html: string): string {
  const text = html
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|li|blockquote|pre|h[1-6])>/gi, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith("#x") || name.startsWith("#X")) return String.fromCodePoint(parseInt(name.slice(2), 16));
      if (name.startsWith("#")) return String.fromCodePoint(Number(name.slice(1)));
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  const chars = [...text];
  return chars.length <= MAX_PUSH_CONTENT_CHARS ? text : `${chars.slice(0, MAX_PUSH_CONTENT_CHARS).join("")}…`;
}

type MessageDelivery = Extract<PushDelivery, { kind: "message" }>;

/** A new message's payload: channel or direct, with the group whose mention triggered it. */
export function messagePayload(d: MessageDelivery, baseUrl: string): Record<string, unknown> {
  const common = {
    content: pushContent(d.message.renderedContent),
    message_id: d.message.id,
    realm_name: d.realm.name,
    realm_url: realmUrl(baseUrl, d.realm),
    // Absolute, as Zulip's absolute_avatar_url: an uploaded avatar's path is on the realm's host.
    sender_avatar_url: new URL(avatarUrl(d.sender, false) ?? "", realmUrl(baseUrl, d.realm)).href,
    sender_full_name: d.sender.fullName,
    sender_id: d.sender.id,
    time: d.message.dateSent,
    type: "message",
    user_id: d.userId,
  };
  if (d.channel === null) return { ...common, recipient_type: "direct", recipient_user_ids: d.recipientUserIds ?? [] };
  return {
    ...common,
    recipient_type: "channel",
    channel_id: d.channel.id,
    channel_name: d.channel.name,
    topic: d.message.topic,
    ...(d.mentionedGroup
      ? { mentioned_user_group_id: d.mentionedGroup.id, mentioned_user_group_name: d.mentionedGroup.name }
      : {}),
  };
}

/** Messages the user has read elsewhere: their notifications go. */
export function removePayload(
  realm: Realm,
  baseUrl: string,
  userId: number,
  messageIds: readonly number[],
): Record<string, unknown> {
  return {
    message_ids: [...messageIds],
    realm_name: realm.name,
    realm_url: realmUrl(baseUrl, realm),
    type: "remove",
    user_id: userId,
  };
}

/** POST /mobile_push/e2ee/test_notification's payload. */
export function testPayload(realm: Realm, baseUrl: string, userId: number, time: number): Record<string, unknown> {
  return { realm_name: realm.name, realm_url: realmUrl(baseUrl, realm), time, type: "test", user_id: userId };
}

/**
 * Zulip's get_base_payload, which the legacy test notification hands the bouncer to
 * complete: who the notification is for, and on which server and realm.
 */
export function legacyBasePayload(realm: Realm, baseUrl: string, userId: number): Record<string, unknown> {
  const url = realmUrl(baseUrl, realm);
  return {
    server: new URL(baseUrl).host,
    realm_id: realm.id,
    realm_name: realm.name,
    realm_uri: url,
    realm_url: url,
    user_id: userId,
  };
}

/**
 * One push request per device, encrypted for it. Alerts wake the app's notification
 * extension on iOS (mutable-content with a placeholder title) and go at high priority;
 * removals change nothing on screen until the app runs, so they go as background
 * pushes at normal priority (Zulip's docs show only the alert form; this is inferred).
 */
export function pushRequests(
  targets: readonly PushTarget[],
  payload: unknown,
  alert: boolean,
): Record<string, unknown>[] {
  return targets.map((t) => {
    const encrypted = { push_key_id: t.pushKeyId, encrypted_data: encryptForDevice(t.pushKey, payload) };
    if (t.tokenKind === "fcm")
      return { token_id: t.tokenId, fcm_priority: alert ? "high" : "normal", payload: encrypted };
    return alert
      ? {
          token_id: t.tokenId,
          http_headers: { apns_priority: 10, apns_push_type: "alert" },
          payload: { ...encrypted, aps: { "mutable-content": 1, alert: { title: "New notification" } } },
        }
      : {
          token_id: t.tokenId,
          http_headers: { apns_priority: 5, apns_push_type: "background" },
          payload: { ...encrypted, aps: { "content-available": 1 } },
        };
  });
}
