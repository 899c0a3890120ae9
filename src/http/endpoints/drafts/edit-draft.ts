/**
 * @module http/endpoints/drafts/edit-draft
 * PATCH /drafts/{draft_id} — https://zulip.com/api/edit-draft
 * Replaces the draft; another user's draft answers 404 "Draft does not exist" like a missing one.
 */
import { defineEndpoint } from "../../endpoint.js";
import { compoundRef, p } from "../../params.js";
import { draftIdParam, draftProbes, draftSchema, toDraftInput } from "./draft-params.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/drafts/:draft_id",
  pathRefs: { draft_id: "draft" },
  auth: "user",
  params: { draft: compoundRef(p.json(draftSchema), ["channel", "user"]) },
  // `draft` replaces each caller's own draft.
  testing: {
    probes: { draft: draftProbes((draft) => draft) },
    sweepBases: [
      { params: { draft: JSON.stringify({ type: "", to: [], topic: "", content: "c" }) }, for: ["draft_id"] },
      { params: { draft_id: (fixture) => String(fixture.ownDraft) }, for: ["draft"] },
    ],
  },
  handler(ctx, input) {
    ctx.store.editDraft(ctx.user.id, draftIdParam(ctx), toDraftInput(input.draft));
    return {};
  },
});
