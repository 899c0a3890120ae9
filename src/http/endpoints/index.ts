/**
 * @module http/endpoints
 * The route table: every endpoint, nothing else (those marked `root` are outside /api/v1). Each family keeps its list
 * in its
 * own folder's index.ts.
 */
import type { Endpoint } from "../endpoint.js";
import { MESSAGE_ENDPOINTS } from "./messages/index.js";
import { REGISTER_ENDPOINTS } from "./register/index.js";
import serverSettings from "./server/server-settings.js";
import { SUBSCRIPTION_ENDPOINTS } from "./subscriptions/index.js";
import { CHANNEL_ENDPOINTS } from "./channels/index.js";
import { USER_ENDPOINTS } from "./users/index.js";
import { BOT_ENDPOINTS } from "./bots/index.js";
import { EVENT_ENDPOINTS } from "./events/index.js";
import { TYPING_ENDPOINTS } from "./typing/index.js";
import { USER_GROUP_ENDPOINTS } from "./user-groups/index.js";
import { SCHEDULED_MESSAGE_ENDPOINTS } from "./scheduled-messages/index.js";
import { PRESENCE_ENDPOINTS } from "./presence/index.js";
import { REALM_ENDPOINTS } from "./realm/index.js";
import { USER_TOPIC_ENDPOINTS } from "./user-topics/index.js";
import { SETTINGS_ENDPOINTS } from "./settings/index.js";
import { DRAFT_ENDPOINTS } from "./drafts/index.js";
import { SAVED_SNIPPET_ENDPOINTS } from "./saved-snippets/index.js";
import { NAVIGATION_VIEW_ENDPOINTS } from "./navigation-views/index.js";
import { PUSH_ENDPOINTS } from "./push/index.js";
import { ACCOUNT_ENDPOINTS } from "./accounts/index.js";
import { INVITE_ENDPOINTS } from "./invites/index.js";
import { EXPORT_ENDPOINTS } from "./exports/index.js";

import { UPLOAD_ENDPOINTS } from "./uploads/index.js";
import { EXTERNAL_CONTENT_ENDPOINTS } from "./external-content/index.js";
import { WEBHOOK_ENDPOINTS } from "./webhooks/index.js";
import { BOT_STORAGE_ENDPOINTS } from "./bot-storage/index.js";

export const ENDPOINTS: readonly Endpoint[] = [
  serverSettings,
  ...MESSAGE_ENDPOINTS,
  ...USER_ENDPOINTS,
  ...BOT_ENDPOINTS,
  ...SUBSCRIPTION_ENDPOINTS,
  ...CHANNEL_ENDPOINTS,
  ...REGISTER_ENDPOINTS,
  ...EVENT_ENDPOINTS,
  ...TYPING_ENDPOINTS,
  ...USER_GROUP_ENDPOINTS,
  ...SCHEDULED_MESSAGE_ENDPOINTS,
  ...SETTINGS_ENDPOINTS,
  ...DRAFT_ENDPOINTS,
  ...SAVED_SNIPPET_ENDPOINTS,
  ...NAVIGATION_VIEW_ENDPOINTS,
  ...PRESENCE_ENDPOINTS,
  ...REALM_ENDPOINTS,
  ...USER_TOPIC_ENDPOINTS,
  ...PUSH_ENDPOINTS,
  ...ACCOUNT_ENDPOINTS,
  ...INVITE_ENDPOINTS,
  ...EXPORT_ENDPOINTS,
  ...UPLOAD_ENDPOINTS,
  ...EXTERNAL_CONTENT_ENDPOINTS,
  ...WEBHOOK_ENDPOINTS,
  ...BOT_STORAGE_ENDPOINTS,
];
