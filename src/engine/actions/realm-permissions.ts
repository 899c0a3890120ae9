/**
 * @module actions/realm-permissions
 * Zulip's user_has_permission_for_group_setting for the realm's permission settings
 * that PATCH /realm stores (settings/realm-settings' REALM_GROUP_SETTINGS).
 */
import { isAllowedBy } from "../access.js";
import { REALM_GROUP_SETTINGS, type RealmGroupSettingName } from "../settings/realm-settings.js";
import type { StoreState } from "../state.js";
import { ROLE, type User } from "../types.js";
import { realmGroupSettings } from "./realm-settings.js";

/** Guests never pass a setting that may not name role:everyone, whatever its value. */
export function hasRealmPermission(state: StoreState, user: User, setting: RealmGroupSettingName): boolean {
  if (!user.isActive) return false;
  if (!REALM_GROUP_SETTINGS[setting].allowEveryone && user.role === ROLE.GUEST) return false;
  return isAllowedBy(state, realmGroupSettings(state, user.realmId)[setting], user);
}
