/**
 * @module tools/generate/plan
 * The shape of a generated realm, decided up front from the options and the seed:
 * how many users and channels, who is active or idle (and since when), who belongs to
 * which channel, the benchmark subjects, and every user's read watermark. Pure and
 * deterministic: the engine loader and the PostgreSQL writer both follow this plan.
 */
import { Rng } from "./prng.js";

export interface GenerateOptions {
  readonly messages: number;
  readonly users?: number;
  readonly channels?: number;
  readonly seed?: number;
  /** Messages per engine transaction (store.batch). */
  readonly batchSize?: number;
}

export interface Scale {
  readonly messages: number;
  readonly users: number;
  readonly channels: number;
  /** Users who use the product during the whole history (never soft-deactivated). */
  readonly activeUsers: number;
  readonly seed: number;
  readonly batchSize: number;
  /** Share of messages sent to the all-users channel, and to direct messages. */
  readonly generalShare: number;
  readonly dmShare: number;
}

/** Defaults: a 10,000-user realm from 100k messages up; proportionally smaller below. */
export function scaleFor(options: GenerateOptions): Scale {
  const n = options.messages;
  if (!Number.isInteger(n) || n < 100) throw new Error("--messages must be an integer of at least 100");
  const users = options.users ?? (n >= 100_000 ? 10_000 : clamp(Math.round(n / 10), 30, 10_000));
  const channels = options.channels ?? (n >= 100_000 ? 200 : clamp(Math.round(users / 3), 5, 200));
  if (users < 10) throw new Error("--users must be at least 10");
  if (channels < 2) throw new Error("--channels must be at least 2");
  return {
    messages: n,
    users,
    channels,
    activeUsers: Math.max(10, Math.round(users * 0.02)),
    seed: options.seed ?? 1,
    batchSize: options.batchSize ?? 2000,
    generalShare: 0.08,
    dmShare: 0.15,
  };
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** Users the benchmarks act as (indices into the user list). */
export interface Subjects {
  /** The most prolific sender (the sender: narrow). */
  readonly sender: number;
  /** An ordinary active reader: channel, topic, starred, mentioned, search, anchors. */
  readonly main: number;
  /** Active, but stopped reading early: ~5% of all messages unread in the big channel. */
  readonly backlog: number;
  /** Subscribed to exactly min(100, channels) channels (unread summary). */
  readonly hundred: number;
  /** Main's frequent 1:1 direct-message partner. */
  readonly dmPartner: number;
}

export interface RealmPlan {
  readonly scale: Scale;
  /** User index -> message index from which the user is soft-deactivated (Infinity: never). */
  readonly idleFrom: readonly number[];
  /** User index -> last message ID they have read (0: none). */
  readonly readUpTo: readonly number[];
  readonly active: readonly number[];
  readonly subjects: Subjects;
  /** Channel index -> initial member user indices (channel 0 is the all-users channel). */
  readonly members: readonly (readonly number[])[];
  /** Channel index -> relative message traffic (sums to 1 over channels 1..C-1). */
  readonly traffic: readonly number[];
}

export function planRealm(scale: Scale, rng: Rng): RealmPlan {
  const { users: u, channels: c, messages: n, activeUsers: a, batchSize } = scale;
  // User 0 is the realm owner; the active users are 1..a so that subjects are stable.
  const active = Array.from({ length: a }, (_, i) => i + 1);
  const subjects: Subjects = { sender: 1, main: 2, backlog: 3, hundred: 4, dmPartner: 5 };
  const isActive = new Uint8Array(u);
  for (const i of active) isActive[i] = 1;

  // Most accounts never use the product during the history; a few stop part-way
  // (snapped to batch boundaries so both outputs agree on who was awake when).
  const idleFrom: number[] = [];
  for (let i = 0; i < u; i++) {
    if (isActive[i]) idleFrom.push(Number.POSITIVE_INFINITY);
    else if (rng.chance(0.03)) idleFrom.push(Math.floor((rng.next() * 0.5 * n) / batchSize) * batchSize);
    else idleFrom.push(0);
  }

  const readUpTo: number[] = [];
  for (let i = 0; i < u; i++) {
    if (isActive[i]) readUpTo.push(Math.max(0, n - Math.round(n * rng.next() * 0.01)));
    else readUpTo.push(Math.min(n, idleFrom[i]!));
  }
  readUpTo[subjects.main] = n - Math.round(n * 0.003);
  // 5% of all messages unread in the big channel, which gets generalShare of traffic.
  readUpTo[subjects.backlog] = Math.round(n * (1 - 0.05 / scale.generalShare));
  readUpTo[subjects.hundred] = n - Math.round(n * 0.02);

  const members: number[][] = [Array.from({ length: u }, (_, i) => i)];
  const idle = Array.from({ length: u }, (_, i) => i).filter((i) => !isActive[i]);
  for (let j = 1; j < c; j++) {
    const size = Math.min(u - 1, Math.max(3, Math.round((u * 0.25) / Math.pow(j, 0.8))));
    const activeCount = Math.min(a, Math.max(2, Math.round(size * 0.06)));
    const set = new Set<number>();
    while (set.size < activeCount) set.add(rng.pick(active));
    while (set.size < size && idle.length > 0) set.add(rng.pick(idle));
    members.push([...set]);
  }
  const join = (user: number, count: number, from = 1) => {
    const order = rng.shuffle(Array.from({ length: c - from }, (_, k) => k + from));
    let joined = members.slice(1).filter((m) => m.includes(user)).length;
    for (const j of order) {
      if (joined >= count) break;
      if (!members[j]!.includes(user)) {
        members[j]!.push(user);
        joined++;
      }
    }
  };
  join(subjects.sender, 30);
  join(subjects.main, 20);
  join(subjects.backlog, 10);
  join(subjects.dmPartner, 10);
  // Exactly min(100, C) subscriptions including the big channel.
  const hundredTarget = Math.min(100, c) - 1;
  for (let j = 1; j < c; j++) {
    const list = members[j]!;
    const at = list.indexOf(subjects.hundred);
    if (at >= 0) list.splice(at, 1);
  }
  join(subjects.hundred, hundredTarget);

  // Traffic is independent of size: busy team channels need not be big ones.
  const order = rng.shuffle(Array.from({ length: c - 1 }, (_, k) => k + 1));
  const traffic = new Array<number>(c).fill(0);
  let total = 0;
  order.forEach((j, rank) => {
    const w = 1 / Math.pow(rank + 1, 1.0);
    traffic[j] = w;
    total += w;
  });
  for (let j = 1; j < c; j++) traffic[j]! /= total;
  return { scale, idleFrom, readUpTo, active, subjects, members, traffic };
}
