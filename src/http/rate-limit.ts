/**
 * @module http/rate-limit
 * Token buckets per key (a user ID, or a client address for failed authentication):
 * `requests` per `windowSeconds`, refilled continuously. Reports Zulip's X-RateLimit-*
 * headers on every authenticated response. WindowLimiter holds the strict limits on
 * actions that mail someone (several windows at once, as Zulip writes them).
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

/**
 * Email changes per user: Zulip's "email_change_by_user" rule, 2 per hour and 5 per
 * day. Each one mails an address that has no relationship with the server yet, so
 * more would let an account spam through the server's mail reputation.
 */
export const DEFAULT_EMAIL_CHANGE_LIMITS: readonly RateLimitConfig[] = [
  { requests: 2, windowSeconds: 3600 },
  { requests: 5, windowSeconds: 86_400 },
];

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

  /** Gives back a token `take` took for an attempt that was never made (capped at a full bucket). */
  refund(key: number | string): void {
    const bucket = this.#buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.#config.requests, this.#refill(key, this.#now()).tokens + 1);
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
    for (const key of [...this.#buckets.keys()])
      if (this.#refill(key, now).tokens >= this.#config.requests) this.#buckets.delete(key);
  }
}

/**
 * Several limits on one kind of action, each over its own window, as Zulip's rules
 * are written ("2 per hour and 5 per day"): the times of a key's recent actions are
 * kept (at most the largest `requests` of them), and an action is refused while any
 * rule's window already holds its `requests`. Refused attempts are not recorded.
 */
export class WindowLimiter {
  readonly #rules: readonly RateLimitConfig[];
  readonly #now: () => number;
  readonly #times = new Map<number | string, number[]>();
  readonly #keep: number;
  readonly #longestMs: number;

  constructor(rules: readonly RateLimitConfig[], now: () => number = () => Date.now()) {
    if (rules.length === 0 || rules.some((r) => !(r.requests >= 1) || !(r.windowSeconds > 0))) {
      throw new RangeError("every rule needs requests >= 1 and a window");
    }
    this.#rules = rules;
    this.#now = now;
    this.#keep = Math.max(...rules.map((r) => r.requests));
    this.#longestMs = Math.max(...rules.map((r) => r.windowSeconds)) * 1000;
  }

  /** Records an action for `key` if every rule allows it; else the seconds until one would be allowed. */
  take(key: number | string): { readonly allowed: true } | { readonly allowed: false; readonly retryAfter: number } {
    const now = this.#now();
    const times = (this.#times.get(key) ?? []).filter((t) => t > now - this.#longestMs);
    let waitMs = 0;
    for (const { requests, windowSeconds } of this.#rules) {
      const inWindow = times.filter((t) => t > now - windowSeconds * 1000);
      // The window frees a place when the oldest of its last `requests` actions leaves it.
      if (inWindow.length < requests) continue;
      waitMs = Math.max(waitMs, inWindow[inWindow.length - requests]! + windowSeconds * 1000 - now);
    }
    if (waitMs > 0) {
      this.#times.set(key, times);
      return { allowed: false, retryAfter: waitMs / 1000 };
    }
    times.push(now);
    this.#times.set(key, times.slice(-this.#keep));
    if (this.#times.size > SWEEP_AT) this.#sweep(now);
    return { allowed: true };
  }

  #sweep(now: number): void {
    for (const [key, times] of [...this.#times]) {
      if (times.every((t) => t <= now - this.#longestMs)) this.#times.delete(key);
    }
  }
}
