/**
 * @module http/rate-limit
 * Token buckets per key (a user ID, or a client address for failed authentication):
 * `requests` per `windowSeconds`, refilled continuously. Reports Zulip's X-RateLimit-*
 * headers on every authenticated response.
 */
export interface RateLimitConfig {
  readonly requests: number;
  readonly windowSeconds: number;
}

/** Zulip's documented default: 200 API requests per minute per user. */
export const DEFAULT_RATE_LIMIT: RateLimitConfig = { requests: 200, windowSeconds: 60 };

/**
 * Failed authentication per client address: Zulip's "api_by_ip" rule (100 per minute),
 * the bucket Zulip uses for requests that carry no valid credentials.
 */
export const DEFAULT_AUTH_FAILURE_LIMIT: RateLimitConfig = { requests: 100, windowSeconds: 60 };

/**
 * Password attempts per account: Zulip's "authenticate_by_username" rule, 5 attempts
 * in 30 minutes (a token bucket here, refilling one attempt every 6 minutes). A
 * success forgets the account's earlier attempts, as Zulip clears its history.
 */
export const DEFAULT_LOGIN_LIMIT: RateLimitConfig = { requests: 5, windowSeconds: 1800 };

/** Bucket count above which full buckets are dropped (client addresses are unbounded). */
const SWEEP_AT = 10_000;

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
  readonly #buckets = new Map<number | string, Bucket>();
  readonly #config: RateLimitConfig;
  readonly #now: () => number;

  constructor(config: RateLimitConfig, now: () => number = () => Date.now()) {
    this.#config = config;
    this.#now = now;
  }

  take(key: number | string): RateDecision {
    const { requests, windowSeconds } = this.#config;
    const ratePerMs = requests / (windowSeconds * 1000);
    const now = this.#now();
    const bucket = this.#refill(key, now);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > SWEEP_AT) this.#sweep(now);
    const retryAfter = allowed ? 0 : (1 - bucket.tokens) / ratePerMs / 1000;
    const secondsToFull = (requests - bucket.tokens) / ratePerMs / 1000;
    const headers: [string, string][] = [
      ["X-RateLimit-Limit", String(requests)],
      ["X-RateLimit-Remaining", String(Math.floor(bucket.tokens))],
      ["X-RateLimit-Reset", String(Math.ceil(now / 1000 + secondsToFull))],
    ];
    return { allowed, retryAfter, headers };
  }

  /** Seconds until `key` may make a request again; 0 when it may now. Consumes nothing. */
  wait(key: number | string): number {
    const bucket = this.#buckets.get(key);
    if (!bucket) return 0;
    const { requests, windowSeconds } = this.#config;
    const tokens = this.#refill(key, this.#now()).tokens;
    return tokens >= 1 ? 0 : (1 - tokens) / (requests / windowSeconds);
  }

  /** Forgets `key`'s history: its bucket is full again. */
  reset(key: number | string): void {
    this.#buckets.delete(key);
  }

  #refill(key: number | string, now: number): Bucket {
    const { requests, windowSeconds } = this.#config;
    const bucket = this.#buckets.get(key) ?? { tokens: requests, updatedMs: now };
    bucket.tokens = Math.min(requests, bucket.tokens + (now - bucket.updatedMs) * (requests / (windowSeconds * 1000)));
    bucket.updatedMs = now;
    return bucket;
  }

  /** A bucket refilled to full is the default state: forgetting it bounds memory by the active keys. */
  #sweep(now: number): void {
    for (const key of [...this.#buckets.keys()]) if (this.#refill(key, now).tokens >= this.#config.requests) this.#buckets.delete(key);
  }
}
