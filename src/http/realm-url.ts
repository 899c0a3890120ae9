/**
 * @module http/realm-url
 * A realm's own URL (Zulip's realm.url): the server's public base URL, with the
 * realm's subdomain in front of the host for realms other than the root one. Links
 * in mail (invitations, email changes) point here.
 */
import type { Realm } from "../engine/index.js";
import type { ServerInfo } from "./endpoint.js";

export function realmUrl(server: ServerInfo, realm: Realm): string {
  const url = new URL(server.baseUrl);
  if (realm.subdomain !== "") url.hostname = `${realm.subdomain}.${url.hostname}`;
  return url.origin;
}
