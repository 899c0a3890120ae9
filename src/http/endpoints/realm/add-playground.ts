/**
 * @module http/endpoints/realm/add-playground
 * POST /realm/playgrounds — https://zulip.com/api/add-code-playground
 * Administrators only; the checks (RFC 6570 template with only `code`, Pygments
 * language characters, uniqueness) live in the engine (actions/playgrounds.ts).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/realm/playgrounds",
  auth: "user",
  params: {
    name: p.str({ maxLength: 1000 }),
    pygments_language: p.str({ maxLength: 1000 }),
    url_template: p.str({ maxLength: 10_000 }),
  },
  handler(ctx, input) {
    const playground = ctx.store.addPlayground(ctx.user.id, {
      name: input.name,
      pygmentsLanguage: input.pygments_language,
      urlTemplate: input.url_template,
    });
    return { id: playground.id };
  },
});
