/**
 * @module accounts/disposable-domains
 * Zulip's is_disposable_domain: the domains of throwaway mail services, from the
 * disposable-email-domains project's blocklist (Zulip reads it through the Python
 * package of that project; disposable-email-domains-js ships the same list to npm).
 * The set is built on first use: ~9,000 domains.
 */
import { disposableEmailBlocklist } from "disposable-email-domains-js";

let domains: ReadonlySet<string> | null = null;

export function isDisposableDomain(domain: string): boolean {
  domains ??= new Set(disposableEmailBlocklist().map((d) => d.toLowerCase()));
  return domains.has(domain.toLowerCase());
}
