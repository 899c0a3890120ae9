/**
 * @module http/endpoints/saved-snippets/saved-snippets
 * Saved snippets — https://zulip.com/api/create-saved-snippet and its siblings:
 * POST /saved_snippets, GET /saved_snippets, PATCH and DELETE /saved_snippets/{id}.
 * Titles and contents are checked (stripped, non-empty, Zulip's lengths) by the
 * engine; another user's snippet answers 404 "Saved snippet does not exist." like a
 * missing one.
 */
import type { AuthedContext } from "../../endpoint.js";
import { defineEndpoint } from "../../endpoint.js";
import { MAX_MESSAGE_LENGTH, MAX_SNIPPET_TITLE_LENGTH } from "../../../engine/index.js";
import { p } from "../../params.js";
import { savedSnippetToWire } from "../../../wire/personal.js";

const longTitle = {
  label: "a title of 200,000 characters",
  params: () => ({ title: "x".repeat(200_000), content: "c" }),
  status: 400,
  code: "BAD_REQUEST",
  msg: `title is too long (limit: ${MAX_SNIPPET_TITLE_LENGTH} characters)`,
};

/** The path's snippet ID; anything else names no snippet. */
function snippetIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["saved_snippet_id"] ?? "";
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

export const createSavedSnippetEndpoint = defineEndpoint({
  method: "POST",
  path: "/saved_snippets",
  auth: "user",
  params: { title: p.str(), content: p.str() },
  // The engine's limits, checked after stripping.
  testing: {
    worst: {
      extra: [
        longTitle,
        {
          label: "content of 200,000 characters",
          params: () => ({ title: "t", content: "x".repeat(200_000) }),
          status: 400,
          code: "BAD_REQUEST",
          msg: `content is too long (limit: ${MAX_MESSAGE_LENGTH} characters)`,
        },
        {
          label: "a title of 200,000 spaces",
          params: () => ({ title: " ".repeat(200_000), content: "c" }),
          status: 400,
          code: "BAD_REQUEST",
          msg: "title cannot be blank",
        },
      ],
    },
  },
  handler(ctx, input) {
    return { saved_snippet_id: ctx.store.createSavedSnippet(ctx.user.id, input.title, input.content).id };
  },
});

export const listSavedSnippetsEndpoint = defineEndpoint({
  method: "GET",
  path: "/saved_snippets",
  auth: "user",
  params: {},
  handler(ctx) {
    return { saved_snippets: ctx.store.savedSnippets(ctx.user.id).map(savedSnippetToWire) };
  },
});

export const editSavedSnippetEndpoint = defineEndpoint({
  method: "PATCH",
  path: "/saved_snippets/:saved_snippet_id",
  pathRefs: { saved_snippet_id: "snippet" },
  auth: "user",
  params: { title: p.str().optional(), content: p.str().optional() },
  testing: { sweepBases: [{ params: { title: "renamed" } }], worst: { extra: [longTitle] } },
  handler(ctx, input) {
    ctx.store.editSavedSnippet(ctx.user.id, snippetIdParam(ctx), {
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...(input.content !== undefined ? { content: input.content } : {}),
    });
    return {};
  },
});

export const deleteSavedSnippetEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/saved_snippets/:saved_snippet_id",
  pathRefs: { saved_snippet_id: "snippet" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.deleteSavedSnippet(ctx.user.id, snippetIdParam(ctx));
    return {};
  },
});
