/** @module wire/realm-url The URL a realm is reached at, as links in notifications, mail and bot payloads name it. */
import type { Realm } from "../engine/index.js";

/** The realm's URL: the server's base URL, on the realm's subdomain when it has one (an origin, no path). */
export function realmUrl(baseUrl: string, realm: Pick<Realm, "subdomain">): string {
  const url = new URL(baseUrl);
  if (realm.subdomain !== "") url.hostname = `${realm.subdomain}.${url.hostname}`;
  return url.origin;
}
