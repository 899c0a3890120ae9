/**
 * @module push/deliver
 * One bouncer request per outbox item, and the E2EE test notification. What the
 * bouncer's answer means is decided here (the engine then records it):
 * - unreachable, 5xx, or a code saying this server's registration is at fault:
 *   RetryLaterError — the sender keeps the item and backs off (nothing is lost);
 * - any other refusal: a registration records the bouncer's code on the device
 *   (Zulip's push_registration_error_code); a notification is dropped, as Zulip does.
 */
import {
  BadRequestError,
  clip,
  InvalidRemotePushDeviceTokenError,
  NoActivePushDeviceError,
  PushBouncerError,
  PushServiceNotConfiguredError,
  type PushDelivery,
  type PushItemOutcome,
  type Store,
} from "../engine/index.js";
import {
  BouncerRefusedError,
  BouncerServerError,
  BouncerUnreachableError,
  SERVER_LEVEL_CODES,
  type BouncerClient,
} from "./bouncer-client.js";
import { legacyBasePayload, messagePayload, pushRequests, removePayload, testPayload } from "./payload.js";

/** The bouncer cannot take requests now; try again later. */
export class RetryLaterError extends Error {}

function isServerLevel(error: BouncerRefusedError): boolean {
  return error.code === null ? error.status < 400 || error.status >= 500 : SERVER_LEVEL_CODES.has(error.code);
}

/** Sends what one item asks; resolves with the outcome to record, or throws RetryLaterError. */
export async function deliverPushItem(
  client: BouncerClient,
  delivery: PushDelivery,
  baseUrl: string,
): Promise<PushItemOutcome> {
  try {
    if (delivery.kind === "register") {
      await client.post("push/e2ee/register", {
        realm_uuid: delivery.realmUuid,
        token_id: delivery.tokenId,
        bouncer_public_key: delivery.bouncerPublicKey,
        encrypted_push_registration: delivery.encryptedPushRegistration,
      });
      return { kind: "sent" };
    }
    const payload =
      delivery.kind === "message"
        ? messagePayload(delivery, baseUrl)
        : removePayload(delivery.realm, baseUrl, delivery.userId, delivery.messageIds);
    const answer = await client.post("push/e2ee/notify", {
      realm_uuid: delivery.realmUuid,
      push_requests: pushRequests(delivery.targets, payload, delivery.kind === "message"),
    });
    return { kind: "sent", deleteTokenIds: tokenIdsOf(answer) };
  } catch (error) {
    if (error instanceof BouncerUnreachableError || error instanceof BouncerServerError)
      throw new RetryLaterError(error.message, { cause: error });
    if (error instanceof BouncerRefusedError) {
      if (isServerLevel(error)) throw new RetryLaterError(error.message, { cause: error });
      return delivery.kind === "register"
        ? { kind: "refused", code: error.code ?? "BAD_REQUEST" }
        : { kind: "dropped" };
    }
    throw error;
  }
}

/**
 * A test request's bouncer trouble as the client sees it (both test notifications; only
 * the legacy one passes INVALID_REMOTE_PUSH_DEVICE_TOKEN on as such, as Zulip's does).
 */
function testFailure(error: unknown, legacy: boolean): unknown {
  if (error instanceof BouncerUnreachableError)
    return new PushBouncerError("FAILED_TO_CONNECT_BOUNCER", { cause: error });
  if (error instanceof BouncerServerError)
    return new PushBouncerError("INTERNAL_SERVER_ERROR_ON_BOUNCER", { cause: error });
  if (error instanceof BouncerRefusedError) {
    if (isServerLevel(error)) return new PushBouncerError("ADMIN_ACTION_REQUIRED", { cause: error });
    if (legacy && error.code === "INVALID_REMOTE_PUSH_DEVICE_TOKEN") return new InvalidRemotePushDeviceTokenError();
    return new BadRequestError(clip(error.message));
  }
  return error;
}

/**
 * POST /mobile_push/test_notification (deprecated): Zulip's send_test_push_notification
 * through the bouncer, one request per legacy token, sent while the client waits; the
 * bouncer finds the token among those registered for this server (parley registers
 * none itself: a token it does not know is "Device not recognized by the push
 * bouncer"). Without a bouncer nothing is sent, as on a Zulip server with no push
 * service set up.
 */
export async function sendLegacyTestNotification(
  store: Store,
  client: BouncerClient | null,
  userId: number,
  token: string | null,
  baseUrl: string,
): Promise<void> {
  const { realm, realmUuid, targets } = store.legacyTestTargets(userId, token);
  if (client === null) return;
  const basePayload = legacyBasePayload(realm, baseUrl, userId);
  for (const target of targets) {
    try {
      await client.post("push/test_notification", {
        realm_uuid: realmUuid,
        user_id: userId,
        token: target.token,
        token_kind: target.kind,
        base_payload: basePayload,
      });
    } catch (error) {
      throw testFailure(error, true);
    }
  }
}

function tokenIdsOf(answer: Record<string, unknown>): string[] {
  const ids = answer["delete_token_ids"];
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : [];
}

/**
 * POST /mobile_push/e2ee/test_notification: sent at once (the client waits), with
 * Zulip's errors for a bouncer that is misconfigured (403), unreachable or failing (502).
 */
export async function sendTestNotification(
  store: Store,
  client: BouncerClient | null,
  userId: number,
  deviceId: number | null,
  baseUrl: string,
): Promise<void> {
  const { realm, realmUuid, targets } = store.testPushTargets(userId, deviceId);
  if (client === null) throw new PushServiceNotConfiguredError();
  const payload = testPayload(realm, baseUrl, userId, Math.floor(Date.now() / 1000));
  let answer: Record<string, unknown>;
  try {
    answer = await client.post("push/e2ee/notify", {
      realm_uuid: realmUuid,
      push_requests: pushRequests(targets, payload, true),
    });
  } catch (error) {
    throw testFailure(error, false);
  }
  const gone = tokenIdsOf(answer);
  store.clearPushTokens(userId, gone);
  // Every device the test went to is unknown at the bouncer: none is active any more.
  if (targets.every((t) => gone.includes(t.tokenId))) throw new NoActivePushDeviceError();
}
