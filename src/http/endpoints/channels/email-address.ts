/**
 * @module http/endpoints/channels/email-address
 * GET /streams/{stream_id}/email_address — https://zulip.com/api/get-stream-email-address
 * The channel's address for Zulip's email gateway, in Zulip's form
 * (`NAME.TOKEN.show-sender@HOST`), for callers who may post in the channel.
 *
 * Deviation: the address is inert. parley has no email gateway and receives no mail:
 * a message sent to the address goes nowhere. The host is the server's EXTERNAL_HOST
 * (without port) and the token is derived, so the same channel and sender always get
 * the same address.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";
import { channelIdParam } from "./path.js";

/** Zulip's encode_email_address_helper: the channel name, email-safe, before the token. */
function emailSafeName(name: string): string {
  return name.replace(/\s+/g, "-").replace(/[^\p{L}\p{N}_-]/gu, "");
}

export default defineEndpoint({
  method: "GET",
  path: "/streams/:stream_id/email_address",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: { sender_id: ref(p.int(), "user").optional() },
  testing: {
    sweepBases: [{ params: {}, for: ["stream_id"] }, { params: { stream_id: (f) => String(f.publicChannel) } }],
  },
  handler(ctx, input) {
    const { channel, token } = ctx.store.channelEmailToken(ctx.user.id, channelIdParam(ctx), input.sender_id ?? null);
    const name = emailSafeName(channel.name);
    const host = ctx.server.externalHost.replace(/:\d+$/, "");
    return { email: `${name === "" ? "" : `${name}.`}${token}.show-sender@${host}` };
  },
});
