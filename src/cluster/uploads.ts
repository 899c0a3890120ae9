/**
 * @module cluster/uploads
 * A cluster's uploaded files in JetStream's object store (docs/cluster.md section 8): the node that stores an upload
 * (the leader) puts its bytes in bucket `parley_uploads` under its path_id before the attachment's record is
 * committed, and a node asked for a file it lacks gets it from there. The bucket is replicated as the NATS
 * deployment replicates streams; object digests are checked by the client on read.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { StorageType, type JetStreamClient, type ObjectStore } from "nats";

export const UPLOADS_BUCKET = "parley_uploads";

/** An UploadReplica (src/uploads/files.ts) by its shape: this layer imports only the engine. */
export class ObjectStoreUploads {
  readonly #os: ObjectStore;

  private constructor(os: ObjectStore) {
    this.#os = os;
  }

  /** The bucket, created when it does not exist yet. */
  static async open(js: JetStreamClient): Promise<ObjectStoreUploads> {
    return new ObjectStoreUploads(await js.views.os(UPLOADS_BUCKET, { storage: StorageType.File }));
  }

  async put(pathId: string, path: string): Promise<void> {
    const bytes = Readable.toWeb(createReadStream(path)) as unknown as ReadableStream<Uint8Array>;
    await this.#os.put({ name: pathId }, bytes);
  }

  async get(pathId: string, path: string): Promise<boolean> {
    const found = await this.#os.get(pathId);
    if (found === null) return false;
    await pipeline(Readable.fromWeb(found.data as unknown as WebReadableStream<Uint8Array>), createWriteStream(path));
    // The client checks the object's digest once it is read whole, and says here when it does not match.
    const error = await found.error;
    if (error) throw error;
    return true;
  }

  async remove(pathId: string): Promise<void> {
    // An upload stored before the cluster existed (restored from a backup) is not in the bucket.
    if ((await this.#os.info(pathId)) !== null) await this.#os.delete(pathId);
  }
}
