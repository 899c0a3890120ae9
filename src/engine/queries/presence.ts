/**
 * @module queries/presence
 * Who is online, as Zulip's get_presence_dict_by_realm answers it: active human users
 * of the viewer's realm whom the viewer may see, whose presence is enabled, and
 * changed after the client's last_update_id; without a positive last_update_id, those
 * connected within history_limit_days (default 14; 0 asks for nothing).
 */
import { canAccessUser } from "../user-access.js";
import { BadRequestError, clip } from "../errors.js";
import type { PresenceReader } from "../directory.js";
import { SETTING_DEFAULTS } from "../settings/defaults.js";
import type { PresenceRecord, User } from "../types.js";

export interface PresenceQuery {
  /** The client's presence_last_update_id; null or absent: none. */
  readonly lastUpdateId?: number | null;
  readonly historyLimitDays?: number | null;
}

export interface PresenceRow {
  readonly user: User;
  readonly presence: PresenceRecord;
}

export interface PresenceListing {
  readonly rows: readonly PresenceRow[];
  /** Zulip's presence_last_update_id: the newest row's, else the client's, else -1. */
  readonly lastUpdateId: number;
}

const DEFAULT_HISTORY_DAYS = 14;

export function realmPresence(state: PresenceReader, viewer: User, query: PresenceQuery): PresenceListing {
  const clientId = query.lastUpdateId ?? null;
  const days = query.historyLimitDays ?? null;
  const rows: PresenceRow[] = [];
  let newest = -1;
  if (days !== 0) {
    const since = clientId === null || clientId <= 0 ? state.now() - (days ?? DEFAULT_HISTORY_DAYS) * 86_400 : null;
    state.presenceLogs.get(viewer.realmId)?.forEachAfter(clientId ?? -1, (id, updateId) => {
      const presence = state.presence.get(id);
      // An older entry of a user changed again later: their live entry comes after.
      if (!presence || presence.lastUpdateId !== updateId) return;
      if (since !== null && presence.lastConnected < since) return;
      const user = state.userDirectory.get(id);
      if (!user || !user.isActive || user.isBot || !presenceEnabled(state, id) || !canAccessUser(state, viewer, user))
        return;
      rows.push({ user, presence });
      newest = updateId;
    });
  }
  return { rows, lastUpdateId: rows.length > 0 ? newest : (clientId ?? -1) };
}

/** GET /users/{user_id_or_email}/presence: one user's presence, with Zulip's refusals. */
export function userPresence(state: PresenceReader, viewer: User, target: User, named: string): PresenceRecord {
  if (target.realmId !== viewer.realmId || !target.isActive || !canAccessUser(state, viewer, target))
    throw new BadRequestError("No such user");
  if (target.isBot) throw new BadRequestError("Presence is not supported for bot users.");
  const presence = presenceEnabled(state, target.id) ? state.presence.get(target.id) : undefined;
  if (!presence) throw new BadRequestError(`No presence data for ${clip(named)}`);
  return presence;
}

/** The user's presence_enabled, without building their whole settings object (hot path). */
export function presenceEnabled(state: Pick<PresenceReader, "userSettings">, userId: number): boolean {
  const stored = state.userSettings.get(userId)?.values.presence_enabled;
  return stored === undefined ? SETTING_DEFAULTS.presence_enabled : stored === true;
}
