/** @module index/entities/directories The narrow read interfaces of directory.ts, over the entity registry. */
import type { ChannelDirectory, GroupDirectory, RealmDirectory, UserDirectory } from "../../directory.js";
import { channelKey, emailKey } from "../keys.js";
import type { EntityRegistry } from "./registry.js";

export interface Directories {
  readonly users: UserDirectory;
  readonly channels: ChannelDirectory;
  readonly groups: GroupDirectory;
  readonly realms: RealmDirectory;
}

export function directoriesOf(entities: EntityRegistry): Directories {
  const { users, channels, subscriptions, groups, realms } = entities;
  return {
    users: {
      get: (id) => users.byId.get(id),
      byEmail: (realmId, email) => {
        const id = users.byEmail.get(emailKey(realmId, email));
        return id === undefined ? undefined : users.byId.get(id);
      },
      ofRealm: (realmId) => users.ofRealm(realmId),
      botsOf: (realmId) => users.botsOf(realmId),
    },
    channels: {
      get: (id) => channels.byId.get(id),
      byName: (realmId, name) => {
        const id = channels.byName.get(channelKey(realmId, name));
        return id === undefined ? undefined : channels.byId.get(id);
      },
      subscription: (userId, channelId) => subscriptions.byUser.get(userId)?.get(channelId),
      isSubscribed: (userId, channelId) => subscriptions.subscribers.get(channelId)?.has(userId) ?? false,
      subscriptionsOf: (userId) => subscriptions.byUser.get(userId)?.values() ?? [],
      all: () => channels.byId.values(),
    },
    groups: { get: (id) => groups.byId.get(id), all: () => groups.byId.values() },
    realms: { get: (id) => realms.byId.get(id) },
  };
}
