/**
 * @module http/endpoints/push/register-push-device
 * POST /mobile_push/register — https://zulip.com/api/register-push-device: the push
 * key group (push_key, push_key_id) and the token group (token_kind, token_id,
 * bouncer_public_key, encrypted_push_registration). The engine checks them in
 * Zulip's order and writes the bouncer registration to the push outbox; the answer
 * is immediate (the bouncer's arrives later as a `device` event).
 * Limits beyond Zulip's: the opaque base64 strings are bounded (a sealed registration
 * of a 4096-byte token is under 6,000 characters).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

/** Zulip's uint32_validator. */
const UINT32_MAX = 0xffff_ffff;
const MAX_KEY_CHARS = 1000;
const MAX_REGISTRATION_CHARS = 10_000;

export default defineEndpoint({
  method: "POST",
  path: "/mobile_push/register",
  auth: "user",
  params: {
    device_id: ref(p.int(), "device"),
    push_key_id: p.int({ min: 0, max: UINT32_MAX }).optional(),
    push_key: p.str({ maxLength: MAX_KEY_CHARS }).optional(),
    token_kind: p.oneOf(["fcm", "apns"] as const).optional(),
    token_id: p.str({ maxLength: MAX_KEY_CHARS }).optional(),
    bouncer_public_key: p.str({ maxLength: MAX_KEY_CHARS }).optional(),
    encrypted_push_registration: p.str({ maxLength: MAX_REGISTRATION_CHARS }).optional(),
  },
  testing: {
    notRefs: {
      push_key_id: "the caller's own key's ID, chosen by their client",
      token_id: "the token the bouncer knows the device by, not an object here",
    },
  },
  handler(ctx, input) {
    ctx.store.registerPushDevice(
      ctx.user.id,
      {
        deviceId: input.device_id,
        pushKey: input.push_key,
        pushKeyId: input.push_key_id,
        tokenKind: input.token_kind,
        tokenId: input.token_id,
        bouncerPublicKey: input.bouncer_public_key,
        encryptedPushRegistration: input.encrypted_push_registration,
      },
      ctx.server.bouncer !== null,
    );
    return {};
  },
});
