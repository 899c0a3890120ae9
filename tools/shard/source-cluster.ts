/**
 * @module tools/shard/source-cluster
 * `parley realm move --source-cluster nats://HOST:PORT`: what a move needs of a cluster it moves a realm out of
 * (tools/shard/realm-move.ts): the replicated log's last sequence and the object store of uploaded files.
 */
import { connect } from "nats";
import { STREAM } from "../../src/cluster/log.js";
import { ObjectStoreUploads } from "../../src/cluster/uploads.js";
import type { SourceCluster } from "./realm-move.js";

export interface SourceClusterConnection {
  readonly cluster: SourceCluster;
  close(): Promise<void>;
}

export async function connectSourceCluster(url: string): Promise<SourceClusterConnection> {
  const nc = await connect({ servers: url, name: "parley realm move" });
  try {
    const jsm = await nc.jetstreamManager();
    const uploads = await ObjectStoreUploads.open(nc.jetstream());
    return {
      cluster: { uploads, lastSeq: async () => (await jsm.streams.info(STREAM)).state.last_seq },
      close: () => nc.close(),
    };
  } catch (error) {
    await nc.close();
    throw new Error(
      `cannot reach the source cluster's JetStream at ${url}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
