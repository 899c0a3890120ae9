/**
 * @module http/endpoints/users/lookup
 * Zulip's access_user_by_id / access_user_by_email for the user endpoints: a user of
 * the caller's realm (active or deactivated, bots included) named by a path segment,
 * or "No such user" (400 BAD_REQUEST). A segment of digits is a user ID, anything
 * else an email (API or delivery email).
 */
import { BadRequestError, type Store, type User } from "../../../engine/index.js";

export function userByPathSegment(store: Store, realmId: number, segment: string): User {
  let user: User | undefined;
  if (/^\d+$/.test(segment)) {
    const id = Number(segment);
    user = Number.isSafeInteger(id) ? store.findUser(id) : undefined;
  } else {
    user = store.findUserByEmail(realmId, segment);
  }
  if (!user || user.realmId !== realmId) throw new BadRequestError("No such user");
  return user;
}
