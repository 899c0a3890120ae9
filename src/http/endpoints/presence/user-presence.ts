/**
 * @module http/endpoints/presence/user-presence
 * GET /users/{user_id_or_email}/presence — https://zulip.com/api/get-user-presence
 * One user's legacy presence without `client` and `pushable`; the aggregated status
 * reads "offline" once older than the offline threshold, as Zulip.
 */
import { OFFLINE_THRESHOLD_SECS } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { legacyClientPresence, presenceTimestamps } from "../../../wire/presence.js";
import { userByPathSegment } from "../users/lookup.js";

export default defineEndpoint({
  method: "GET",
  path: "/users/:user_id_or_email/presence",
  pathRefs: { user_id_or_email: "userOrEmail" },
  auth: "user",
  answeredByWriter: "presence pings change the writer's memory only until its flush (every 2 s)",
  params: {},
  handler(ctx) {
    const named = ctx.pathParams["user_id_or_email"] ?? "";
    const target = userByPathSegment(ctx.store, ctx.realm.id, named);
    const presence = ctx.store.userPresence(ctx.user.id, target.id, named);
    const { status, timestamp } = legacyClientPresence(presenceTimestamps(target, presence));
    const stale = Date.now() / 1000 - timestamp > OFFLINE_THRESHOLD_SECS;
    return {
      presence: { aggregated: { status: stale ? "offline" : status, timestamp }, website: { status, timestamp } },
    };
  },
});
