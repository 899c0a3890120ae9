/**
 * @module http/endpoints/drafts/edit-draft
 * PATCH /drafts/{draft_id} — https://zulip.com/api/edit-draft
 * Replaces the draft; another user's draft answers 404 "Draft does not exist" like a missing one.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { draftIdParam, draftSchema, toDraftInput } from "./draft-params.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/drafts/:draft_id",
  auth: "user",
  params: { draft: p.json(draftSchema) },
  handler(ctx, input) {
    ctx.store.editDraft(ctx.user.id, draftIdParam(ctx), toDraftInput(input.draft));
    return {};
  },
});
