/**
 * @module http/endpoints/users
 * User endpoints: list users, own user, one user by ID or email, update a user, and
 * administering accounts (create, deactivate, reactivate), user status, muted users, alert words,
 * one's own avatar.
 */
import type { Endpoint } from "../../endpoint.js";
import createUser from "./create-user.js";
import { deactivateOwnUser, deactivateUser } from "./deactivate-user.js";
import getOwnUser from "./get-own-user.js";
import getUser from "./get-user.js";
import getUsers from "./get-users.js";
import reactivateUser from "./reactivate-user.js";
import updateUser from "./update-user.js";
import { muteUserEndpoint, unmuteUserEndpoint } from "./muted-users.js";
import { addAlertWordsEndpoint, listAlertWordsEndpoint, removeAlertWordsEndpoint } from "./alert-words.js";
import { getUserStatusEndpoint, updateOwnStatusEndpoint, updateStatusForUserEndpoint } from "./user-status.js";
import { removeProfileData, updateProfileData } from "./profile-data.js";
import { deleteAvatarEndpoint, uploadAvatarEndpoint } from "./avatar.js";

export const USER_ENDPOINTS: Endpoint[] = [
  getUsers,
  createUser,
  getOwnUser,
  deactivateOwnUser,
  getUser,
  updateUser,
  deactivateUser,
  reactivateUser,
  updateOwnStatusEndpoint,
  updateStatusForUserEndpoint,
  getUserStatusEndpoint,
  muteUserEndpoint,
  unmuteUserEndpoint,
  listAlertWordsEndpoint,
  addAlertWordsEndpoint,
  removeAlertWordsEndpoint,
  updateProfileData,
  removeProfileData,
  uploadAvatarEndpoint,
  deleteAvatarEndpoint,
];
