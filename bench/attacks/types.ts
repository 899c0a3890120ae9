/**
 * @module bench/attacks/types
 * One hostile load of `npm run bench:worst -- --attacks` (the hardening issue's items):
 * it runs against a `parley serve` child on loopback while the runner samples the
 * child's RSS and times a cheap authenticated request (GET /api/v1/users/me) sent
 * alongside. Each attack lives in its own file under bench/attacks/ and is listed in
 * bench/attacks/index.ts.
 */

export interface Credentials {
  readonly email: string;
  readonly apiKey: string;
}

export interface AttackTarget {
  /** The uWS listener, e.g. http://127.0.0.1:PORT. */
  readonly baseUrl: string;
  /** The Node-parsed listener (--compat-port). */
  readonly compatUrl: string;
  /** An organization owner (to create invitation links, say). */
  readonly owner: Credentials;
  /** A plain member: the attacker's account. */
  readonly member: Credentials;
}

export interface Attack {
  /** The item of the hardening issue it reproduces. */
  readonly item: number;
  readonly name: string;
  /**
   * Runs the attack to completion and says in one line what the server answered
   * (e.g. "20,000 registers: 300 queues kept, 19,700 collected"). Must stop early
   * when `signal` aborts and leave no sockets open when it returns.
   */
  run(target: AttackTarget, signal: AbortSignal): Promise<string>;
}
