/**
 * @module import/replay-presence
 * People's presence (zerver_userpresence): last active and last connected times set as
 * exported, through the engine's presence import (flushed when the store closes).
 * Before deactivations: a deactivated person's record comes along as Zulip keeps it.
 * A row with neither time (an older Zulip's layout) has nothing to carry.
 */
import { attempt, type SettingsReplay } from "./settings-replay.js";

export function replayPresence(c: SettingsReplay): void {
  for (const row of c.data.presence) {
    const userId = c.users.get(row.user_profile);
    if (userId === undefined || c.data.users.find((u) => u.id === row.user_profile)?.is_bot === true) continue;
    const lastActive = row.last_active_time ?? null;
    const lastConnected = row.last_connected_time ?? lastActive;
    if (lastConnected === null) {
      c.skip("presence without times", `user ${row.user_profile}`);
      continue;
    }
    attempt(c, "presence", `user ${row.user_profile}`, () =>
      c.store.restorePresence(userId, lastActive, lastConnected),
    );
  }
}
