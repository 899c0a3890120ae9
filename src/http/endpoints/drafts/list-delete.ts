/**
 * @module http/endpoints/drafts/list-delete
 * GET /drafts (https://zulip.com/api/get-drafts): the caller's drafts, most recently
 * edited first, with their count. DELETE /drafts/{draft_id}: 404 "Draft does not
 * exist" for another user's or a missing one.
 */
import { defineEndpoint } from "../../endpoint.js";
import { draftToWire } from "../../../wire/personal.js";
import { draftIdParam } from "./draft-params.js";

export const listDraftsEndpoint = defineEndpoint({
  method: "GET",
  path: "/drafts",
  auth: "user",
  params: {},
  handler(ctx) {
    const drafts = ctx.store.drafts(ctx.user.id);
    return { count: drafts.length, drafts: drafts.map(draftToWire) };
  },
});

export const deleteDraftEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/drafts/:draft_id",
  pathRefs: { draft_id: "draft" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.deleteDraft(ctx.user.id, draftIdParam(ctx));
    return {};
  },
});
