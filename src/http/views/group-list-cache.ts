/**
 * @module http/views/group-list-cache
 * The realm's user groups (register's realm_user_groups, GET /user_groups) as ready
 * JSON: a realm's list is the same for every member, and with 10,000 users its system
 * groups alone are ~200 KB of member IDs that were copied into objects and encoded
 * again for every register. The list depends on group records, on users' roles and
 * activity (system groups' members) and on the realm, and on nothing else a request
 * can see; a change to any of those drops the cache of every realm. With `enabled`
 * false nothing is kept.
 */
import {
  DerivedCache,
  onlyFieldsChanged,
  type Dependencies,
  type FieldOf,
  type Store,
  type User,
} from "../../engine/index.js";
import { RawJson } from "../respond.js";
import { groupToWire } from "../../wire/group.js";

/** User fields no group list depends on (system groups follow roles and activity). */
const UNSHOWN_USER_FIELDS: ReadonlySet<FieldOf<"user">> = new Set([
  "apiKey",
  "canChangeUserEmails",
  "canCreateUsers",
  "botConfig",
] as const);

export class GroupListCache extends DerivedCache {
  readonly #store: Store;
  readonly #enabled: boolean;
  /** `${realmId}:${includeDeactivated}` -> the JSON array. */
  readonly #entries = new Map<string, Buffer>();

  protected readonly dependencies: Dependencies = {
    group: "clear",
    user: (users) => {
      if (!onlyFieldsChanged(users, UNSHOWN_USER_FIELDS)) this.clear();
    },
    realm: "clear",
    realmDefaults: "ignore",
    defaultChannels: "ignore",
    invites: "ignore",
    playgrounds: "ignore",
    linkifiers: "ignore",
    channelFolder: "ignore",
    realmDomains: "ignore",
    profileFields: "ignore",
    userSettings: "ignore",
    password: "ignore",
    presence: "ignore",
    emailChange: "ignore",
    channel: "ignore",
    conversation: "ignore",
    scheduledMessage: "ignore",
    realmEmoji: "ignore",
    draft: "ignore",
    savedSnippet: "ignore",
    userStatus: "ignore",
    mutedUsers: "ignore",
    alertWords: "ignore",
    botStorage: "ignore",
    legacyPushTokens: "ignore",
    webSession: "ignore",
    topic: "ignore",
    navigationViews: "ignore",
    device: "ignore",
    attachment: "ignore",
    mail: "ignore",
    missedEmail: "ignore",
    pushItem: "ignore",
    webhookItem: "ignore",
    subscription: "ignore",
    userTopic: "ignore",
    message: "ignore",
    flags: "ignore",
  };

  constructor(store: Store, enabled = true) {
    super(store);
    this.#store = store;
    this.#enabled = enabled;
  }

  /** The user's realm's groups by ID, as groupToWire objects; deactivated ones only when asked. */
  list(viewer: User, includeDeactivated: boolean): RawJson {
    const k = `${viewer.realmId}:${includeDeactivated ? 1 : 0}`;
    const keep = this.#enabled && !this.disposed;
    let entry = keep ? this.#entries.get(k) : undefined;
    if (entry === undefined) {
      const groups = this.#store
        .userGroups(viewer.id, includeDeactivated)
        .map((g) => groupToWire(this.#store, g.group, g.members));
      entry = Buffer.from(JSON.stringify(groups));
      if (keep) this.#entries.set(k, entry);
    }
    return new RawJson([entry]);
  }

  protected clear(): void {
    this.#entries.clear();
  }
}
