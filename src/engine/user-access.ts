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
import type { AccessEntry, AccessReader, UserAccessReader } from "./directory.js";
import type { ChangeSet } from "./events/change-set.js";
import { key } from "./index/keys.js";
import type { User } from "./types.js";
import { ROLE } from "./types.js";

/** Zulip's UserProfile.INACCESSIBLE_USER_NAME. */
export const INACCESSIBLE_USER_NAME = "Unknown user";

/** Per guest, the users they may see; dropped by the change sets that can alter it. */
export class AccessibleUsers {
  readonly #entries = new Map<number, AccessEntry>();

  get(viewerId: number, dmVersion: number): AccessEntry | undefined {
    const entry = this.#entries.get(viewerId);
    return entry !== undefined && entry.dmVersion === dmVersion ? entry : undefined;
  }

  set(viewerId: number, entry: AccessEntry): void {
    this.#entries.set(viewerId, entry);
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
  return isLimitedGuest(state, viewer) ? entryOf(state, viewer).ids : null;
}

function entryOf(state: UserAccessReader, viewer: User): AccessEntry {
  const dmKey = key.userFlag(viewer.id, "dm");
  const dmVersion = state.bitmaps.version(dmKey);
  const kept = state.accessibleUsers.get(viewer.id, dmVersion);
  if (kept !== undefined) return kept;
  const dmPartners = new Set<number>();
  for (const ids of conversationPartners(state, viewer.id)) for (const id of ids) dmPartners.add(id);
  const entry: AccessEntry = { dmVersion, ids: collect(state, viewer, dmPartners, NO_CHANGE), dmPartners };
  state.accessibleUsers.set(viewer.id, entry);
  return entry;
}

/** The participants of each of the user's direct-message conversations (the user included), once each. */
export function* conversationPartners(state: UserAccessReader, userId: number): Generator<readonly number[]> {
  const seen = new Set<number>();
  for (const messageId of state.bitmaps.get(key.userFlag(userId, "dm"))) {
    const where = state.metaOf(messageId)?.[0];
    if (where === undefined || where >= 0 || seen.has(-where)) continue;
    seen.add(-where);
    yield state.conversations.get(-where)?.userIds ?? [];
  }
}

/** Whether the realm's can_access_all_users_group leaves guests out (it is role:members, not role:everyone). */
export function isAccessRestricted(state: AccessReader, realmId: number): boolean {
  const setting = state.realmDirectory.get(realmId)?.groupSettings?.canAccessAllUsersGroup;
  if (setting === undefined) return false;
  return typeof setting !== "number" || state.groupDirectory.get(setting)?.systemRole !== "role:everyone";
}

/** A subscription a write starts (`active`) or ends, not yet in the state it reads. */
export interface SubscriptionChange {
  readonly userId: number;
  readonly channelId: number;
  readonly active: boolean;
}

/** A write's subscription changes, by channel and by user: true for a start, false for an end. */
interface Delta {
  readonly byChannel: ReadonlyMap<number, ReadonlyMap<number, boolean>>;
  readonly byUser: ReadonlyMap<number, ReadonlyMap<number, boolean>>;
}

const NO_CHANGE: Delta = { byChannel: new Map(), byUser: new Map() };

function deltaOf(changes: readonly SubscriptionChange[]): Delta {
  const byChannel = new Map<number, Map<number, boolean>>();
  const byUser = new Map<number, Map<number, boolean>>();
  for (const c of changes) {
    let users = byChannel.get(c.channelId);
    if (users === undefined) byChannel.set(c.channelId, (users = new Map()));
    users.set(c.userId, c.active);
    let channels = byUser.get(c.userId);
    if (channels === undefined) byUser.set(c.userId, (channels = new Map()));
    channels.set(c.channelId, c.active);
  }
  return { byChannel, byUser };
}

/** Self, the active subscribers of the viewer's channels as `delta` leaves them, and the DM partners. */
function collect(state: UserAccessReader, viewer: User, dmPartners: ReadonlySet<number>, delta: Delta): Set<number> {
  const ids = new Set<number>([viewer.id]);
  const channels = new Set<number>();
  for (const sub of state.channelDirectory.subscriptionsOf(viewer.id)) if (sub.active) channels.add(sub.channelId);
  for (const [channelId, on] of delta.byUser.get(viewer.id) ?? []) {
    if (on) channels.add(channelId);
    else channels.delete(channelId);
  }
  for (const channelId of channels) {
    const changed = delta.byChannel.get(channelId);
    for (const id of state.activeSubscriberList(channelId)) if (changed?.get(id) !== false) ids.add(id);
    for (const [id, on] of changed ?? []) if (on && state.userDirectory.get(id)?.isActive === true) ids.add(id);
  }
  for (const id of dmPartners) ids.add(id);
  return ids;
}

/**
 * What a write's subscription changes do to limited guests' access (Zulip's
 * send_user_creation_events_on_adding_subscriptions and
 * send_user_remove_events_on_removing_subscriptions): per human user, the guests who
 * gain access to them and those who lose it. Read before the write's state is applied;
 * the guests concerned are those of the changed channels and the changed users.
 */
export function accessChanges(
  state: UserAccessReader,
  changes: readonly SubscriptionChange[],
): { readonly gained: Map<number, number[]>; readonly lost: Map<number, number[]> } {
  const gained = new Map<number, number[]>();
  const lost = new Map<number, number[]>();
  const realmId = changes.length > 0 ? state.userDirectory.get(changes[0]!.userId)?.realmId : undefined;
  // Where everyone sees everyone (most realms), nothing to walk.
  if (realmId === undefined || !isAccessRestricted(state, realmId)) return { gained, lost };
  const delta = deltaOf(changes);
  const guests = new Set<number>(delta.byUser.keys());
  for (const channelId of delta.byChannel.keys())
    for (const id of state.activeSubscriberList(channelId)) guests.add(id);
  const human = (id: number) => state.userDirectory.get(id)?.isBot === false;
  for (const guestId of guests) {
    const guest = state.userDirectory.get(guestId);
    if (guest === undefined || !guest.isActive || !isLimitedGuest(state, guest)) continue;
    const entry = entryOf(state, guest);
    const after = collect(state, guest, entry.dmPartners, delta);
    for (const id of after) if (!entry.ids.has(id) && human(id)) push(gained, id, guestId);
    for (const id of entry.ids) if (!after.has(id) && human(id)) push(lost, id, guestId);
  }
  return { gained, lost };
}

function push(map: Map<number, number[]>, key: number, value: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** Zulip's check_can_access_user. */
export function canAccessUser(state: UserAccessReader, viewer: User, target: User): boolean {
  if (viewer.realmId !== target.realmId) return false;
  if (target.isBot || viewer.id === target.id) return true;
  const ids = accessibleUserIds(state, viewer);
  return ids === null || ids.has(target.id);
}
