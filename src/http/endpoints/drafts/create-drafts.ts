/**
 * @module http/endpoints/drafts/create-drafts
 * POST /drafts — https://zulip.com/api/create-drafts
 * All drafts are checked before any is stored; the IDs come back in submission order.
 */
import { z } from "zod";
import { MAX_DRAFTS_PER_REQUEST } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { compoundRef, p } from "../../params.js";
import { draftProbes, draftSchema, toDraftInput } from "./draft-params.js";

export default defineEndpoint({
  method: "POST",
  path: "/drafts",
  auth: "user",
  params: {
    drafts: compoundRef(p.json(z.array(draftSchema), { maxItems: MAX_DRAFTS_PER_REQUEST }), [
      "channel",
      "user",
    ]).default([]),
  },
  testing: { probes: { drafts: draftProbes((draft) => [draft]) } },
  handler(ctx, input) {
    return { ids: ctx.store.createDrafts(ctx.user.id, input.drafts.map(toDraftInput)) };
  },
});
