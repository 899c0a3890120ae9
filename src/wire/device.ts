/**
 * @module wire/device
 * Client devices on the wire (Zulip's `devices` register section and `device` events,
 * feature level 468): token IDs as base64 of 8 bytes, null until set.
 */
import type { Device, DeviceChanges } from "../engine/index.js";

/** One entry of register's `devices` (keyed there by the device ID as a string). */
export function deviceToWire(device: Device): Record<string, unknown> {
  return {
    push_key_id: device.pushKeyId,
    push_token_id: device.pushTokenId,
    pending_push_token_id: device.pendingPushTokenId,
    push_token_last_updated_timestamp: device.pushTokenLastUpdatedTimestamp,
    push_registration_error_code: device.pushRegistrationErrorCode,
  };
}

/** register's `devices`: every device of the user, keyed by its ID. */
export function devicesToWire(devices: readonly Device[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(devices.map((d) => [String(d.id), deviceToWire(d)]));
}

const FIELD_NAMES: Readonly<Record<keyof DeviceChanges, string>> = {
  pushKeyId: "push_key_id",
  pushTokenId: "push_token_id",
  pendingPushTokenId: "pending_push_token_id",
  pushTokenLastUpdatedTimestamp: "push_token_last_updated_timestamp",
  pushRegistrationErrorCode: "push_registration_error_code",
};

/** The changed fields of a `device` update event, in Zulip's names. */
export function deviceChangesToWire(changes: DeviceChanges): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(changes)) out[FIELD_NAMES[name as keyof DeviceChanges]] = value;
  return out;
}
