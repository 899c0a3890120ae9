/**
 * @module http/endpoints/saved-snippets
 * A user's saved snippets.
 */
import type { Endpoint } from "../../endpoint.js";
import {
  createSavedSnippetEndpoint,
  deleteSavedSnippetEndpoint,
  editSavedSnippetEndpoint,
  listSavedSnippetsEndpoint,
} from "./saved-snippets.js";

export const SAVED_SNIPPET_ENDPOINTS: readonly Endpoint[] = [
  createSavedSnippetEndpoint,
  listSavedSnippetsEndpoint,
  editSavedSnippetEndpoint,
  deleteSavedSnippetEndpoint,
];
