/**
 * @module actions/notification-bot
 * Zulip's Notification Bot and the messages it sends when channels are created (Zulip's
 * send_messages_for_new_subscribers). Zulip's bot is one cross-realm system bot; here
 * it is a bot user of each realm, created the first time the realm needs it, inside the
 * transaction that creates the channels, so realms and data directories written
 * before it existed open unchanged.
 */
import { REALM_PROPERTIES } from "../settings/realm-settings.js";
import type { StoreState, WriteContext } from "../state.js";
import { emailKey } from "../state.js";
import type { Channel, Realm, User } from "../types.js";
import { internalChannelMessage, writeMessages, type MessageToWrite } from "./send-message.js";
import { createUserInTxn } from "./users.js";

export const NOTIFICATION_BOT_EMAIL = "notification-bot@zulip.com";
export const NOTIFICATION_BOT_NAME = "Notification Bot";
/** Zulip's Welcome Bot, which greets new users; a bot of each realm here, like the notification bot. */
export const WELCOME_BOT_EMAIL = "welcome-bot@zulip.com";
export const WELCOME_BOT_NAME = "Welcome Bot";
/** Zulip's Realm.STREAM_EVENTS_NOTIFICATION_TOPIC_NAME. */
export const CHANNEL_EVENTS_TOPIC = "channel events";
export const NEW_CHANNELS_TOPIC = "new channels";

/**
 * The realm's copies of Zulip's system bots: in Zulip they belong to a realm of their
 * own, so counts of an organization's users (the last-user rule) leave them out.
 */
export function isSystemBot(user: User): boolean {
  return (
    user.isBot &&
    user.botOwnerId === null &&
    (user.email === NOTIFICATION_BOT_EMAIL || user.email === WELCOME_BOT_EMAIL)
  );
}

/** The realm's notification bot, if it has been created. */
export function findNotificationBot(state: StoreState, realmId: number): User | undefined {
  return findSystemBot(state, realmId, NOTIFICATION_BOT_EMAIL);
}

/** A system bot of the realm by its address, if it has been created. */
export function findSystemBot(state: StoreState, realmId: number, email: string): User | undefined {
  const id = state.userByEmail.get(emailKey(realmId, email));
  return id === undefined ? undefined : state.users.get(id);
}

/**
 * The realm's notification bot, created inside an open write unless it exists. A bot
 * created here is indexed only once the write commits: send as the returned user.
 */
export function ensureNotificationBotInTxn(state: StoreState, ctx: WriteContext, realm: Realm): User {
  return ensureSystemBotInTxn(state, ctx, realm, NOTIFICATION_BOT_EMAIL, NOTIFICATION_BOT_NAME);
}

/** A system bot of the realm, created inside an open write unless it exists. */
export function ensureSystemBotInTxn(
  state: StoreState,
  ctx: WriteContext,
  realm: Realm,
  email: string,
  fullName: string,
): User {
  return (
    findSystemBot(state, realm.id, email) ??
    createUserInTxn(state, ctx, { realmId: realm.id, email, fullName, bot: { type: 1, ownerId: null } }, realm)
  );
}

/**
 * The realm's send_channel_events_messages: whether the Notification Bot posts to a
 * channel's "channel events" topic (creation, renames, descriptions, permissions,
 * archiving...). Zulip's maybe_send_channel_events_notice; other notices do not ask.
 */
export function sendsChannelEventsMessages(realm: Realm | undefined): boolean {
  const value = realm?.properties?.sendChannelEventsMessages ?? REALM_PROPERTIES.sendChannelEventsMessages.byDefault;
  return value !== false;
}

/** Zulip's silent_mention_syntax_for_user. */
export function silentMention(user: User): string {
  return `@_**${user.fullName}|${user.id}**`;
}

/** The first words of a new channel's first message, by its access policy (Zulip's texts). */
function policyLabel(channel: Channel): string {
  if (channel.isWebPublic) return "**Web-public**";
  if (!channel.inviteOnly) return "**Public**";
  return channel.historyPublicToSubscribers ? "**Private, shared history**" : "**Private, protected history**";
}

/**
 * After channels were created by `creator`: the announcement in the realm's
 * new-channel-announcements channel when `announce` is set, then each new channel's
 * first message to "channel events" (unless the realm turned those off). The creator
 * gets them as read.
 */
export function sendChannelCreationMessages(
  state: StoreState,
  creator: User,
  created: readonly Channel[],
  announce: boolean,
): void {
  const bot = findNotificationBot(state, creator.realmId);
  if (!bot || created.length === 0) return;
  const realm = state.realms.get(creator.realmId);
  const target =
    realm?.newChannelAnnouncementsChannelId == null
      ? undefined
      : state.channels.get(realm.newChannelAnnouncementsChannelId);
  const notices: MessageToWrite[] = [];
  if (announce && target && !target.isArchived) {
    const links = created.map((c) => `#**${c.name}**`).join(", ");
    const content =
      created.length > 1
        ? `${silentMention(creator)} created the following channels: ${links}.`
        : `${silentMention(creator)} created a new channel ${links}.`;
    notices.push(internalChannelMessage(state, bot.id, target.id, NEW_CHANNELS_TOPIC, content, [creator.id]));
  }
  for (const channel of sendsChannelEventsMessages(realm) ? created : []) {
    const description = channel.description === "" ? "*No description.*" : channel.description;
    const content = `${policyLabel(channel)} channel created by ${silentMention(creator)}. **Description:**\n\`\`\`\` quote\n${description}\n\`\`\`\``;
    notices.push(internalChannelMessage(state, bot.id, channel.id, CHANNEL_EVENTS_TOPIC, content, [creator.id]));
  }
  // One transaction for all of them: creating 1000 channels used to take 1000 commits.
  writeMessages(state, notices);
}
