/**
 * @module tools/shard/realm-move
 * `parley realm move`: a realm from the shard that owns it to another (docs/cluster.md section 12).
 *
 * 1. freeze: the shard map marks the realm moving, nginx is reloaded with it and drained. From then on nginx
 *    answers the realm's writes 503 (Retry-After), and once the old workers are gone no write routed before can
 *    still be acknowledged: every write a client was told succeeded is in the source's store.
 * 2. export: an online snapshot of the source's store (the server keeps running), the whole realm exported from
 *    it in the Zulip format that `parley import` reads (everyone's data, as `manage.py export` does). A cluster
 *    source: the snapshot is taken again until its node has applied the log as far as it reached after the
 *    freeze, and files the node lacks come from the cluster's object store.
 * 3. import into the target's data directory (its server stopped for this: the import holds the directory's
 *    one-writer lock), then each person's API key and password hash, so clients and bots keep working.
 * 4. switch: the shard map names the target shard, nginx is reloaded and drained: the realm's Host reaches the
 *    target, over every connection.
 *
 * A move that fails before the switch unfreezes the realm where it was. The source keeps its copy (no longer
 * routed to): the operator deactivates or removes it when the move is checked.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { snapshotEnvironment, type PasswordRecord, type Store } from "../../src/engine/index.js";
import { emojiFilePath } from "../../src/emoji/images.js";
import { avatarFilePath } from "../../src/http/avatar-images.js";
import { RealmExports } from "../../src/exports/realm-exports.js";
import { openStore } from "../../src/index.js";
import { UploadFiles, type UploadReplica } from "../../src/uploads/files.js";
import { importRealmExport } from "../commands/import.js";
import { openForCommand } from "../demo/cli.js";
import { renderNginxConfig } from "./nginx-config.js";
import type { NginxControl } from "./nginx-control.js";
import { hostOf, readShardMap, writeShardMap, type ShardMap } from "./shard-map.js";

export interface RealmMoveOptions {
  readonly subdomain: string;
  readonly mapFile: string;
  /** Where `parley shard nginx-config` output goes (the file nginx includes). */
  readonly nginxConfFile: string;
  readonly toShard: string;
  /** The source server's data directory (read online, never written). */
  readonly sourceDir: string;
  /** The target server's data directory (written while its server is stopped). */
  readonly targetDir: string;
  readonly nginx: NginxControl;
  /** Stops the target's server before the import and starts it after (without them it must be stopped already). */
  readonly stopTarget?: () => Promise<void>;
  readonly startTarget?: () => Promise<void>;
  /** How long the target may take to answer for the realm once started. */
  readonly targetTimeoutMs?: number;
  readonly progress?: (line: string) => void;
  /** When the source is a cluster: its object store and its log (the source directory is one node's). */
  readonly sourceCluster?: SourceCluster;
}

/** A cluster source: files its node has not fetched come from `uploads`; the log says what the node must hold. */
export interface SourceCluster {
  readonly uploads: UploadReplica;
  /** The replicated log's last sequence. */
  lastSeq(): Promise<number>;
}

/** Snapshots of a cluster node that has not yet applied every acknowledged write are taken again, this often. */
const BEHIND_RETRIES = 50;
const BEHIND_WAIT_MS = 200;

export interface RealmMoveReport {
  readonly subdomain: string;
  readonly from: string;
  readonly to: string;
  readonly messages: number;
  readonly users: number;
  readonly exportBytes: number;
  /** Seconds each step took, and how long the realm refused writes (freeze to switch). */
  readonly seconds: {
    freeze: number;
    export: number;
    stopTarget: number;
    import: number;
    startTarget: number;
    switch: number;
    readOnly: number;
  };
  readonly importReport: string;
}

interface Credentials {
  readonly apiKey: string;
  readonly password: PasswordRecord | undefined;
}

/** Writes the map and its nginx configuration, then reloads nginx. */
async function publish(options: RealmMoveOptions, map: ShardMap, drain: boolean): Promise<void> {
  writeShardMap(options.mapFile, map);
  const next = `${options.nginxConfFile}.next`;
  writeFileSync(next, renderNginxConfig(map, options.mapFile));
  renameSync(next, options.nginxConfFile);
  await options.nginx.reload(drain);
}

function seconds(since: number): number {
  return Math.round((performance.now() - since) / 10) / 100;
}

