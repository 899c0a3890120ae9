/**
 * @module actions/devices
 * Client devices and their E2EE push registration (Zulip's Device, feature level
 * 468): POST /register_client_device, POST /remove_client_device and POST
 * /mobile_push/register, in Zulip's order of checks. A registration (or a token
 * rotation) is written together with an outbox item that forwards the token group to
 * the bouncer (src/push); the bouncer's answer comes back through
 * finishPushRegistration, which confirms the token or records the bouncer's error.
 */
import { BadRequestError, PushServiceNotConfiguredError } from "../errors.js";
import { userAudience } from "../events/audience.js";
import type { DeviceChanges } from "../events/types.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Device, PushOutboxItem, PushTokenKind, User } from "../types.js";
import { requireActiveUser } from "./lookups.js";

/**
 * Devices one user may hold. Zulip has no limit; without one, a client looping on
 * register_client_device would grow the user's register response without bound.
 */
export const MAX_DEVICES_PER_USER = 100;

/** The cryptosystem byte of a push key Zulip supports: libsodium secretbox. */
export const SECRETBOX_CRYPTOSYSTEM = 0x31;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 (RFC 4648, padded), strictly, like Python's b64decode(validate=True); null if it is not. */
export function decodeBase64(text: string): Buffer | null {
  return BASE64.test(text) ? Buffer.from(text, "base64") : null;
}

/** Zulip's human_users_only. */
export function requireHuman(state: StoreState, userId: number): User {
  const user = requireActiveUser(state, userId);
  if (user.isBot) throw new BadRequestError("This endpoint does not accept bot requests.");
  return user;
}

/** The caller's own device; anything else is Zulip's "Invalid `device_id`". */
function requireOwnDevice(state: StoreState, userId: number, deviceId: number): Device {
  const device = state.devices.get(deviceId);
  if (!device || device.userId !== userId) throw new BadRequestError("Invalid `device_id`");
  return device;
}

/** POST /register_client_device: a new device with nothing registered yet. */
export function registerClientDevice(state: StoreState, userId: number): Device {
  const user = requireActiveUser(state, userId);
  if ((state.devicesByUser.get(user.id)?.size ?? 0) >= MAX_DEVICES_PER_USER)
    throw new BadRequestError(`Too many registered devices (limit: ${MAX_DEVICES_PER_USER})`);
  return state.write((ctx) => {
    const device: Device = {
      id: state.allocate("nextDeviceId"),
      userId: user.id,
      realmId: user.realmId,
      pushKey: null,
      pushKeyId: null,
      pushTokenKind: null,
      pushTokenId: null,
      pendingPushTokenId: null,
      pushTokenLastUpdatedTimestamp: null,
      pushRegistrationErrorCode: null,
    };
    state.tables.devices.putSync(device.id, device);
    ctx.afterCommit(() => state.indexDevice(device));
    ctx.emit({ type: "device", op: "add", userId: user.id, deviceId: device.id }, () => userAudience(user.id));
    return device;
  });
}

/** POST /remove_client_device (feature level 470): the device and its push registration go. */
export function removeClientDevice(state: StoreState, userId: number, deviceId: number): void {
  const user = requireActiveUser(state, userId);
  const device = requireOwnDevice(state, user.id, deviceId);
  state.write((ctx) => deleteDeviceInTxn(state, ctx, device));
}

/** Deletes a device inside an open write (removal, deactivation of its user). */
export function deleteDeviceInTxn(state: StoreState, ctx: WriteContext, device: Device): void {
  state.tables.devices.removeSync(device.id);
  ctx.afterCommit(() => state.unindexDevice(device));
  ctx.emit({ type: "device", op: "remove", userId: device.userId, deviceId: device.id }, () =>
    userAudience(device.userId),
  );
}

/** The user's devices, by ID (the register `devices` section). */
export function userDevices(state: StoreState, userId: number): Device[] {
  const ids = [...(state.devicesByUser.get(userId) ?? [])].sort((a, b) => a - b);
  return ids.map((id) => state.devices.get(id)!);
}

export interface PushRegistrationInput {
  readonly deviceId: number;
  readonly pushKey?: string | undefined;
  readonly pushKeyId?: number | undefined;
  readonly tokenKind?: PushTokenKind | undefined;
  readonly tokenId?: string | undefined;
  readonly bouncerPublicKey?: string | undefined;
  readonly encryptedPushRegistration?: string | undefined;
}

/** Zulip's check_push_key: base64 of exactly 33 bytes, the first 0x31. Returns the canonical base64. */
function checkPushKey(pushKey: string): string {
  const bytes = decodeBase64(pushKey);
  if (bytes === null || bytes.length !== 33 || bytes[0] !== SECRETBOX_CRYPTOSYSTEM)
    throw new BadRequestError("Invalid `push_key`");
  return bytes.toString("base64");
}

/**
 * Zulip's b64decode_token_id_base64. Zulip stores the decoded bytes as a signed 64-bit
 * integer, so anything but 8 bytes cannot be a token ID: refused here as invalid
 * (Zulip would accept fewer bytes and fail on more).
 */
