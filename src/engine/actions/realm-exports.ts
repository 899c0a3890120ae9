/**
 * @module actions/realm-exports
 * Organization data exports (POST/GET/DELETE /export/realm, GET /export/realm/consents),
 * Zulip's views/realm_export.py and actions/realm_export.py: administrators only; at
 * most EXPORT_LIMIT requests per realm in seven days ("Exceeded rate limit."), the
 * message and upload bounds past which Zulip asks for a manual export, and its checks
 * that an owner's data can be exported at all. The records live in the meta table
 * (one list per realm, few rows); the tarball itself is written outside the engine
 * (src/exports), which reports back through markStarted/markSucceeded/markFailed.
 * Every change sends the realm's whole list to its human administrators
 * (notify_realm_export's `realm_export` event).
 */
import { isAdmin } from "../access.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { usersAudience } from "../events/audience.js";
import { key } from "../index/keys.js";
import type { StoreState, WriteContext } from "../state.js";
import {
  REALM_EXPORT_STATUS,
  REALM_EXPORT_TYPE,
  ROLE,
  type RealmExport,
  type RealmExportType,
  type User,
} from "../types.js";
import { requireActiveUser } from "./users.js";

/** Zulip's EXPORT_LIMIT: requests per realm in RATE_WINDOW_SECONDS. */
export const EXPORT_LIMIT = 5;
const RATE_WINDOW_SECONDS = 7 * 86_400;
/** Zulip's MAX_MESSAGE_HISTORY: more exportable messages than this need a manual export. */
export const MAX_EXPORT_MESSAGES = 250_000;
/** Zulip's MAX_UPLOAD_QUOTA for exports through the API (20 GiB). */
export const MAX_EXPORT_UPLOAD_BYTES = 20 * 1024 * 1024 * 1024;
/** Zulip's UserProfile.EMAIL_ADDRESS_VISIBILITY_NOBODY: no administrator may see the address. */
const EMAIL_VISIBLE_TO_NOBODY = 4;

const listKey = (realmId: number) => `realmExports:${realmId}`;

/** The realm's exports, oldest first. */
export function realmExportsOf(state: StoreState, realmId: number): RealmExport[] {
  const stored = state.tables.meta.get(listKey(realmId));
  return Array.isArray(stored) ? (stored as RealmExport[]) : [];
}

function requireAdmin(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  return actor;
}

/** Active human administrators and owners: who hears of exports (get_human_admin_users). */
function humanAdmins(state: StoreState, realmId: number): number[] {
  const out: number[] = [];
  for (const id of state.usersOfRealm(realmId)) {
    const user = state.users.get(id);
    if (user !== undefined && user.isActive && !user.isBot && isAdmin(user)) out.push(id);
  }
  return out;
}

function save(state: StoreState, ctx: WriteContext, realmId: number, list: readonly RealmExport[]): void {
  state.tables.meta.putSync(listKey(realmId), list);
  ctx.emit({ type: "realm_export", realmId, exports: list }, () => usersAudience(humanAdmins(state, realmId)));
}

/** Active people who allow their private data in exports (Zulip's get_consented_user_ids). */
export function consentedUserIds(state: StoreState, realmId: number): Set<number> {
  const out = new Set<number>();
  for (const id of state.usersOfRealm(realmId)) {
    const user = state.users.get(id);
    if (user?.isActive && !user.isBot && state.settingsOf(id).allow_private_data_export === true) out.add(id);
  }
  return out;
}

/** Messages an export of this type would hold at most, by the realm's bitmaps (Zulip estimates from RealmCount). */
function exportableMessageEstimate(state: StoreState, realmId: number, type: RealmExportType): number {
  if (type !== REALM_EXPORT_TYPE.PUBLIC) return state.bitmaps.get(key.realm(realmId)).size;
  let total = 0;
  for (const channel of state.channels.values())
    if (channel.realmId === realmId && !channel.inviteOnly) total += state.bitmaps.get(key.channel(channel.id)).size;
  return total;
}

export interface ExportBounds {
  /** Zulip's MAX_MESSAGE_HISTORY (tests lower it). */
  readonly maxMessages?: number;
  readonly maxUploadBytes?: number;
  /** Where a manual export is requested (Zulip names FromAddress.SUPPORT). */
  readonly supportAddress: string;
}

