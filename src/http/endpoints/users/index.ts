/**
 * @module http/endpoints/users
 * User endpoints: list users, own user, one user by ID or email, update a user.
 */
import type { Endpoint } from "../../endpoint.js";
import getOwnUser from "./get-own-user.js";
import getUser from "./get-user.js";
import getUsers from "./get-users.js";
import updateUser from "./update-user.js";

export const USER_ENDPOINTS: Endpoint[] = [getUsers, getOwnUser, getUser, updateUser];