/** Whether `node` (HOST:PORT) answers GET /api/v1/server_settings for `host` with 200. */
function answersFor(node: string, host: string): Promise<boolean> {
  const at = node.lastIndexOf(":");
  return new Promise((resolve) => {
    const req = request(
      {
        host: node.slice(0, at).replace(/^\[|\]$/g, ""),
        port: Number(node.slice(at + 1)),
        path: "/api/v1/server_settings",
        headers: { host },
        timeout: 2_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.once("error", () => resolve(false));
    req.once("timeout", () => req.destroy());
    req.end();
  });
}

export interface SnapshotExport {
  readonly tarball: string;
  readonly bytes: number;
  readonly messages: number;
  /** Everyone's credentials, by the export's (the source's) user ID. */
  readonly credentials: ReadonlyMap<number, Credentials>;
}

/**
 * The realm's export from an online snapshot of the source's store, written under `work`. A file missing from the
 * source's disk is fetched from `sourceUploads` (a cluster's object store) into that disk when given, as the
 * source node itself would on a read; else it is left out with a warning.
 */
export async function exportFromSnapshot(
  sourceDir: string,
  subdomain: string,
  work: string,
  options: { readonly sourceCluster?: SourceCluster; readonly warn: (line: string) => void },
): Promise<SnapshotExport> {
  // Every write acknowledged before now is in the log up to here; a follower may not have applied it all yet.
  const needed = options.sourceCluster ? await options.sourceCluster.lastSeq() : 0;
  let store: Store | null = null;
  for (let attempt = 0; store === null; attempt++) {
    const snapshot = join(work, `source-${attempt}`);
    await snapshotEnvironment(sourceDir, snapshot, { compact: false });
    // The copy is this process's own store; the export's bookkeeping never touches the source.
    const opened = openStore(snapshot, { noSync: true });
    const seq = opened.replicationPosition.seq;
    if (seq >= needed) store = opened;
    else {
      opened.close();
      rmSync(snapshot, { recursive: true, force: true });
      if (attempt === BEHIND_RETRIES)
        throw new Error(
          `the source ${sourceDir} has applied the cluster's log up to ${seq}, not ${needed}: is its node running ` +
            "and following the log? Pass a running node's directory",
        );
      await sleep(BEHIND_WAIT_MS);
    }
  }
  try {
    const realm = store.findRealmBySubdomain(subdomain);
    if (!realm) throw new Error(`the source ${sourceDir} has no realm '${subdomain}'`);
    const exports = new RealmExports(store, {
      root: work,
      uploads: new UploadFiles(join(sourceDir, "uploads"), options.sourceCluster?.uploads ?? null),
      emojiFile: (realmId, fileName, still) => emojiFilePath(sourceDir, realmId, fileName, still),
      avatarFile: (realmId, fileName) => avatarFilePath(sourceDir, realmId, fileName),
      logError: (message, error) =>
        options.warn(`warning: ${message}: ${error instanceof Error ? error.message : String(error)}`),
    });
    const plan = store.planWholeRealmExport(realm.id);
    const tarball = join(work, "realm.tar.gz");
    const { sizeBytes } = await exports.writeTarball(plan, tarball, "zulip-export-move");
    const credentials = new Map<number, Credentials>();
    for (const id of plan.rowUsers)
      credentials.set(id, { apiKey: store.getUser(id).apiKey, password: store.passwordOf(id) });
    return { tarball, bytes: sizeBytes, messages: plan.messageIds.length, credentials };
  } finally {
    store.close();
  }
}

/**
 * Refuses a target that is a node of a cluster: the import writes its store directly, outside the replicated log,
 * so the other nodes would never get the realm and the node would no longer match the log.
 */
export function refuseClusterTarget(targetDir: string): void {
  const store = openForCommand(targetDir, "realm move");
  try {
    const seq = store.replicationPosition.seq;
    if (seq > 0)
      throw new Error(
        `the target ${targetDir} is a node of a cluster (log sequence ${seq}): a move imports outside the ` +
          "replicated log, so its target must be a single server (docs/cluster.md section 12)",
      );
  } finally {
    store.close();
  }
}

/** Gives each imported person the API key and password hash they had on the source. */
function restoreCredentials(
  targetDir: string,
  users: ReadonlyMap<number, number>,
  credentials: ReadonlyMap<number, Credentials>,
): void {
  const store = openForCommand(targetDir, "realm move");
  try {
    store.batch(() => {
      for (const [sourceId, targetId] of users) {
        const c = credentials.get(sourceId);
        if (!c) continue;
        store.restoreApiKey(targetId, c.apiKey);
        if (c.password) store.setPassword(targetId, c.password);
      }
    });
  } finally {
    store.close();
  }
}

export async function moveRealm(options: RealmMoveOptions): Promise<RealmMoveReport> {
  const say = options.progress ?? (() => undefined);
  const { subdomain, toShard } = options;
  const original = readShardMap(options.mapFile);
  const from = original.realms[subdomain];
  if (from === undefined) throw new Error(`realm '${subdomain}' is not in the shard map ${options.mapFile}`);
  if (original.shards[toShard] === undefined)
    throw new Error(`no shard '${toShard}' in the shard map ${options.mapFile} (add its nodes under "shards")`);
  if (from === toShard) throw new Error(`realm '${subdomain}' is on shard '${toShard}' already`);
  if (original.moving.includes(subdomain))
    throw new Error(
      `realm '${subdomain}' is marked moving in ${options.mapFile}: an earlier move stopped part-way. Check where ` +
        `its data is, remove it from "moving", run parley shard nginx-config and reload nginx, then move again`,
    );
  const host = hostOf(original, subdomain);
  const started = performance.now();

  say(`freezing ${host}: writes refused while it moves (nginx reload, waiting for old workers to finish)`);
  await publish(options, { ...original, moving: [...original.moving, subdomain] }, true);
  const frozenAt = performance.now();
  const freezeSeconds = seconds(started);

  const work = mkdtempSync(join(tmpdir(), "parley-move-"));
  let switched = false;
  let targetStopped = false;
  try {
    say(`exporting '${subdomain}' from an online snapshot of ${options.sourceDir}`);
    const exportStart = performance.now();
    const exported = await exportFromSnapshot(options.sourceDir, subdomain, work, {
      ...(options.sourceCluster ? { sourceCluster: options.sourceCluster } : {}),
      warn: say,
    });
    const exportSeconds = seconds(exportStart);
    say(`exported ${exported.messages} messages, ${exported.credentials.size} users (${exported.bytes} bytes)`);

    const stopStart = performance.now();
    if (options.stopTarget) {
      say("stopping the target server");
      await options.stopTarget();
      targetStopped = true;
    }
    const stopSeconds = seconds(stopStart);
    refuseClusterTarget(options.targetDir);
    const importStart = performance.now();
    say(`importing into ${options.targetDir}`);
    const imported = await importRealmExport(options.targetDir, exported.tarball, subdomain);
    if (imported === null) throw new Error(`the target ${options.targetDir} has a realm '${subdomain}' already`);
    restoreCredentials(options.targetDir, imported.ids.users, exported.credentials);
    const importSeconds = seconds(importStart);
    const startStart = performance.now();
    if (options.startTarget) {
      say("starting the target server");
      targetStopped = false;
      await options.startTarget();
    }
    const nodes = original.shards[toShard] ?? [];
    const until = Date.now() + (options.targetTimeoutMs ?? 60_000);
    for (;;) {
      const answers = await Promise.all(nodes.map((node) => answersFor(node, host)));
      if (answers.every(Boolean)) break;
      if (Date.now() > until)
        throw new Error(`the target's nodes (${nodes.join(", ")}) do not answer for ${host}: is its server running?`);
      await sleep(200);
    }
    const startSeconds = seconds(startStart);

    say(`switching ${host} to shard '${toShard}'`);
    const switchStart = performance.now();
    const next: ShardMap = {
      ...original,
      realms: { ...original.realms, [subdomain]: toShard },
      moving: original.moving.filter((r) => r !== subdomain),
    };
    switched = true;
    // Drained here too: a kept-alive connection to an old worker would still meet the frozen configuration.
    await publish(options, next, true);
    const report: RealmMoveReport = {
      subdomain,
      from,
      to: toShard,
      messages: exported.messages,
      users: exported.credentials.size,
      exportBytes: exported.bytes,
      seconds: {
        freeze: freezeSeconds,
        export: exportSeconds,
        stopTarget: stopSeconds,
        import: importSeconds,
        startTarget: startSeconds,
        switch: seconds(switchStart),
        readOnly: seconds(frozenAt),
      },
      importReport: imported.reportFile,
    };
    say(`moved '${subdomain}' from '${from}' to '${toShard}' in ${seconds(started)} s`);
    return report;
  } catch (error) {
    if (targetStopped && options.startTarget) {
      say("the move failed; starting the target server again");
      await options.startTarget().catch((start: unknown) => {
        say(`could not start the target server: ${start instanceof Error ? start.message : String(start)}`);
      });
    }
    if (!switched) {
      say(`the move failed; unfreezing ${host} on shard '${from}'`);
      await publish(options, original, false).catch((unfreeze: unknown) => {
        const why = unfreeze instanceof Error ? unfreeze.message : String(unfreeze);
        say(`could not unfreeze (${why}): remove '${subdomain}' from "moving" in ${options.mapFile} by hand`);
      });
    }
    throw error;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
