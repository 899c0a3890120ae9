/**
 * @module http/pages/join-limits
 * Limits on POST /join/KEY/, the one unauthenticated route that costs a password
 * hash and creates accounts. Every submission takes a token from its client
 * address's bucket (refused before anything is looked at); a form that passed every
 * check, and so will be hashed and may create an account, also takes one from its
 * link's bucket. Junk posts cannot use up a link's budget, so whoever floods a link
 * to block others must create accounts the administrators can see.
 */
import { RateLimiter, type RateLimitConfig } from "../rate-limit.js";

export interface JoinLimits {
  readonly byAddress: RateLimitConfig;
  readonly byLink: RateLimitConfig;
}

/**
 * Join submissions per client address. Zulip mails a confirmation before each signup
 * and limits that to 5 per address per day ("sends_email_by_ip"); here the form is
 * the whole signup, and people behind one NAT may onboard together, so it is looser:
 * 20 per hour, refilled one every 3 minutes.
 */
export const DEFAULT_JOIN_LIMIT_BY_ADDRESS: RateLimitConfig = { requests: 20, windowSeconds: 3600 };
/** Complete join forms per link: a reusable link may onboard a team at once, 60 per hour. */
export const DEFAULT_JOIN_LIMIT_BY_LINK: RateLimitConfig = { requests: 60, windowSeconds: 3600 };

export const DEFAULT_JOIN_LIMITS: JoinLimits = {
  byAddress: DEFAULT_JOIN_LIMIT_BY_ADDRESS,
  byLink: DEFAULT_JOIN_LIMIT_BY_LINK,
};

export class JoinGuard {
  readonly #byAddress: RateLimiter | null;
  readonly #byLink: RateLimiter | null;

  constructor(byAddress: RateLimiter | null, byLink: RateLimiter | null) {
    this.#byAddress = byAddress;
    this.#byLink = byLink;
  }

  static limited(limits: JoinLimits): JoinGuard {
    return new JoinGuard(new RateLimiter(limits.byAddress), new RateLimiter(limits.byLink));
  }

  static link(realmId: number, key: string): string {
    return `${realmId}:${key}`;
  }

  /** A submission from `address`: 0 when admitted (a token taken), else seconds to wait. */
  admitSubmission(address: string): number {
    const decision = this.#byAddress?.take(address);
    return decision === undefined || decision.allowed ? 0 : decision.retryAfter;
  }

  /** A complete form for `link`, about to be hashed: 0 when admitted, else seconds to wait. */
  admitAccount(link: string): number {
    const decision = this.#byLink?.take(link);
    return decision === undefined || decision.allowed ? 0 : decision.retryAfter;
  }

  /** The hash was refused (the pool was full): the link's token goes back. */
  refundAccount(link: string): void {
    this.#byLink?.refund(link);
  }
}
