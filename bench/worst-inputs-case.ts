/**
 * @module bench/worst-inputs-case
 * The shape of one worst input (a request, its setup and undo steps), shared by the
 * runner (worst-inputs) and the case lists it runs (worst-inputs-more, -edits) so the
 * lists need not import the runner that imports them.
 */

/** What earlier requests answered (a created group's ID, a queue ID), for the paths and bodies of later ones. */
export type Captured = Record<string, unknown>;
/**
 * A path or body fixed when the inputs are built, or computed when sent from what was captured (and which run it is: -1
 * unmeasured).
 */
export type Dynamic<T> = T | ((ctx: Captured, run: number) => T);

/** An unmeasured request around an input: setting up its state, or undoing its effect. */
export interface Step {
  readonly method: string;
  /** Defaults to the input's own path. */
  readonly path?: Dynamic<string>;
  readonly body: Dynamic<Buffer>;
  /** Who sends it (default: the input's caller). */
  readonly auth?: Dynamic<string | null>;
  /** Request headers beyond the input's own (a tus PATCH's Upload-Offset). */
  readonly headers?: Record<string, string>;
  /** The status the step must answer (default 200). */
  readonly status?: number;
  /** Reads what the answer holds (its JSON body, or {} for none; its headers) into `ctx`. */
  readonly capture?: (
    reply: Record<string, unknown>,
    ctx: Captured,
    headers: Record<string, string | string[] | undefined>,
  ) => void;
  /** Skipped once `ctx` holds this key: a setup that several inputs share runs once. */
  readonly unless?: string;
}

export interface Case {
  /** The route, as in the route table: "POST /messages". */
  readonly route: string;
  readonly label: string;
  readonly method: string;
  readonly path: Dynamic<string>;
  readonly auth: Dynamic<string | null>;
  readonly body: Dynamic<Buffer>;
  readonly chunked?: boolean;
  /** Request headers (a multipart Content-Type, tus headers); they replace the form Content-Type. */
  readonly headers?: Record<string, string>;
  /** The path is outside /api/v1 (files served at /user_uploads/...). */
  readonly root?: boolean;
  /**
   * The input changes what a repeat would meet (named channels created, a reaction added or removed): no unmeasured
   * send first.
   */
  readonly once?: boolean;
  /**
   * For a `once` input: an unmeasured request down the same path with other values (other channel names), so the path
   * is compiled as for the others.
   */
  readonly warmup?: Buffer;
  /** Unmeasured requests that set up the state the input needs (channels to unsubscribe from), sent first. */
  readonly prepare?: readonly Step[];
  /**
   * For an input that can be undone (a reaction added or removed): an unmeasured request after each send that restores
   * the state, so every run meets the same state.
   */
  readonly undo?: Step;
}

/** The options of one input, as the case lists give them. */
export interface CaseOptions {
  readonly auth?: Dynamic<string | null>;
  readonly headers?: Record<string, string>;
  readonly root?: boolean;
  readonly chunked?: boolean;
  readonly once?: boolean;
  readonly warmup?: Buffer;
  readonly prepare?: Step[];
  readonly undo?: Step;
}
export type AddCase = (
  route: string,
  label: string,
  path: Dynamic<string>,
  body: Dynamic<Buffer>,
  options?: CaseOptions,
) => void;
