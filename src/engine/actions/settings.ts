/**
 * @module actions/settings
 * Personal settings (PATCH /settings) and the organization's defaults for new users
 * (PATCH /realm/user_settings_defaults), as Zulip's json_change_settings and
 * update_realm_user_settings_defaults do them:
 * - only values that differ from the current ones are written, each with a
 *   user_settings (realm_user_settings_defaults) update event;
 * - full_name and timezone live on the user and are announced with realm_user updates;
 * - turning enable_drafts_synchronization off deletes the user's stored drafts (no
 *   drafts events: clients keep their local copies);
 * - a setting a user changes themselves is remembered (editedByUser), so that an
 *   administrator's bulk edit with skip_if_already_edited leaves it alone.
 */
import { isAdmin, membersOf } from "../access.js";
import { realmAudience, userAudience, usersAudience } from "../events/audience.js";
import { BadRequestError, PermissionDeniedError, StorageError, WrongPasswordError } from "../errors.js";
import type { PreparedPasswordChange } from "./accounts.js";
import {
  SETTING_DEFAULTS,
  type RealmSettingDefaultsRecord,
  type SettingName,
  type SettingValue,
  type UserSettingsRecord,
} from "../settings/defaults.js";
import {
  checkSettingValue,
  checkTimezone,
  PERSONAL_SETTING_NAMES,
  REALM_DEFAULT_SETTING_NAMES,
  SECURITY_SENSITIVE_SETTINGS,
} from "../settings/validation.js";
import type { StoreState, WriteContext } from "../state.js";
import type { User } from "../types.js";
import { checkChosenFullName, emitUserUpdates, requireActiveUser } from "./users.js";
import { checkNewEmail, startEmailChangeInTxn } from "./email-change.js";

export type SettingChanges = Readonly<Partial<Record<SettingName, SettingValue>>>;

/** Who an administrator's bulk edit reaches (Zulip's target_users). */
export interface TargetUsers {
  readonly userIds: readonly number[];
  /** Every active member of these groups, subgroups included. */
  readonly groupIds: readonly number[];
  /** Leave alone users who changed a setting themselves. */
  readonly skipIfAlreadyEdited: boolean;
}

export interface UpdateSettingsInput {
  readonly settings: SettingChanges;
  readonly fullName?: string;
  readonly timezone?: string;
  /** A new address: mailed a confirmation link, changed only when it is opened (actions/email-change.ts). */
  readonly email?: string;
  /** The realm's URL, for the confirmation link of an email change. */
  readonly realmUrl?: string;
  /**
   * Called when a new address passed its checks and everything else in the request
   * did, just before the write: throws to refuse (the server's per-user limit on
   * email changes, Zulip's email_change_by_user), and then nothing is changed or mailed.
   */
  readonly admitEmailChange?: () => void;
  /** Checked by preparePasswordChange before the write (Store.updateSettingsWithPassword). */
  readonly oldPassword?: string;
  /**
   * Zulip's new_password: a non-empty one needs `passwordChange`, made from it by
   * preparePasswordChange (Store.updateSettingsWithPassword does both); never with
   * targetUsers.
   */
  readonly newPassword?: string;
  readonly passwordChange?: PreparedPasswordChange;
  readonly targetUsers?: TargetUsers;
}

export const NOT_FOR_BOTS = "This endpoint does not accept bot requests.";
export const ADMIN_REQUIRED = "Must be an organization administrator";
const NOT_FOR_OTHERS = "Cannot change this setting for other users.";

/** Checks every named setting against the names the endpoint accepts and Zulip's value rules. */
function checkedChanges(settings: SettingChanges, accepted: readonly SettingName[]): [SettingName, SettingValue][] {
  const out: [SettingName, SettingValue][] = [];
  for (const [name, value] of Object.entries(settings) as [SettingName, SettingValue | undefined][]) {
    if (value === undefined) continue;
    if (!accepted.includes(name)) throw new BadRequestError(`Invalid setting: ${name}`);
    out.push([name, checkSettingValue(name, value)]);
  }
  return out;
}

/** A settings record with `changes` applied: overrides equal to Zulip's default are dropped. */
function withValues(
  values: SettingChanges,
  changes: readonly (readonly [SettingName, SettingValue])[],
): Partial<Record<SettingName, SettingValue>> {
  const next: Partial<Record<SettingName, SettingValue>> = { ...values };
  for (const [name, value] of changes) {
    if (SETTING_DEFAULTS[name] === value) delete next[name];
    else next[name] = value;
  }
  return next;
}

