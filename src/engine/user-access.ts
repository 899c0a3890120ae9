/**
 * @module user-access
 * Zulip's limited guests (can_access_all_users_group, zerver/lib/users.py): a guest
 * outside the realm's setting sees only themselves, every bot, the active subscribers
 * of the channels they are subscribed to, and the participants of their direct-message
 * conversations (Zulip counts a conversation as a subscription of its members; deactivated
 * participants included). Everyone else is "inaccessible": shown as an "Unknown user"
 * placeholder or left out, refused by ID, and kept out of that user's events and presence.
 *
 * The set is computed once per guest and kept until a change set names a kind it reads
 * (realm settings, users, groups, subscriptions) or the guest's `dm` bitmap moves.
 */
import { isAllowedBy } from "./access.js";
import type { AccessReader, UserAccessReader } from "./directory.js";
import type { ChangeSet } from "./events/change-set.js";
import { key } from "./index/keys.js";
import type { User } from "./types.js";
import { ROLE } from "./types.js";

/** Zulip's UserProfile.INACCESSIBLE_USER_NAME. */
export const INACCESSIBLE_USER_NAME = "Unknown user";

interface Entry {
  /** Version of the guest's `dm` bitmap the set was computed from. */
  readonly dmVersion: number;
  readonly ids: ReadonlySet<number>;
}

/** Per guest, the users they may see; dropped by the change sets that can alter it. */
export class AccessibleUsers {
  readonly #entries = new Map<number, Entry>();

  get(viewerId: number, dmVersion: number): ReadonlySet<number> | undefined {
    const entry = this.#entries.get(viewerId);
    return entry !== undefined && entry.dmVersion === dmVersion ? entry.ids : undefined;
  }

  set(viewerId: number, dmVersion: number, ids: ReadonlySet<number>): void {
    this.#entries.set(viewerId, { dmVersion, ids });
  }

  /** Subscriptions, roles, activity and the realm's setting decide the sets; messages only through `dm`. */
  forgetChanged(changes: ChangeSet): void {
    if (
      changes.everything ||
      changes.realm.size > 0 ||
      changes.user.size > 0 ||
      changes.group.size > 0 ||
      changes.subscription.size > 0 ||
      changes.conversation.size > 0
    )
      this.#entries.clear();
  }

  keys(): Iterable<number> {
    return this.#entries.keys();
  }

  clear(): void {
    this.#entries.clear();
  }
}

/**
 * Zulip's `not check_user_can_access_all_users`: a guest whom the realm's
 * can_access_all_users_group leaves out. Only guests can be limited (the setting only
 * takes role:everyone or role:members).
 */
export function isLimitedGuest(state: AccessReader, viewer: User): boolean {
  if (viewer.role !== ROLE.GUEST) return false;
  const setting = state.realmDirectory.get(viewer.realmId)?.groupSettings?.canAccessAllUsersGroup;
  return setting !== undefined && !isAllowedBy(state, setting, viewer);
}

/**
 * The human users a limited guest may see (themselves included; bots are always
 * visible and not listed); null when the viewer sees everyone.
 */
export function accessibleUserIds(state: UserAccessReader, viewer: User): ReadonlySet<number> | null {
  if (!isLimitedGuest(state, viewer)) return null;
  const dmKey = key.userFlag(viewer.id, "dm");
  const dmVersion = state.bitmaps.version(dmKey);
  const kept = state.accessibleUsers.get(viewer.id, dmVersion);
  if (kept !== undefined) return kept;
  const ids = new Set<number>([viewer.id]);
  for (const sub of state.channelDirectory.subscriptionsOf(viewer.id)) {
    if (!sub.active) continue;
    for (const id of state.activeSubscriberList(sub.channelId)) ids.add(id);
  }
  const seen = new Set<number>();
  for (const messageId of state.bitmaps.get(dmKey)) {
    const where = state.metaOf(messageId)?.[0];
    if (where === undefined || where >= 0 || seen.has(-where)) continue;
    seen.add(-where);
    for (const id of state.conversations.get(-where)?.userIds ?? []) ids.add(id);
  }
  state.accessibleUsers.set(viewer.id, dmVersion, ids);
  return ids;
}

/** Zulip's check_can_access_user. */
export function canAccessUser(state: UserAccessReader, viewer: User, target: User): boolean {
  if (viewer.realmId !== target.realmId) return false;
  if (target.isBot || viewer.id === target.id) return true;
  const ids = accessibleUserIds(state, viewer);
  return ids === null || ids.has(target.id);
}
