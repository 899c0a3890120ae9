/**
 * @module http/endpoint-testing
 * What an endpoint file tells the route-table tests about itself, beyond its
 * parameter schema: for the access sweep (test/http/access-sweep.test.ts), the other
 * parameters a request needs to reach its lookups, encodings of its own for JSON
 * structures that hold references, and the parameters that look like references but
 * name nothing a caller could be denied; for the worst inputs (src/http/worst-inputs.ts,
 * used by test/http/bounds.test.ts and bench/worst-inputs.ts), valid values and the
 * parameters whose bounds are not theirs to generate. Read by tests and benchmarks only.
 */
import type { ObjectKind } from "./params.js";

/** An object a probe names: an ID or a name (channel name, email, upload path). */
export type Ref = number | string;

/** One way to name an object in a parameter. */
export interface ProbeSpec {
  readonly names: ObjectKind;
  readonly label: string;
  /** The parameter's wire value naming `ref`. */
  encode(ref: Ref): string;
  /** For a name spread over several path segments (an upload's path_id): every segment's value. */
  readonly encodePath?: (ref: Ref) => Readonly<Record<string, string>>;
  /** Only with bases whose plain parameters satisfy this (default: every base). */
  readonly when?: (base: Readonly<Record<string, string>>) => boolean;
}

/** Objects of the caller's realm a base may need, and values that must differ per request. */
export interface SweepFixture {
  /** The caller's own scheduled message (a direct message to themselves). */
  readonly ownScheduledMessage: number;
  /** The caller's own draft. */
  readonly ownDraft: number;
  /** A bot the caller owns. */
  readonly ownBot: number;
  /** A group of the callers' realm that `groupManager` (a member) manages. */
  readonly managedGroup: number;
  readonly groupManager: number;
  /** A default channel group of the callers' realm. */
  readonly defaultChannelGroup: number;
  /** A public channel of the callers' realm (#general): the owner administers it, the member and guest do not. */
  readonly publicChannel: number;
  /** The caller's own API key (incoming webhooks take it as a parameter). */
  readonly apiKey: string;
  /** A name not used before, starting with `prefix`. */
  fresh(prefix: string): string;
  /** A delivery time far enough ahead that no scheduler delivers it during the test. */
  later(): string;
}

/** Parameters besides the probed one; functions are called per request. */
export interface SweepBase {
  readonly params: Readonly<Record<string, string | ((fixture: SweepFixture) => string)>>;
  /** The probed parameters this base is for (default: all). */
  readonly for?: readonly string[];
}

/** The callers and places the access sweep probes from (its scenarios). */
export type SweepScenario =
  | "bob: another realm"
  | "guest: another realm"
  | "owner: another realm"
  | "owner: others' scheduled messages, drafts and snippets"
  | "owner: others' scheduled messages, drafts, snippets and uploads"
  | "bob: private places"
  | "guest: channels not joined";

export interface SweepException {
  readonly param: string;
  readonly scenario: SweepScenario;
  /** Why Zulip's semantics make "invisible" and "nonexistent" differ here by design. */
  readonly reason: string;
}

/** A refusal a worst input must get. */
export interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly msg: string;
}

/**
 * A hand-picked worst input, sent by a member (with "1" for every path segment) like
 * the generated ones. `params` is a function so that long values are built only when
 * a test or benchmark sends them, never when the server loads.
 */
export interface WorstCase extends Refusal {
  readonly label: string;
  params(): Readonly<Record<string, string>>;
}

export interface WorstOverrides {
  /** Values the other parameters take while one is at its worst (default: a plain value the schema accepts). */
  readonly valid?: Readonly<Record<string, string>>;
  /** Parameters whose bounds generate no input, and why. */
  readonly skip?: Readonly<Record<string, string>>;
  /** Inputs the bounds cannot produce (the handler's own limits and checks), checked like the generated ones. */
  readonly extra?: readonly WorstCase[];
}

export interface EndpointTesting {
  /**
   * Parameters whose name or type looks like a reference but that name nothing a
   * caller could be denied, each with why (the sweep fails on any other unmarked one).
   */
  readonly notRefs?: Readonly<Record<string, string>>;
  /** What a request needs besides the probed parameter to reach its lookups (default: nothing). */
  readonly sweepBases?: readonly SweepBase[];
  /** Probes for a parameter in place of its kind's shared ones (required for compound references). */
  readonly probes?: Readonly<Record<string, readonly ProbeSpec[]>>;
  /** Where a hidden object answers unlike one that exists nowhere, by Zulip's design; checked to still differ. */
  readonly sweepExceptions?: readonly SweepException[];
  readonly worst?: WorstOverrides;
}
