/**
 * @module actions/new-user-notices
 * What Zulip's process_new_human_user does for the realm after a person's account is
 * made (invitation, POST /users, the CLI): the welcome mail when send_welcome_emails is
 * on (Zulip's enqueue_welcome_emails), and the Notification Bot's "joined this
 * organization" notice in the signup announcements channel (Zulip's notify_new_user),
 * not for the realm's first person.
 */
import { enqueueMailInTxn } from "../mail/outbox.js";
import { welcomeMail } from "../mail/templates.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Channel, Realm, User } from "../types.js";
import { ensureNotificationBotInTxn, findNotificationBot, silentMention } from "./notification-bot.js";
import { sendInternalChannelMessage } from "./send-message.js";

/** Zulip's topic for signup notices. */
export const SIGNUPS_TOPIC = "signups";

function signupChannel(state: StoreState, realm: Realm): Channel | undefined {
  const id = realm.properties?.signupAnnouncementsChannelId;
  const channel = typeof id === "number" ? state.channels.get(id) : undefined;
  return channel && channel.realmId === realm.id && !channel.isArchived ? channel : undefined;
}

/** Inside the write that creates `user`: the welcome mail, and the Notification Bot the notice will need. */
export function newUserNoticesInTxn(state: StoreState, ctx: WriteContext, realm: Realm, user: User): void {
  if (realm.properties?.sendWelcomeEmails !== false && user.deliveryEmail !== "")
    enqueueMailInTxn(
      state,
      ctx,
      welcomeMail({ to: user.deliveryEmail, fullName: user.fullName, realmName: realm.name }),
    );
  if (signupChannel(state, realm)) ensureNotificationBotInTxn(state, ctx, realm);
}

/** After the write: the signup notice, when the realm has a signup channel and other people. */
export function announceSignup(state: StoreState, realm: Realm, user: User): void {
  const channel = signupChannel(state, realm);
  const bot = findNotificationBot(state, realm.id);
  if (!channel || !bot) return;
  let people = 0;
  for (const id of state.usersOfRealm(realm.id)) {
    const other = state.users.get(id);
    if (other?.isActive && !other.isBot) people++;
  }
  if (people <= 1) return;
  sendInternalChannelMessage(
    state,
    bot.id,
    channel.id,
    SIGNUPS_TOPIC,
    `${silentMention(user)} joined this organization.`,
    [],
  );
}
