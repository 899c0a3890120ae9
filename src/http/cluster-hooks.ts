/**
 * @module http/cluster-hooks
 * What a node of a cluster (src/cluster, docs/cluster.md) adds to its HTTP server:
 * GET /health, its /metrics gauges, and the gate that holds a write's answer until
 * the replicated log has it.
 */
import type { UploadReplica } from "../uploads/index.js";
import type { Reply } from "./respond.js";
import type { HeaderList } from "./response-head.js";

/** A cluster node's hooks (WorkerHooks.cluster). */
export interface ClusterHooks {
  /** The node's role, applied log sequence and lag (for /health and /metrics). */
  status(): ClusterStatus;
  /**
   * Runs before the answer to a request that may have written (any method but GET and
   * HEAD): resolves once the writes committed so far are stored in the replicated log,
   * with headers to add, or with a refusal (503) that replaces the answer.
   */
  beforeReply?(): Promise<{ readonly refusal?: Reply; readonly headers: HeaderList }>;
  /** Where every node's uploaded files are kept for the others (JetStream's object store). */
  readonly uploads?: UploadReplica;
}

export interface ClusterStatus {
  readonly role: "leader" | "follower";
  /** Whether the node serves (a follower applying the log, a leader holding the lease); else `reason`. */
  readonly serving: boolean;
  readonly reason: string | null;
  readonly applied: number;
  readonly lag: number;
  /** LMDB transactions the node applied log messages in, since it started (§2: messages read together share one). */
  readonly applyCommits: number;
  /**
   * The node this one knows as the leader (itself when leading), or null: a follower that
   * has not yet read a lease would answer writes "No leader is known yet".
   */
  readonly leader: string | null;
}
