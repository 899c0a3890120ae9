/**
 * @module actions/welcome-bot
 * POST /realm/test_welcome_bot_custom_message (Zulip's send_test_welcome_bot_custom_message):
 * an administrator previews a custom welcome text as new users would get it, a direct
 * message from the Welcome Bot to themselves.
 */
import { isAdmin } from "../access.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import type { StoreState } from "../state.js";
import { customWelcomeText } from "./invites.js";
import { requireActiveUser } from "./lookups.js";
import { ensureSystemBotInTxn, findSystemBot, WELCOME_BOT_EMAIL, WELCOME_BOT_NAME } from "./notification-bot.js";
import { normalizeContent, sendInternalDirectMessage } from "./send-message.js";

/** Sends the test message; answers its ID. The length bound (8000 code points) is the caller's parameter check. */
export function sendTestWelcomeBotCustomMessage(state: StoreState, actorId: number, text: string): { id: number } {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  // Zulip refuses only the empty string: whitespace is sent as given.
  if (text.length === 0) throw new BadRequestError("Message must not be empty");
  const realm = state.realms.get(actor.realmId)!;
  // The message's own checks (null bytes, ...) before the Welcome Bot may be created: a refusal writes nothing.
  const content = normalizeContent(customWelcomeText(realm, text));
  // Realms made before system bots existed get their Welcome Bot here, as at a first signup.
  const bot =
    findSystemBot(state, realm.id, WELCOME_BOT_EMAIL) ??
    state.write((ctx) => ensureSystemBotInTxn(state, ctx, realm, WELCOME_BOT_EMAIL, WELCOME_BOT_NAME));
  return sendInternalDirectMessage(state, bot.id, actor.id, content, { externalNotifications: false });
}
