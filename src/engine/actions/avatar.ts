/**
 * @module actions/avatar
 * A person's own avatar (Zulip's set_avatar_backend / delete_avatar_backend and
 * do_change_avatar_fields): an uploaded image, or back to Gravatar. The image file is
 * the HTTP layer's; the user record names it (`avatarFile`) and each change bumps
 * `avatarVersion`, so clients see a new URL, with one realm_user update to everyone who
 * sees the person.
 */
import { isAdmin } from "../access.js";
import { BadRequestError } from "../errors.js";
import { userViewersAudience } from "../events/audience.js";
import type { StoreState } from "../state.js";
import type { User } from "../types.js";
import { requireActiveUser } from "./lookups.js";

/** The person, when they may change their avatar now (avatar_changes_disabled binds all but administrators). */
export function checkAvatarChange(state: StoreState, userId: number): User {
  const user = requireActiveUser(state, userId);
  const locked = state.realms.get(user.realmId)?.properties?.avatarChangesDisabled === true;
  if (locked && !isAdmin(user)) throw new BadRequestError("Avatar changes are disabled in this organization.");
  return user;
}

/** Sets the uploaded image (`fileName`) or Gravatar (null); the user as written and the file it replaced. */
export function setAvatar(
  state: StoreState,
  userId: number,
  fileName: string | null,
): { readonly user: User; readonly replaced: string | null } {
  const before = checkAvatarChange(state, userId);
  const next: User = { ...before, avatarVersion: before.avatarVersion + 1 };
  if (fileName === null) delete next.avatarFile;
  else next.avatarFile = fileName;
  return state.write((ctx) => {
    state.tables.users.putSync(next.id, next);
    ctx.afterCommit(() => state.indexUser(next));
    const everyone = () => userViewersAudience(state, next);
    ctx.emit({ type: "realm_user", op: "update", userId: next.id, changes: { avatarOf: next } }, everyone);
    return { user: next, replaced: before.avatarFile ?? null };
  });
}
