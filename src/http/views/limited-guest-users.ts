/**
 * @module http/views/limited-guest-users
 * The realm's user list as a limited guest sees it (Zulip's get_users_for_api with
 * get_user_dicts_in_realm): the users they may see, then an "Unknown user" placeholder
 * for each other one, or nothing for them when the client declared
 * `user_list_incomplete`. Built per request: limited guests are few, and their lists
 * differ from everyone else's, so the shared list cache does not hold them.
 */
import type { Realm, Store, User } from "../../engine/index.js";
import { inaccessibleUserToWire, userToWire, type UserViewOptions } from "../../wire/user.js";
import type { ServerInfo } from "../endpoint.js";
import { realmUrl } from "../realm-url.js";

export interface GuestUserLists {
  readonly all: unknown[];
  readonly active: unknown[];
  readonly inactive: unknown[];
}

/** Zulip's get_fake_email_domain: the realm's host, for placeholder emails. */
export function placeholderEmailDomain(server: ServerInfo, realm: Realm): string {
  return new URL(realmUrl(server, realm)).host;
}

export function limitedGuestUserLists(
  store: Store,
  realm: Realm,
  server: ServerInfo,
  accessible: ReadonlySet<number>,
  options: UserViewOptions & { readonly placeholders: boolean },
): GuestUserLists {
  const all: unknown[] = [];
  const active: unknown[] = [];
  const inactive: unknown[] = [];
  const hidden: User[] = [];
  for (const user of store.realmUsers(realm.id)) {
    if (!user.isBot && !accessible.has(user.id)) {
      hidden.push(user);
      continue;
    }
    const json = userToWire(user, options);
    all.push(json);
    (user.isActive ? active : inactive).push(json);
  }
  if (options.placeholders) {
    const domain = placeholderEmailDomain(server, realm);
    for (const user of hidden) {
      // A placeholder is always an active member: whether the user is deactivated is hidden too.
      const json = inaccessibleUserToWire(user.id, domain);
      all.push(json);
      active.push(json);
    }
  }
  return { all, active, inactive };
}

/** The message view option that hides senders from a limited guest; nothing for everyone else. */
export function hiddenSendersFor(
  store: Store,
  viewer: User,
  emailDomain: () => string,
): { hiddenSenders?: { has: (senderId: number) => boolean; emailDomain: string } } {
  if (store.accessibleUserIds(viewer.id) === null) return {};
  return {
    hiddenSenders: {
      has: (senderId) => {
        const sender = store.findUser(senderId);
        return sender !== undefined && !store.canAccessUser(viewer.id, sender);
      },
      emailDomain: emailDomain(),
    },
  };
}
