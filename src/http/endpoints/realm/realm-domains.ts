/**
 * @module http/endpoints/realm/realm-domains
 * The organization's email domains — https://zulip.com/help/restrict-account-creation
 * (Zulip documents these routes only in its web app): GET /realm/domains for every
 * user, POST /realm/domains, PATCH and DELETE /realm/domains/{domain} for owners. The
 * rules live in the engine (actions/realm-domains.ts).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { realmDomainToWire } from "../../../wire/realm-domain.js";

const DOMAIN_IS_A_NAME =
  "a domain is a name in the caller's own realm: another realm's domain is 'No entry found' exactly like one " +
  "never added (test/http/realm-domains.test.ts)";

export const listRealmDomains = defineEndpoint({
  method: "GET",
  path: "/realm/domains",
  auth: "user",
  params: {},
  handler(ctx) {
    return { domains: ctx.store.realmDomains(ctx.user.id).map(realmDomainToWire) };
  },
});

export const addRealmDomain = defineEndpoint({
  method: "POST",
  path: "/realm/domains",
  auth: "user",
  // Zulip bounds nothing before its 255-character check; 1000 keeps the strip and checks cheap.
  params: { domain: p.str({ maxLength: 1000 }), allow_subdomains: p.bool() },
  testing: { notRefs: { domain: DOMAIN_IS_A_NAME } },
  handler(ctx, input) {
    const added = ctx.store.addRealmDomain(ctx.user.id, input.domain, input.allow_subdomains);
    return { new_domain: [added.id, added.domain] };
  },
});

export const changeRealmDomain = defineEndpoint({
  method: "PATCH",
  path: "/realm/domains/:domain",
  auth: "user",
  params: { allow_subdomains: p.bool() },
  testing: { notRefs: { domain: DOMAIN_IS_A_NAME } },
  handler(ctx, input) {
    ctx.store.changeRealmDomain(ctx.user.id, ctx.pathParams["domain"] ?? "", input.allow_subdomains);
    return {};
  },
});

export const removeRealmDomain = defineEndpoint({
  method: "DELETE",
  path: "/realm/domains/:domain",
  auth: "user",
  params: {},
  testing: { notRefs: { domain: DOMAIN_IS_A_NAME } },
  handler(ctx) {
    ctx.store.removeRealmDomain(ctx.user.id, ctx.pathParams["domain"] ?? "");
    return {};
  },
});
