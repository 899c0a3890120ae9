/**
 * @module http/rate-limit
 * Per-user token buckets: `requests` per `windowSeconds`, refilled continuously.
 * Reports Zulip's X-RateLimit-* headers on every authenticated response.
 */
export interface RateLimitConfig {
  readonly requests: number;
  readonly windowSeconds: number;
}

/** Zulip's documented default: 200 API requests per minute per user. */
export const DEFAULT_RATE_LIMIT: RateLimitConfig = { requests: 200, windowSeconds: 60 };

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** Seconds until a request would be allowed (0 when allowed). */
  readonly retryAfter: number;
  readonly headers: readonly (readonly [string, string])[];
}

export class RateLimiter {
  readonly #buckets = new Map<number, Bucket>();
  readonly #config: RateLimitConfig;
  readonly #now: () => number;

  constructor(config: RateLimitConfig, now: () => number = () => Date.now()) {
    this.#config = config;
    this.#now = now;
  }

  take(userId: number): RateDecision {
    const { requests, windowSeconds } = this.#config;
    const ratePerMs = requests / (windowSeconds * 1000);
    const now = this.#now();
    const bucket = this.#buckets.get(userId) ?? { tokens: requests, updatedMs: now };
    bucket.tokens = Math.min(requests, bucket.tokens + (now - bucket.updatedMs) * ratePerMs);
    bucket.updatedMs = now;
    this.#buckets.set(userId, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const retryAfter = allowed ? 0 : (1 - bucket.tokens) / ratePerMs / 1000;
    const secondsToFull = (requests - bucket.tokens) / ratePerMs / 1000;
    const headers: [string, string][] = [
      ["X-RateLimit-Limit", String(requests)],
      ["X-RateLimit-Remaining", String(Math.floor(bucket.tokens))],
      ["X-RateLimit-Reset", String(Math.ceil(now / 1000 + secondsToFull))],
    ];
    return { allowed, retryAfter, headers };
  }
}
