/**
 * @module tools/generate/manifest
 * What a generated dataset contains, written next to it as dataset.json: the scale,
 * engine IDs of the benchmark subjects and channels, and the peer files. Benchmarks
 * read it instead of re-deriving anything from the seed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Scale } from "./plan.js";

export interface SubjectIds {
  readonly sender: number;
  readonly main: number;
  readonly backlog: number;
  readonly hundred: number;
  readonly dmPartner: number;
}

export interface Manifest {
  readonly version: 1;
  readonly scale: Scale;
  readonly realmId: number;
  readonly ownerId: number;
  readonly ownerEmail: string;
  readonly subjects: SubjectIds;
  readonly subjectEmails: Record<keyof SubjectIds, string>;
  /** Channel index -> engine channel ID (index 0: the all-users channel). */
  readonly channelIds: readonly number[];
  readonly channelNames: readonly string[];
  readonly generalChannelId: number;
  /** The most used topic of the all-users channel (channel+topic narrow). */
  readonly bigTopic: string;
  readonly commonWord: string;
  readonly rareWord: string;
  readonly rareCount: number;
  readonly lastMessageId: number;
  readonly subscriptions: number;
  readonly churnEvents: number;
  readonly mutedTopics: readonly { readonly userId: number; readonly channelId: number; readonly topic: string }[];
  /** Rows the peer's zerver_usermessage holds (soft deactivation applied). */
  readonly usermessageRows: number;
  /** Rows it would hold without soft deactivation (what the engine's model implies). */
  readonly usermessageRowsWithoutSoftDeactivation: number;
  readonly pgDir: string | null;
  readonly seconds: number;
  /**
   * The store schema (storage/tables SCHEMA_VERSION) the generator wrote; absent in datasets
   * from before schema 5, whose channel records hold their topics (no topic registry).
   */
  readonly storeSchema?: number;
}

export function manifestPath(dir: string): string {
  return join(dir, "dataset.json");
}

export function writeManifest(dir: string, manifest: Manifest): void {
  writeFileSync(manifestPath(dir), JSON.stringify(manifest, null, 2) + "\n");
}

export function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(manifestPath(dir), "utf8")) as Manifest;
}
