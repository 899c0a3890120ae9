/**
 * @module http/endpoints/realm/deactivate-realm
 * POST /realm/deactivate — https://zulip.com/api/deactivate-realm
 * An organization owner deactivates the organization: every API key of it is refused
 * from the next request on, its event queues get the `realm deactivated` event and are
 * collected, logins are refused, the owners are mailed. deletion_delay_days is checked
 * against Zulip's default window (at least 14 days, or null) and otherwise ignored:
 * parley never deletes a deactivated organization's data (engine actions/realm-deactivation).
 */
import { z } from "zod";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { realmUrl } from "../../realm-url.js";

export default defineEndpoint({
  method: "POST",
  path: "/realm/deactivate",
  auth: "user",
  params: { deletion_delay_days: p.json(z.number().int().nullable()).optional() },
  testing: {
    notRefs: { deletion_delay_days: "a number of days, not an object" },
  },
  handler(ctx, input) {
    ctx.store.deactivateRealm(ctx.user.id, {
      deletionDelayDays: input.deletion_delay_days ?? null,
      realmUrl: realmUrl(ctx.server, ctx.realm),
    });
    return {};
  },
});