function checkTokenId(tokenId: string): string {
  const bytes = decodeBase64(tokenId);
  if (bytes === null) throw new BadRequestError("`token_id` is not Base64 encoded");
  if (bytes.length !== 8) throw new BadRequestError("Invalid `token_id`");
  return bytes.toString("base64");
}

/**
 * POST /mobile_push/register. `pushConfigured` says whether the server has a bouncer
 * (the HTTP layer knows its configuration; the order of refusals is Zulip's).
 * Sending only the key group rotates the key; only the token group rotates the token
 * (and forwards it to the bouncer); both register the device.
 */
export function registerPushDevice(
  state: StoreState,
  userId: number,
  input: PushRegistrationInput,
  pushConfigured: boolean,
): void {
  const user = requireHuman(state, userId);
  if (!pushConfigured) throw new PushServiceNotConfiguredError();
  const device = requireOwnDevice(state, user.id, input.deviceId);
  const { pushKey, pushKeyId, tokenKind, tokenId, bouncerPublicKey, encryptedPushRegistration } = input;
  const keyGroup = pushKey !== undefined && pushKeyId !== undefined;
  const tokenGroup =
    tokenKind !== undefined &&
    tokenId !== undefined &&
    bouncerPublicKey !== undefined &&
    encryptedPushRegistration !== undefined;
  if (!keyGroup && !tokenGroup)
    throw new BadRequestError(
      "Missing parameters: must provide either all push key fields, all token fields, or both.",
    );

  if (keyGroup && !tokenGroup) {
    if (device.pushKeyId === null) throw new BadRequestError("No push registration exists to rotate key for.");
    const key = checkPushKey(pushKey);
    if (device.pushKey === key && device.pushKeyId === pushKeyId) return;
    updateDevice(state, { ...device, pushKey: key, pushKeyId }, { pushKeyId });
    return;
  }
  // A registration the bouncer has not answered yet: a second one would race it.
  if (device.pushRegistrationErrorCode === null && device.pendingPushTokenId !== null)
    throw new BadRequestError("A registration for the device already in progress.");
  const token = checkTokenId(tokenId!);
  const forward = {
    tokenId: token,
    tokenKind: tokenKind!,
    bouncerPublicKey: bouncerPublicKey!,
    encryptedPushRegistration: encryptedPushRegistration!,
  };
  const now = state.now();
  if (!keyGroup) {
    if (device.pushKeyId === null) throw new BadRequestError("No push registration exists to rotate token for.");
    if (device.pushRegistrationErrorCode === null && device.pushTokenId === token) return;
    const next: Device = {
      ...device,
      pendingPushTokenId: token,
      pushTokenLastUpdatedTimestamp: now,
      pushRegistrationErrorCode: null,
    };
    updateDevice(
      state,
      next,
      { pendingPushTokenId: token, pushTokenLastUpdatedTimestamp: now, pushRegistrationErrorCode: null },
      forward,
    );
    return;
  }
  const key = checkPushKey(pushKey!);
  if (
    device.pushRegistrationErrorCode === null &&
    device.pushKeyId === pushKeyId &&
    device.pushKey === key &&
    device.pushTokenId === token &&
    device.pushTokenKind === tokenKind
  )
    return;
  const next: Device = {
    ...device,
    pushKey: key,
    pushKeyId: pushKeyId!,
    pushTokenKind: tokenKind!,
    pendingPushTokenId: token,
    pushTokenLastUpdatedTimestamp: now,
    pushRegistrationErrorCode: null,
  };
  updateDevice(
    state,
    next,
    {
      pushKeyId: pushKeyId!,
      pendingPushTokenId: token,
      pushTokenLastUpdatedTimestamp: now,
      pushRegistrationErrorCode: null,
    },
    forward,
  );
}

/** One write: the device, its update event, and (for a token) the outbox item that forwards it to the bouncer. */
function updateDevice(
  state: StoreState,
  next: Device,
  changes: DeviceChanges,
  forward?: Omit<Extract<PushOutboxItem, { kind: "register" }>, "id" | "kind" | "userId" | "deviceId" | "createdAt">,
): void {
  state.write((ctx) => {
    state.tables.devices.putSync(next.id, next);
    if (forward) {
      const item: PushOutboxItem = {
        id: state.allocate("nextPushOutboxId"),
        kind: "register",
        userId: next.userId,
        deviceId: next.id,
        createdAt: state.now(),
        ...forward,
      };
      state.tables.pushOutbox.putSync(item.id, item);
      ctx.changed({ kind: "pushItem", id: item.id, op: "added" });
    }
    ctx.afterCommit(() => state.indexDevice(next));
    ctx.emit({ type: "device", op: "update", userId: next.userId, deviceId: next.id, changes }, () =>
      userAudience(next.userId),
    );
  });
}

/** Applies a device change inside an open write (the outbox's completions). */
export function updateDeviceInTxn(state: StoreState, ctx: WriteContext, next: Device, changes: DeviceChanges): void {
  state.tables.devices.putSync(next.id, next);
  ctx.afterCommit(() => state.indexDevice(next));
  ctx.emit({ type: "device", op: "update", userId: next.userId, deviceId: next.id, changes }, () =>
    userAudience(next.userId),
  );
}
