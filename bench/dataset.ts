/**
 * @module bench/dataset
 * Scale presets and "generate the dataset unless it is already there" for the bench
 * scripts. Datasets live in bench/tmp/<label> (git-ignored scratch).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { generateDataset } from "../tools/generate/generate.js";
import { manifestPath, readManifest, type Manifest } from "../tools/generate/manifest.js";
import { copyStoreFile } from "../src/engine/storage/copy-store-file.js";
import { SCHEMA_VERSION } from "../src/engine/storage/tables.js";

export const SCALES: Record<string, number> = {
  tiny: 5_000,
  "10k": 10_000,
  "100k": 100_000,
  "1m": 1_000_000,
  "10m": 10_000_000,
};

export interface DatasetChoice {
  readonly label: string;
  readonly messages: number;
  readonly dir: string;
}

/** From --scale (a preset or a number) or BENCH_SCALE; default `fallback`. */
export function chooseDataset(
  scaleArg: string | undefined,
  dataArg: string | undefined,
  fallback: string,
): DatasetChoice {
  const raw = (scaleArg ?? process.env["BENCH_SCALE"] ?? fallback).toLowerCase();
  const messages = SCALES[raw] ?? Number(raw.replace(/_/g, ""));
  if (!Number.isInteger(messages) || messages < 100)
    throw new Error(`unknown scale '${raw}': use one of ${Object.keys(SCALES).join(", ")} or a message count`);
  const label = SCALES[raw] ? raw : String(messages);
  return { label, messages, dir: dataArg ?? join("bench", "tmp", label) };
}

/** The dataset's manifest, generating it (with peer COPY files if `withPeer`) when absent. */
export async function ensureDataset(
  choice: DatasetChoice,
  withPeer: boolean,
  log: (line: string) => void,
): Promise<Manifest> {
  if (existsSync(manifestPath(choice.dir))) {
    const manifest = readManifest(choice.dir);
    if (withPeer && (!manifest.pgDir || !existsSync(join(manifest.pgDir, "zerver_usermessage.copy")))) {
      throw new Error(
        `${choice.dir} was generated without PostgreSQL files: remove it (rm -rf ${choice.dir}) and rerun`,
      );
    }
    log(
      `using dataset ${choice.dir} (${manifest.scale.messages} messages, generated in ${manifest.seconds.toFixed(0)} s)`,
    );
    const schema = manifest.storeSchema ?? 4;
    if (schema < SCHEMA_VERSION)
      log(
        `note: ${choice.dir} was generated at store schema ${manifest.storeSchema ?? "4 or older"}, not ${SCHEMA_VERSION}: ` +
          `its records are in an older format (before 5, channel records hold their topics: no topic registry); ` +
          `to measure the current format, rm -rf ${choice.dir} and rerun`,
      );
    return manifest;
  }
  if (existsSync(choice.dir) && statSync(choice.dir).isDirectory() && existsSync(join(choice.dir, "data.mdb"))) {
    throw new Error(
      `${choice.dir} holds a store without dataset.json (an interrupted generation?): remove it and rerun`,
    );
  }
  log(`generating ${choice.messages} messages into ${choice.dir}${withPeer ? " (with PostgreSQL COPY files)" : ""}`);
  return generateDataset(choice.dir, { messages: choice.messages, pgDir: withPeer ? join(choice.dir, "pg") : null });
}

/**
 * A private copy of the dataset's store for one benchmark run: runs send messages and
 * change flags, and the peer comparison needs the engine to start from exactly the
 * state the PostgreSQL COPY files describe. Copied next to the original (same disk).
 */
export function workingCopy(dir: string): { dir: string; cleanup(): void } {
  // No dot in the name: lmdb-js treats a path with an extension as a file, not a directory.
  const copy = mkdtempSync(join(dirname(dir.replace(/\/+$/, "")), `${basename(dir)}-run-`));
  copyStoreFile(join(dir, "data.mdb"), join(copy, "data.mdb"));
  let removed = false;
  const cleanup = () => {
    if (!removed) rmSync(copy, { recursive: true, force: true });
    removed = true;
  };
  process.once("exit", cleanup);
  return { dir: copy, cleanup };
}
