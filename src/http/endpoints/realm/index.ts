/**
 * @module http/endpoints/realm
 * The organization: its settings (PATCH /realm), deactivation, email domains, code playgrounds,
 * custom emoji, custom profile fields and the Welcome Bot's test message.
 */
import type { Endpoint } from "../../endpoint.js";
import addPlayground from "./add-playground.js";
import removePlayground from "./remove-playground.js";
import { addLinkifier, listLinkifiers, removeLinkifier, reorderLinkifiers, updateLinkifier } from "./linkifiers.js";
import deleteEmoji from "./delete-emoji.js";
import listEmoji from "./list-emoji.js";
import uploadEmoji from "./upload-emoji.js";
import updateRealm from "./update-realm.js";
import deactivateRealm from "./deactivate-realm.js";
import testWelcomeBotMessage from "./test-welcome-bot-message.js";
import { addRealmDomain, changeRealmDomain, listRealmDomains, removeRealmDomain } from "./realm-domains.js";
import {
  createProfileField,
  deleteProfileField,
  listProfileFields,
  reorderProfileFields,
  updateProfileField,
} from "./profile-fields.js";

export const REALM_ENDPOINTS: readonly Endpoint[] = [
  addPlayground,
  removePlayground,
  listLinkifiers,
  addLinkifier,
  updateLinkifier,
  removeLinkifier,
  reorderLinkifiers,
  listEmoji,
  uploadEmoji,
  deleteEmoji,
  updateRealm,
  deactivateRealm,
  testWelcomeBotMessage,
  listRealmDomains,
  addRealmDomain,
  changeRealmDomain,
  removeRealmDomain,
  listProfileFields,
  createProfileField,
  reorderProfileFields,
  updateProfileField,
  deleteProfileField,
];
