/**
 * @module http/endpoints/drafts
 * Drafts synchronized between a user's clients.
 */
import type { Endpoint } from "../../endpoint.js";
import createDrafts from "./create-drafts.js";
import editDraft from "./edit-draft.js";
import { deleteDraftEndpoint, listDraftsEndpoint } from "./list-delete.js";

export const DRAFT_ENDPOINTS: readonly Endpoint[] = [createDrafts, listDraftsEndpoint, editDraft, deleteDraftEndpoint];
