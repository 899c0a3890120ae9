/**
 * @module actions/realm-domains
 * The realm's email domains (Zulip's RealmDomain; GET/POST /realm/domains, PATCH and
 * DELETE /realm/domains/{domain}): everyone reads them, only owners change them (Zulip's
 * require_realm_owner). Each change sends `realm_domains` add/change/remove to the
 * realm's active users. Removing the last domain also turns emails_restricted_to_domains
 * off, as Zulip does (the restriction would otherwise let nobody in).
 */
import { realmAudience } from "../events/audience.js";
import { BadRequestError, OrganizationOwnerRequiredError } from "../errors.js";
import { codePointPrefix } from "../limits.js";
import type { StoreState } from "../state.js";
import { ROLE, type RealmDomain, type User } from "../types.js";
import { requireActiveUser } from "./lookups.js";
import { isDisposableDomain } from "../accounts/disposable-domains.js";

/** The realm's domains in the order they were added. */
export function realmDomains(state: StoreState, realmId: number): RealmDomain[] {
  return [...state.realmDomains.values()].filter((d) => d.realmId === realmId).sort((a, b) => a.id - b.id);
}

function requireOwner(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (actor.role !== ROLE.OWNER) throw new OrganizationOwnerRequiredError();
  return actor;
}

/** Zulip's validate_domain: the reason a (stripped, lower-cased) domain is refused, or null. */
export function domainRefusal(domain: string): string | null {
  if (domain.length === 0) return "Domain can't be empty.";
  if (!domain.includes(".")) return "Domain must have at least one dot (.)";
  if (domain.length > 255) return "Domain is too long";
  if (domain.startsWith(".") || domain.endsWith(".")) return "Domain cannot start or end with a dot (.)";
  for (const label of domain.split(".")) {
    if (label === "") return "Consecutive '.' are not allowed.";
    if (label.startsWith("-") || label.endsWith("-")) return "Subdomains cannot start or end with a '-'.";
    if (!/^[a-z0-9-]*$/.test(label)) return "Domain can only have letters, numbers, '.' and '-'s.";
  }
  return null;
}

/** A domain as refusals quote it: at most 100 characters of the input. */
function quoted(domain: string): string {
  return codePointPrefix(domain, 100);
}

function findDomain(state: StoreState, realmId: number, domain: string): RealmDomain {
  for (const d of state.realmDomains.values()) if (d.realmId === realmId && d.domain === domain) return d;
  throw new BadRequestError(`No entry found for domain ${quoted(domain)}.`);
}

/** POST /realm/domains: the domain is stripped and lower-cased before it is checked, as in Zulip. */
export function addRealmDomain(
  state: StoreState,
  actorId: number,
  rawDomain: string,
  allowSubdomains: boolean,
): RealmDomain {
  const actor = requireOwner(state, actorId);
  // Python's str.strip() and str.lower() (Unicode whitespace and case).
  const domain = rawDomain.trim().toLowerCase();
  const refusal = domainRefusal(domain);
  if (refusal !== null) throw new BadRequestError(`Invalid domain: ${refusal}`);
  if (realmDomains(state, actor.realmId).some((d) => d.domain === domain))
    throw new BadRequestError(`The domain ${quoted(domain)} is already a part of your organization.`);
  return state.write((ctx) => {
    const record: RealmDomain = {
      id: state.allocate("nextRealmDomainId"),
      realmId: actor.realmId,
      domain,
      allowSubdomains,
    };
    state.tables.realmDomains.putSync(record.id, record);
    ctx.afterCommit(() => state.realmDomains.set(record.id, record));
    ctx.emit({ type: "realm_domains", op: "add", realmId: actor.realmId, domain, allowSubdomains }, () =>
      realmAudience(state, actor.realmId),
    );
    return record;
  });
}

/** PATCH /realm/domains/{domain}: the domain as stored (no case folding, as Zulip's lookup). */
export function changeRealmDomain(state: StoreState, actorId: number, domain: string, allowSubdomains: boolean): void {
  const actor = requireOwner(state, actorId);
  const record = findDomain(state, actor.realmId, domain);
  state.write((ctx) => {
    const next: RealmDomain = { ...record, allowSubdomains };
    state.tables.realmDomains.putSync(next.id, next);
    ctx.afterCommit(() => state.realmDomains.set(next.id, next));
    // Zulip sends the event even when the value did not change.
    ctx.emit({ type: "realm_domains", op: "change", realmId: actor.realmId, domain, allowSubdomains }, () =>
      realmAudience(state, actor.realmId),
    );
  });
}

/** DELETE /realm/domains/{domain}. */
export function removeRealmDomain(state: StoreState, actorId: number, domain: string): void {
  const actor = requireOwner(state, actorId);
  const record = findDomain(state, actor.realmId, domain);
  const realm = state.realms.get(actor.realmId);
  if (realm === undefined) throw new BadRequestError("Invalid realm");
  const last = realmDomains(state, actor.realmId).length === 1;
  const unrestrict = last && realm.properties?.emailsRestrictedToDomains === true;
  state.write((ctx) => {
    state.tables.realmDomains.removeSync(record.id);
    ctx.afterCommit(() => state.realmDomains.delete(record.id));
    const audience = () => realmAudience(state, actor.realmId);
    if (unrestrict) {
      const next = { ...realm, properties: { ...realm.properties, emailsRestrictedToDomains: false } };
      state.tables.realms.putSync(realm.id, next);
      ctx.afterCommit(() => state.indexRealm(next));
      ctx.emit(
        { type: "realm", op: "update_property", realm: next, property: "emails_restricted_to_domains" },
        audience,
      );
    }
    ctx.emit(
      { type: "realm_domains", op: "remove", realmId: actor.realmId, domain, allowSubdomains: record.allowSubdomains },
      audience,
    );
  });
}

/**
 * Zulip's email_allowed_for_realm (get_realm_email_validator): why an address may not
 * join, or null. A realm restricted to its domains refuses "plus" (a `+` before the
 * `@`) and "domain" (not at one of the realm's domains nor under one that allows
 * subdomains); any other realm refuses "disposable" (a throwaway mail service's domain)
 * while disallow_disposable_email_addresses is on, as it is by default.
 */
export function emailDomainRefusal(
  state: StoreState,
  realmId: number,
  email: string,
): "plus" | "domain" | "disposable" | null {
  const realm = state.realms.get(realmId);
  const at = email.lastIndexOf("@");
  if (realm?.properties?.emailsRestrictedToDomains !== true) {
    const disallow = realm?.properties?.disallowDisposableEmailAddresses ?? true;
    return disallow && isDisposableDomain(email.slice(at + 1)) ? "disposable" : null;
  }
  if (email.slice(0, Math.max(0, at)).includes("+")) return "plus";
  let domain = email.slice(at + 1).toLowerCase();
  const domains = realmDomains(state, realmId);
  if (domains.some((d) => d.domain === domain)) return null;
  while (domain.length > 0) {
    const dot = domain.indexOf(".");
    domain = dot === -1 ? "" : domain.slice(dot + 1);
    if (domains.some((d) => d.allowSubdomains && d.domain === domain)) return null;
  }
  return "domain";
}
