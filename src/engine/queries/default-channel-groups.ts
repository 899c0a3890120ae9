/**
 * @module queries/default-channel-groups
 * A realm's default channel groups as Zulip lists them (by name), apart from the actions
 * that change them so that role changes (actions/users) can read them without an import
 * circle through the channel lookups.
 */
import type { DefaultChannelGroup, Realm } from "../types.js";

export function defaultChannelGroupsOf(realm: Realm): readonly DefaultChannelGroup[] {
  return [...(realm.defaultChannelGroups ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
