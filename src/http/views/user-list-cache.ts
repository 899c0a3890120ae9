/**
 * @module http/views/user-list-cache
 * The realm's user lists (GET /users, register's realm_users and
 * realm_non_active_users) as ready JSON per view variant: with 10,000 users,
 * building and encoding the objects cost ~130 ms per request; a cached list is one
 * buffer copy. A changed user drops that user's JSON and every list; a changed realm
 * drops everything (both are rare). With `enabled` false nothing is kept (the
 * reference the cached server is compared with).
 */
import { DerivedCache, onlyFieldsChanged, type Dependencies, type FieldOf, type Store } from "../../engine/index.js";
import { RawJson } from "../respond.js";
import { userToWire, type UserViewOptions } from "../../wire/user.js";

/** User fields userToWire does not show. */
const UNSHOWN_USER_FIELDS: ReadonlySet<FieldOf<"user">> = new Set([
  "apiKey",
  "canChangeUserEmails",
  "canCreateUsers",
  "botConfig",
] as const);

interface Lists {
  readonly all: Buffer;
  readonly active: Buffer;
  readonly inactive: Buffer;
}

export class UserListCache extends DerivedCache {
  readonly #store: Store;
  readonly #enabled: boolean;
  /** Whole lists per realm and variant; any user change drops them. */
  readonly #entries = new Map<string, Lists>();
  /**
   * Each user's JSON per variant, kept across list rebuilds: a change to one user
   * re-encodes that user only, so the first request after it joins strings instead
   * of encoding 10,000 objects again (~100 ms).
   */
  readonly #fragments = new Map<string, Map<number, string>>();

  /** userToWire reads the user record only. */
  protected readonly dependencies: Dependencies = {
    user: (users) => {
      if (onlyFieldsChanged(users, UNSHOWN_USER_FIELDS)) return;
      for (const id of users.keys()) for (const fragments of this.#fragments.values()) fragments.delete(id);
      this.#entries.clear();
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
    group: "ignore",
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

  /** Every user of the realm; active ones; deactivated ones — each a JSON array, by ID. */
  lists(realmId: number, options: UserViewOptions): { all: RawJson; active: RawJson; inactive: RawJson } {
    const variant = `${options.clientGravatar ? 1 : 0}${options.includeCustomProfileFields ? 1 : 0}`;
    const k = `${realmId}:${variant}`;
    const keep = this.#enabled && !this.disposed;
    let entry = keep ? this.#entries.get(k) : undefined;
    if (!entry) {
      let fragments = keep ? this.#fragments.get(variant) : undefined;
      if (!fragments) {
        fragments = new Map();
        if (keep) this.#fragments.set(variant, fragments);
      }
      const all: string[] = [];
      const active: string[] = [];
      const inactive: string[] = [];
      for (const user of this.#store.realmUsers(realmId)) {
        let json = fragments.get(user.id);
        if (json === undefined) fragments.set(user.id, (json = JSON.stringify(userToWire(user, options))));
        all.push(json);
        (user.isActive ? active : inactive).push(json);
      }
      const array = (items: string[]) => Buffer.from(`[${items.join(",")}]`);
      entry = { all: array(all), active: array(active), inactive: array(inactive) };
      if (keep) this.#entries.set(k, entry);
    }
    return {
      all: new RawJson([entry.all]),
      active: new RawJson([entry.active]),
      inactive: new RawJson([entry.inactive]),
    };
  }

  protected clear(): void {
    this.#entries.clear();
    this.#fragments.clear();
  }
}
