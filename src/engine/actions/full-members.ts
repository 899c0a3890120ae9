/**
 * @module actions/full-members
 * Zulip's role:fullmembers over time: members whose account is waiting_period_threshold
 * days old join it. Membership is evaluated at the realm's last promotion pass
 * (Realm.fullMembersAsOf), so it changes only where an event says so: when an owner
 * changes the threshold (Zulip's update_users_in_full_members_system_group) and when
 * promoteNewFullMembers moves the pass on (Zulip's daily promote_new_full_members).
 */
import { fullMembersAsOf, isFullMember, waitingPeriodDays } from "../access.js";
import { realmAudience } from "../events/audience.js";
import type { StoreState, WriteContext } from "../state.js";
import { ROLE, type Realm } from "../types.js";

/**
 * Emits user_group remove_members then add_members (Zulip's order) for the members
 * whose full membership differs between the realm records `before` and `after`.
 * Only role:member users change: moderators and above are always in, guests never.
 */
export function emitFullMemberChanges(state: StoreState, ctx: WriteContext, before: Realm, after: Realm): number {
  const groupId = state.systemGroupIdOf(after.id, "role:fullmembers");
  if (groupId === undefined) return 0;
  const removed: number[] = [];
  const added: number[] = [];
  for (const id of state.usersOfRealm(after.id)) {
    const user = state.users.get(id);
    if (!user?.isActive || user.role !== ROLE.MEMBER) continue;
    const was = isFullMember(user, waitingPeriodDays(before), fullMembersAsOf(before));
    const is = isFullMember(user, waitingPeriodDays(after), fullMembersAsOf(after));
    if (was && !is) removed.push(id);
    else if (is && !was) added.push(id);
  }
  const audience = () => realmAudience(state, after.id);
  const sorted = (ids: number[]) => ids.sort((a, b) => a - b);
  if (removed.length > 0)
    ctx.emit({ type: "user_group", op: "remove_members", groupId, userIds: sorted(removed) }, audience);
  if (added.length > 0) ctx.emit({ type: "user_group", op: "add_members", groupId, userIds: sorted(added) }, audience);
  return removed.length + added.length;
}

/**
 * Moves every realm's promotion pass with a waiting period to now: members whose
 * waiting period ended since the last pass join role:fullmembers, with events.
 * Returns how many users joined. A realm where nobody crossed is left as it was
 * (evaluating at the old pass answers the same), so idle passes write nothing.
 */
export function promoteNewFullMembers(state: StoreState): number {
  const now = state.now();
  let promoted = 0;
  for (const realm of state.realms.values()) {
    if (realm.deactivated || waitingPeriodDays(realm) === 0 || fullMembersAsOf(realm) >= now) continue;
    const next: Realm = { ...realm, fullMembersAsOf: now };
    const crossed = [...state.usersOfRealm(realm.id)].some((id) => {
      const user = state.users.get(id);
      return (
        user?.isActive === true &&
        user.role === ROLE.MEMBER &&
        !isFullMember(user, waitingPeriodDays(realm), fullMembersAsOf(realm)) &&
        isFullMember(user, waitingPeriodDays(next), now)
      );
    });
    if (!crossed) continue;
    state.write((ctx) => {
      state.tables.realms.putSync(realm.id, next);
      ctx.afterCommit(() => state.indexRealm(next));
      ctx.changed({ kind: "realm", id: realm.id, fields: ["fullMembersAsOf"] });
      promoted += emitFullMemberChanges(state, ctx, realm, next);
    });
  }
  return promoted;
}
