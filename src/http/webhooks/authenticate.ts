/**
 * @module http/webhooks/authenticate
 * The account an incoming webhook request posts as: Zulip's webhook_view takes the
 * API key from the `api_key` parameter (no email), and checks it as
 * access_user_by_api_key does, in its order: the key's format, the key, the realm's
 * and the account's state, then the realm the Host names. Its errors keep their own
 * codes here (no Basic-auth decorator converts them to UNAUTHORIZED).
 *
 * Any account may post this way, as in Zulip (the integration docs ask for an
 * incoming webhook bot, whose key can do nothing else); a direct message to the
 * owner needs a bot (actions/webhooks).
 */
import { timingSafeEqual } from "node:crypto";
import {
  BadRequestError,
  LoginError,
  NoSuchRealmError,
  type Realm,
  type Store,
  type User,
} from "../../engine/index.js";
import { InvalidApiKeyError } from "../errors.js";

export function authenticateWebhook(store: Store, realm: Realm | undefined, apiKey: string): User {
  if (!realm) throw new NoSuchRealmError();
  const key = apiKey.trim();
  if (!/^[A-Za-z0-9]{32}$/.test(key)) throw new InvalidApiKeyError(true);
  const user = store.findUserByApiKey(key);
  if (!user || !timingSafeEqual(Buffer.from(user.apiKey), Buffer.from(key))) throw new InvalidApiKeyError(false);
  if (store.findRealm(user.realmId)?.deactivated !== false) throw new LoginError("realm_deactivated");
  if (!user.isActive) throw new LoginError("user_deactivated");
  if (user.realmId !== realm.id) throw new BadRequestError("Account is not associated with this subdomain");
  return user;
}