/** POST /export/realm: checks and records a request; the caller starts the work. */
export function requestRealmExport(
  state: StoreState,
  actorId: number,
  type: RealmExportType,
  bounds: ExportBounds,
): RealmExport {
  const actor = requireAdmin(state, actorId);
  const realmId = actor.realmId;
  const now = state.now();
  const list = realmExportsOf(state, realmId);
  if (list.filter((e) => e.dateRequested >= now - RATE_WINDOW_SECONDS).length >= EXPORT_LIMIT)
    throw new BadRequestError("Exceeded rate limit.");
  if (
    exportableMessageEstimate(state, realmId, type) > (bounds.maxMessages ?? MAX_EXPORT_MESSAGES) ||
    (state.uploadSpaceByRealm.get(realmId) ?? 0) > (bounds.maxUploadBytes ?? MAX_EXPORT_UPLOAD_BYTES)
  )
    throw new BadRequestError(`Please request a manual export from ${bounds.supportAddress}.`);
  const owners = [...state.usersOfRealm(realmId)]
    .map((id) => state.users.get(id)!)
    .filter((u) => u.isActive && !u.isBot && u.role === ROLE.OWNER);
  if (type === REALM_EXPORT_TYPE.FULL_WITH_CONSENT) {
    if (!owners.some((u) => state.settingsOf(u.id).allow_private_data_export === true))
      throw new BadRequestError(
        "Make sure at least one Organization Owner is consenting to the export " +
          `or contact ${bounds.supportAddress} for help.`,
      );
  } else if (!owners.some((u) => state.settingsOf(u.id).email_address_visibility !== EMAIL_VISIBLE_TO_NOBODY)) {
    throw new BadRequestError(
      "Make sure at least one Organization Owner allows other Administrators to see their email address " +
        `or contact ${bounds.supportAddress} for help`,
    );
  }
  return state.write((ctx) => {
    const row: RealmExport = {
      id: state.allocate("nextRealmExportId"),
      realmId,
      actingUserId: actor.id,
      type,
      status: REALM_EXPORT_STATUS.REQUESTED,
      dateRequested: now,
      dateStarted: null,
      dateSucceeded: null,
      dateFailed: null,
      dateDeleted: null,
      exportPath: null,
      exportUrl: null,
      sha256: null,
      sizeBytes: null,
    };
    save(state, ctx, realmId, [...list, row]);
    return row;
  });
}

/** GET /export/realm. */
export function listRealmExports(state: StoreState, actorId: number): RealmExport[] {
  return realmExportsOf(state, requireAdmin(state, actorId).realmId);
}

/** GET /export/realm/consents: every active person and whether they consent. */
export function exportConsents(state: StoreState, actorId: number): { userId: number; consented: boolean }[] {
  const realmId = requireAdmin(state, actorId).realmId;
  const out: { userId: number; consented: boolean }[] = [];
  for (const id of state.usersOfRealm(realmId)) {
    const user = state.users.get(id);
    if (user?.isActive && !user.isBot)
      out.push({ userId: id, consented: state.settingsOf(id).allow_private_data_export === true });
  }
  return out.sort((a, b) => a.userId - b.userId);
}

/** The export of the caller's realm that DELETE and the download name (another realm's answers as a missing one). */
function exportOfRealm(state: StoreState, realmId: number, exportId: number): RealmExport {
  const row = realmExportsOf(state, realmId).find((e) => e.id === exportId);
  if (!row) throw new BadRequestError("Invalid data export ID");
  return row;
}

function update(state: StoreState, realmId: number, exportId: number, change: Partial<RealmExport>): RealmExport {
  return state.write((ctx) => {
    const list = realmExportsOf(state, realmId);
    const next = list.map((e) => (e.id === exportId ? { ...e, ...change } : e));
    save(state, ctx, realmId, next);
    return next.find((e) => e.id === exportId)!;
  });
}

/** DELETE /export/realm/{export_id}: a finished export only; returns it (the caller removes the file). */
export function deleteRealmExport(state: StoreState, actorId: number, exportId: number): RealmExport {
  const actor = requireAdmin(state, actorId);
  const row = exportOfRealm(state, actor.realmId, exportId);
  if (row.status === REALM_EXPORT_STATUS.DELETED) throw new BadRequestError("Export already deleted");
  if (row.status === REALM_EXPORT_STATUS.FAILED) throw new BadRequestError("Export failed, nothing to delete");
  if (row.status !== REALM_EXPORT_STATUS.SUCCEEDED) throw new BadRequestError("Export still in progress");
  update(state, actor.realmId, exportId, { status: REALM_EXPORT_STATUS.DELETED, dateDeleted: state.now() });
  return row;
}

/** The succeeded export an administrator of its realm downloads, or null. */
export function downloadableExport(state: StoreState, viewerId: number, exportPath: string): RealmExport | null {
  const viewer = state.users.get(viewerId);
  if (!viewer?.isActive || !isAdmin(viewer)) return null;
  const row = realmExportsOf(state, viewer.realmId).find((e) => e.exportPath === exportPath);
  return row?.status === REALM_EXPORT_STATUS.SUCCEEDED ? row : null;
}

export function markExportStarted(state: StoreState, realmId: number, exportId: number): RealmExport {
  return update(state, realmId, exportId, { status: REALM_EXPORT_STATUS.STARTED, dateStarted: state.now() });
}

export function markExportSucceeded(
  state: StoreState,
  realmId: number,
  exportId: number,
  file: {
    readonly exportPath: string;
    readonly exportUrl: string;
    readonly sha256: string;
    readonly sizeBytes: number;
  },
): RealmExport {
  return update(state, realmId, exportId, {
    status: REALM_EXPORT_STATUS.SUCCEEDED,
    dateSucceeded: state.now(),
    ...file,
  });
}

export function markExportFailed(state: StoreState, realmId: number, exportId: number): RealmExport {
  return update(state, realmId, exportId, { status: REALM_EXPORT_STATUS.FAILED, dateFailed: state.now() });
}

/** Exports requested or started but not finished (a restart interrupted them): the caller fails them. */
export function unfinishedExports(state: StoreState): RealmExport[] {
  const out: RealmExport[] = [];
  for (const realmId of state.realms.keys())
    for (const e of realmExportsOf(state, realmId))
      if (e.status === REALM_EXPORT_STATUS.REQUESTED || e.status === REALM_EXPORT_STATUS.STARTED) out.push(e);
  return out;
}