/** Writes a user's new settings and deletes their drafts if they turned synchronization off. */
function putUserSettings(
  state: StoreState,
  ctx: WriteContext,
  user: User,
  changes: readonly (readonly [SettingName, SettingValue])[],
  byUser: boolean,
): void {
  const current = state.userSettings.get(user.id);
  const edited = new Set(current?.editedByUser ?? []);
  if (byUser) for (const [name] of changes) edited.add(name);
  const record: UserSettingsRecord = {
    userId: user.id,
    values: withValues(current?.values ?? {}, changes),
    editedByUser: [...edited],
  };
  if (Object.keys(record.values).length === 0 && record.editedByUser.length === 0)
    state.tables.userSettings.removeSync(user.id);
  else state.tables.userSettings.putSync(user.id, record);
  ctx.changed({ kind: "userSettings", id: user.id });
  ctx.afterCommit(() => {
    if (Object.keys(record.values).length === 0 && record.editedByUser.length === 0) state.userSettings.delete(user.id);
    else state.userSettings.set(user.id, record);
  });
  if (changes.some(([name, value]) => name === "enable_drafts_synchronization" && value === false)) {
    const drafts = [...(state.draftsByUser.get(user.id)?.keys() ?? [])];
    for (const id of drafts) {
      state.tables.drafts.removeSync(id);
      ctx.changed({ kind: "draft", id, op: "removed" });
    }
    ctx.afterCommit(() => state.draftsByUser.delete(user.id));
  }
}

/**
 * One personal setting the user changes through another endpoint (the deprecated
 * `away` of POST /users/me/status is presence_enabled), inside that endpoint's write:
 * stored and announced as PATCH /settings would; nothing when it already has the value.
 */
export function changeOwnSettingInTxn(
  state: StoreState,
  ctx: WriteContext,
  user: User,
  name: SettingName,
  value: SettingValue,
): void {
  if (state.settingsOf(user.id)[name] === value) return;
  putUserSettings(state, ctx, user, [[name, value]], true);
  ctx.emit({ type: "user_settings", op: "update", userIds: [user.id], property: name, value }, () =>
    userAudience(user.id),
  );
}

/** PATCH /settings: the caller's own settings, or (with targetUsers) an administrator's bulk edit. */
export function updateSettings(state: StoreState, actorId: number, input: UpdateSettingsInput): void {
  const actor = requireActiveUser(state, actorId);
  if (actor.isBot) throw new BadRequestError(NOT_FOR_BOTS);
  const changes = checkedChanges(input.settings, PERSONAL_SETTING_NAMES);
  const timezone = input.timezone === undefined ? undefined : checkTimezone(input.timezone);
  if (input.targetUsers !== undefined) {
    bulkUpdate(state, actor, input, changes);
    return;
  }
  const password = input.newPassword !== undefined && input.newPassword !== "" ? input.passwordChange : undefined;
  if (password !== undefined && password.userId !== actor.id)
    throw new StorageError("a password change prepared for another user");
  if (input.newPassword !== undefined && input.newPassword !== "" && password === undefined)
    throw new WrongPasswordError();
  const locks = state.realms.get(actor.realmId)?.properties ?? {};
  const admin = isAdmin(actor);
  const changingEmail = input.email !== undefined && input.email.trim() !== actor.deliveryEmail;
  if (changingEmail && locks.emailChangesDisabled === true && !admin)
    throw new BadRequestError("Email address changes are disabled in this organization.");
  const newEmail = changingEmail ? checkNewEmail(state, actor, input.email!) : null;
  // Zulip ignores a locked name silently: its clients offer no way to send one.
  const nameLocked = locks.nameChangesDisabled === true && !admin;
  const fullName =
    input.fullName !== undefined && input.fullName !== actor.fullName && !nameLocked
      ? checkChosenFullName(state, actor.realmId, input.fullName, actor.id)
      : actor.fullName;
  const current = state.settingsOf(actor.id);
  const changed = changes.filter(([name, value]) => current[name] !== value);
  const next: User = { ...actor, fullName, timezone: timezone ?? actor.timezone };
  const userChanged = next.fullName !== actor.fullName || next.timezone !== actor.timezone;
  if (changed.length === 0 && !userChanged && password === undefined && newEmail === null) return;
  if (newEmail !== null) input.admitEmailChange?.();
  state.write((ctx) => {
    if (password !== undefined) {
      state.tables.passwords.putSync(actor.id, password.record);
      ctx.changed({ kind: "password", id: actor.id });
    }
    if (newEmail !== null) startEmailChangeInTxn(state, ctx, actor, newEmail, input.realmUrl ?? "");
    if (changed.length > 0) putUserSettings(state, ctx, actor, changed, true);
    for (const [property, value] of changed)
      ctx.emit({ type: "user_settings", op: "update", userIds: [actor.id], property, value }, () =>
        userAudience(actor.id),
      );
    if (userChanged) {
      state.tables.users.putSync(next.id, next);
      ctx.afterCommit(() => state.indexUser(next));
      if (next.timezone !== actor.timezone)
        ctx.emit(
          { type: "user_settings", op: "update", userIds: [actor.id], property: "timezone", value: next.timezone },
          () => userAudience(actor.id),
        );
      emitUserUpdates(state, ctx, actor, next);
    }
  });
}

