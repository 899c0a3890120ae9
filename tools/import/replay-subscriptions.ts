/**
 * @module import/replay-subscriptions
 * A zerver_subscription row's own settings (mute, color, pin, the notification
 * overrides), set as its person through the engine's subscription actions, which take
 * active subscriptions only. So a subscription that ended gets them just before the
 * replay ends it (its last change in the timeline), and one a deactivation paused
 * (Zulip keeps it active: the row says so) is taken up again once the timeline is
 * done, before the person is deactivated again at the end of the import.
 */
import type { Store } from "../../src/engine/index.js";
import { subscriptionProperties } from "./replay-realm.js";

export interface SubscriptionSettingsReplay {
  readonly store: Store;
  readonly count: (what: string, n?: number) => void;
  readonly skip: (why: string, example: string) => void;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `example` names the row in the report (Zulip's IDs). */
export function applySubscriptionSettings(
  c: SubscriptionSettingsReplay,
  userId: number,
  channelId: number,
  row: Record<string, unknown>,
  example: string,
): void {
  if (row["is_muted"] === true) {
    try {
      c.store.setChannelMuted(userId, channelId, true);
      c.count("muted channels");
    } catch (error) {
      c.skip(`channel mute refused: ${reason(error)}`, example);
    }
  }
  const changes = subscriptionProperties(row, channelId);
  if (changes.length === 0) return;
  try {
    c.store.updateSubscriptionProperties(userId, changes);
    c.count("subscription properties");
  } catch (error) {
    c.skip(`subscription properties refused: ${reason(error)}`, example);
  }
}
