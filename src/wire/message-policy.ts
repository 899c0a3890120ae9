/**
 * @module wire/message-policy
 * The realm's message editing, moving and deletion rules in Zulip's names: register's
 * `realm_*` keys and the data of a realm update_dict event.
 */
import { MESSAGE_POLICY_WIRE_NAMES, type MessagePolicy } from "../engine/index.js";
import { groupSettingToWire } from "./channel.js";

/** Zulip's values for the named settings (all when `names` is absent), keyed by Zulip's setting names. */
export function messagePolicyToWire(
  policy: MessagePolicy,
  names: readonly (keyof MessagePolicy)[] = Object.keys(MESSAGE_POLICY_WIRE_NAMES) as (keyof MessagePolicy)[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const value = policy[name];
    out[MESSAGE_POLICY_WIRE_NAMES[name]] =
      typeof value === "object" && value !== null ? groupSettingToWire(value) : value;
  }
  return out;
}
