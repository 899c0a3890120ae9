/**
 * @module test/support/user-settings
 * Sets a user's stored settings directly in the engine, for tests of features that
 * read settings whose endpoint (PATCH /settings) lives elsewhere. One write, like an
 * action; no event, but a declared change (caches follow it).
 */
import type { SettingName, SettingValue, Store, UserSettingsRecord } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";

export function setUserSettings(
  store: Store,
  userId: number,
  values: Partial<Record<SettingName, SettingValue>>,
): void {
  const state = internals(store);
  const current = state.userSettings.get(userId);
  const record: UserSettingsRecord = {
    userId,
    values: { ...current?.values, ...values },
    editedByUser: current?.editedByUser ?? [],
  };
  state.write((ctx) => {
    state.tables.userSettings.putSync(userId, record);
    ctx.afterCommit(() => state.userSettings.set(userId, record));
    ctx.changed({ kind: "userSettings", id: userId });
  });
}