/**
 * target_users: the named users and the active members of the named groups, bots
 * left out, deactivated users included (so a reactivated user has the edit).
 * Identity, time zone and security-sensitive settings stay each user's own.
 */
function bulkUpdate(
  state: StoreState,
  actor: User,
  input: UpdateSettingsInput,
  changes: readonly [SettingName, SettingValue][],
): void {
  const target = input.targetUsers!;
  if (!isAdmin(actor)) throw new PermissionDeniedError(ADMIN_REQUIRED, "UNAUTHORIZED_PRINCIPAL");
  if (input.email !== undefined || input.newPassword !== undefined || input.timezone !== undefined)
    throw new BadRequestError(NOT_FOR_OTHERS);
  if (changes.some(([name]) => SECURITY_SENSITIVE_SETTINGS.has(name))) throw new BadRequestError(NOT_FOR_OTHERS);
  if (target.userIds.length === 0 && target.groupIds.length === 0)
    throw new BadRequestError("Either user_ids or group_ids must be provided.");
  for (const id of target.groupIds) {
    const group = state.groups.get(id);
    if (!group || group.realmId !== actor.realmId) throw new BadRequestError(`Invalid user group ID: ${id}`);
  }
  for (const id of target.userIds) {
    const user = state.users.get(id);
    if (!user || user.realmId !== actor.realmId) throw new BadRequestError(`Invalid user ID: ${id}`);
  }
  const ids = new Set(target.userIds);
  if (target.groupIds.length > 0)
    for (const id of membersOf(state, actor.realmId, { directMembers: [], directSubgroups: target.groupIds }))
      ids.add(id);
  const users = [...ids].map((id) => state.users.get(id)!).filter((u) => !u.isBot);
  // Per user, the settings that change for them; per setting, who they changed for.
  const perUser = new Map<User, [SettingName, SettingValue][]>();
  const perSetting: [SettingName, SettingValue, number[]][] = [];
  for (const [name, value] of changes) {
    const reached: number[] = [];
    for (const user of users) {
      if (target.skipIfAlreadyEdited && state.userSettings.get(user.id)?.editedByUser.includes(name)) continue;
      if (state.settingsOf(user.id)[name] === value) continue;
      let mine = perUser.get(user);
      if (!mine) perUser.set(user, (mine = []));
      mine.push([name, value]);
      reached.push(user.id);
    }
    if (reached.length > 0) perSetting.push([name, value, reached]);
  }
  if (perUser.size === 0) return;
  state.write((ctx) => {
    for (const [user, mine] of perUser) putUserSettings(state, ctx, user, mine, false);
    for (const [property, value, userIds] of perSetting)
      ctx.emit({ type: "user_settings", op: "update", userIds, property, value }, () => usersAudience(userIds));
  });
}

/** PATCH /realm/user_settings_defaults: administrators only; existing users never change. */
export function updateRealmSettingDefaults(state: StoreState, actorId: number, settings: SettingChanges): void {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor)) throw new PermissionDeniedError(ADMIN_REQUIRED, "UNAUTHORIZED_PRINCIPAL");
  const changes = checkedChanges(settings, REALM_DEFAULT_SETTING_NAMES);
  const current = state.realmDefaultsOf(actor.realmId);
  const changed = changes.filter(([name, value]) => current[name] !== value);
  if (changed.length === 0) return;
  const realmId = actor.realmId;
  const record: RealmSettingDefaultsRecord = {
    realmId,
    values: withValues(state.realmSettingDefaults.get(realmId)?.values ?? {}, changed),
  };
  state.write((ctx) => {
    state.tables.realmSettingDefaults.putSync(realmId, record);
    ctx.afterCommit(() => state.realmSettingDefaults.set(realmId, record));
    for (const [property, value] of changed)
      ctx.emit({ type: "realm_user_settings_defaults", op: "update", realmId, property, value }, () =>
        realmAudience(state, realmId),
      );
  });
}
