/**
 * @module exports/realm-exports
 * Runs organization data exports in the background (Zulip's deferred_work queue) and
 * keeps their tarballs: EXPORTS/<realm>/<random>/zulip-export-<random>.tar.gz, in the
 * layout of `manage.py export` (realm.json, messages-000001.json, ...,
 * attachment.json, uploads/records.json and the uploaded files, emoji/records.json and
 * the custom emoji images, avatars/records.json and the uploaded avatars) under one
 * zulip-export-<random>/ folder, which `parley import --from` reads back.
 *
 * The event loop is never held for long: the messages are read SLICE_MESSAGES at a
 * time (each slice's per-user flag rows included), and the work yields between
 * slices; a message file is closed at FILE_MESSAGES messages or FILE_ROWS flag rows,
 * whichever comes first, so that no file outgrows what the importer reads into memory.
 * Messages sent or changed while an export runs may or may not be in it (Zulip's
 * export is not a snapshot either). A restart fails the exports it interrupted.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { dirname, join } from "node:path";
import type { ExportPlan, ExportRow, RealmExport, Store } from "../engine/index.js";
import type { UploadFiles } from "../uploads/files.js";
import { TarballWriter } from "./tarball.js";

/** Messages read per step of the event loop, at most... */
export const SLICE_MESSAGES = 100;
/** ...and flag rows: a step ends after the message that reaches this many (a message to 10,000 users is one step).
 * Measured on a generated 100k-message, 10,000-user store: ~10 µs a row (40-130 ms per 10,000 rows, load average
 * 16 on 2 cores), so a step holds the loop for ~20-30 ms. */
export const SLICE_ROWS = 2_000;
/** Zulip's MESSAGE_BATCH_CHUNK_SIZE: messages per messages-NNNNNN.json. */
export const FILE_MESSAGES = 1000;
/** Flag rows past which a message file is closed early (a slice may go over by one slice's rows). */
export const FILE_ROWS = 200_000;

export interface RealmExportsOptions {
  /** Where tarballs are kept. */
  readonly root: string;
  /** Uploaded files, copied into the tarball. */
  readonly uploads: UploadFiles;
  /** A custom emoji image's file (its still PNG with `still`), or null where emoji are not kept. */
  readonly emojiFile?: (realmId: number, fileName: string, still: boolean) => string | null;
  /** An uploaded avatar's file (a name under the realm's avatars), or null where avatars are not kept. */
  readonly avatarFile?: (realmId: number, fileName: string) => string | null;
  readonly logError: (message: string, error: unknown) => void;
  /** Messages per step (tests make it small to see the work span steps). */
  readonly sliceMessages?: number;
  readonly fileMessages?: number;
}

/** A relative tarball path as exports name it: digits, a random hex folder, the file name. */
const EXPORT_PATH = /^\d+\/[0-9a-f]{32}\/zulip-export-[0-9a-f]{8}\.tar\.gz$/;

export class RealmExports {
  readonly #store: Store;
  readonly #options: RealmExportsOptions;
  readonly #running = new Set<Promise<void>>();
  #closed = false;

