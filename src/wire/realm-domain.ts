/**
 * @module wire/realm-domain
 * Zulip's realm domain object (GET /realm/domains, register's realm_domains).
 */
import type { RealmDomain } from "../engine/index.js";

export function realmDomainToWire(d: RealmDomain): { domain: string; allow_subdomains: boolean } {
  return { domain: d.domain, allow_subdomains: d.allowSubdomains };
}
