/**
 * @module http/endpoints/realm
 * The organization: its settings (PATCH /realm), code playgrounds and custom emoji.
 */
import type { Endpoint } from "../../endpoint.js";
import addPlayground from "./add-playground.js";
import removePlayground from "./remove-playground.js";
import deleteEmoji from "./delete-emoji.js";
import listEmoji from "./list-emoji.js";
import uploadEmoji from "./upload-emoji.js";
import updateRealm from "./update-realm.js";
import deactivateRealm from "./deactivate-realm.js";

export const REALM_ENDPOINTS: readonly Endpoint[] = [
  addPlayground,
  removePlayground,
  listEmoji,
  uploadEmoji,
  deleteEmoji,
  updateRealm,
  deactivateRealm,
];