  constructor(store: Store, options: RealmExportsOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** Fails the exports a previous process left unfinished (called once, at start). */
  failInterrupted(): void {
    for (const e of this.#store.unfinishedExports()) this.#store.markExportFailed(e.realmId, e.id);
  }

  /** Starts an export in the background; `realmUrl` prefixes its download URL. */
  start(row: RealmExport, realmUrl: string): void {
    const job = this.#run(row, realmUrl).catch((error: unknown) => {
      this.#options.logError(`data export ${row.id} of realm ${row.realmId} failed`, error);
      try {
        this.#store.markExportFailed(row.realmId, row.id);
      } catch (failure) {
        this.#options.logError(`data export ${row.id}: could not record the failure`, failure);
      }
    });
    this.#running.add(job);
    void job.finally(() => this.#running.delete(job));
  }

  /** Resolves once no export is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  /** Stops starting new slices; running exports fail at their next step. */
  close(): void {
    this.#closed = true;
  }

  /** The file of a tarball path that exports name, or null for any other path. */
  fileOf(exportPath: string): string | null {
    return EXPORT_PATH.test(exportPath) ? join(this.#options.root, exportPath) : null;
  }

  /** Removes a deleted export's tarball (and its folder). */
  async remove(exportPath: string): Promise<void> {
    const file = this.fileOf(exportPath);
    if (file !== null) await rm(dirname(file), { recursive: true, force: true });
  }

  async #run(row: RealmExport, realmUrl: string): Promise<void> {
    const store = this.#store;
    store.markExportStarted(row.realmId, row.id);
    const random = randomBytes(16).toString("hex");
    const folder = `zulip-export-${randomBytes(4).toString("hex")}`;
    const exportPath = `${row.realmId}/${random}/${folder}.tar.gz`;
    const file = join(this.#options.root, exportPath);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const partial = `${file}.part`;
    try {
      const done = await this.writeTarball(store.planRealmExport(row.realmId, row.type), partial, folder);
      await rename(partial, file);
      store.markExportSucceeded(row.realmId, row.id, {
        exportPath,
        exportUrl: `${realmUrl}/${EXPORT_URL_PREFIX}/${exportPath}`,
        ...done,
      });
    } catch (error) {
      await rm(dirname(file), { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * Writes the plan's export to `file`, everything under `folder`/ (a failed one removes its file). Also used
   * on its own by `parley realm move`, with a whole-realm plan on a snapshot of the store.
   */
  async writeTarball(plan: ExportPlan, file: string, folder: string): Promise<{ sha256: string; sizeBytes: number }> {
    const store = this.#store;
    const tar = new TarballWriter(file, store.now());
    try {
      await this.#writeMessages(tar, folder, plan);
      const tables = store.exportRealmTables(plan);
      const attachments = store.exportAttachments(plan);
      await tar.add(`${folder}/attachment.json`, json({ zerver_attachment: attachments }));
      await this.#writeUploads(tar, folder, attachments);
      await this.#writeEmoji(tar, folder, plan.realmId, tables["zerver_realmemoji"] ?? []);
      await this.#writeAvatars(tar, folder, plan.realmId, tables["zerver_userprofile"] ?? []);
      await tar.add(`${folder}/realm.json`, json(tables));
      return await tar.finish();
    } catch (error) {
      await tar.abort();
      throw error;
    }
  }

  async #writeMessages(tar: TarballWriter, folder: string, plan: ExportPlan): Promise<void> {
    const slice = this.#options.sliceMessages ?? SLICE_MESSAGES;
    const perFile = this.#options.fileMessages ?? FILE_MESSAGES;
    const ids = plan.messageIds;
    let fileNumber = 1;
    let messages: ExportRow[] = [];
    let rows: ExportRow[] = [];
    const flush = async () => {
      const name = `${folder}/messages-${String(fileNumber++).padStart(6, "0")}.json`;
      await tar.add(name, json({ zerver_message: messages, zerver_usermessage: rows }));
      messages = [];
      rows = [];
    };
    for (let at = 0; at < ids.length;) {
      if (this.#closed) throw new Error("the server is shutting down");
      const part = this.#store.exportMessageSlice(plan, ids.subarray(at, at + slice), SLICE_ROWS);
      at += part.consumed;
      for (const m of part.zerver_message) messages.push(m);
      for (const r of part.zerver_usermessage) rows.push(r);
      if (messages.length >= perFile || rows.length >= FILE_ROWS) await flush();
      await yieldToLoop();
    }
    if (messages.length > 0 || fileNumber === 1) await flush();
  }

  /**
   * Custom emoji images as Zulip's export_emoji_from_local lays them out: emoji/<path> for each
   * path <realm>/emoji/images/<file> (and .../still/<name>.png of an animated one), listed in emoji/records.json.
   */
  async #writeEmoji(tar: TarballWriter, folder: string, realmId: number, emoji: readonly ExportRow[]): Promise<void> {
    const records: ExportRow[] = [];
    const locate = this.#options.emojiFile;
    for (const e of emoji) {
      const fileName = String(e["file_name"]);
      const image = await readable(locate?.(realmId, fileName, false) ?? null);
      if (image === null) {
        this.#options.logError(`data export: emoji image ${fileName} could not be read`, new Error("missing file"));
        continue;
      }
      const path = `${realmId}/emoji/images/${fileName}`;
      await tar.addFile(`${folder}/emoji/${path}`, image.path, image.size);
      records.push({
        realm_id: realmId,
        author: e["author"],
        user_profile_id: e["author"],
        name: e["name"],
        file_name: fileName,
        deactivated: e["deactivated"],
        path,
        s3_path: path,
      });
      if (e["is_animated"] !== true) continue;
      const still = await readable(locate?.(realmId, fileName, true) ?? null);
      const stillName = fileName.replace(/\.[a-z]+$/, ".png");
      if (still !== null)
        await tar.addFile(`${folder}/emoji/${realmId}/emoji/images/still/${stillName}`, still.path, still.size);
    }
    await tar.add(`${folder}/emoji/records.json`, json(records));
  }

  /** Uploaded avatars as Zulip lays them out: avatars/<realm>/<avatar_hash>.png, listed in avatars/records.json. */
  async #writeAvatars(tar: TarballWriter, folder: string, realmId: number, users: readonly ExportRow[]): Promise<void> {
    const records: ExportRow[] = [];
    for (const u of users) {
      if (u["avatar_source"] !== "U" || typeof u["avatar_hash"] !== "string") continue;
      const fileName = `${u["avatar_hash"]}.png`;
      const image = await readable(this.#options.avatarFile?.(realmId, fileName) ?? null);
      if (image === null) {
        this.#options.logError(`data export: avatar ${fileName} could not be read`, new Error("missing file"));
        continue;
      }
      const path = `${realmId}/${fileName}`;
      await tar.addFile(`${folder}/avatars/${path}`, image.path, image.size);
      records.push({
        path,
        s3_path: path,
        realm_id: realmId,
        user_profile_id: u["id"],
        user_profile_email: u["email"],
        size: image.size,
      });
    }
    await tar.add(`${folder}/avatars/records.json`, json(records));
  }

  async #writeUploads(tar: TarballWriter, folder: string, attachments: readonly ExportRow[]): Promise<void> {
    const records: ExportRow[] = [];
    for (const a of attachments) {
      const pathId = String(a["path_id"]);
      const size = Number(a["size"]);
      const path = this.#options.uploads.pathOf(pathId);
      try {
        await this.#options.uploads.ensureLocal(pathId);
        await stat(path);
      } catch (error) {
        // A file gone from disk (removed meanwhile): its record stays, its bytes cannot.
        this.#options.logError(`data export: upload ${pathId} could not be read`, error);
        continue;
      }
      await tar.addFile(`${folder}/uploads/${pathId}`, path, size);
      records.push({
        path: pathId,
        s3_path: pathId,
        realm_id: a["realm"],
        user_profile_id: a["owner"],
        size,
        content_type: a["content_type"],
        last_modified: a["create_time"],
      });
    }
    await tar.add(`${folder}/uploads/records.json`, json(records));
  }
}

/** Where a stored file is, or null when it cannot be read (removed meanwhile: its record stays, its bytes cannot). */
async function readable(path: string | null): Promise<{ path: string; size: number } | null> {
  if (path === null) return null;
  try {
    const s = await stat(path);
    return s.isFile() ? { path, size: s.size } : null;
  } catch {
    return null;
  }
}

/** Download URLs: /user_avatars/exports/<exportPath> as in Zulip (served here to the realm's administrators only). */
export const EXPORT_URL_PREFIX = "user_avatars/exports";

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), "utf8");
}
