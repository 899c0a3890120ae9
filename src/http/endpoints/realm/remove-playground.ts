/**
 * @module http/endpoints/realm/remove-playground
 * DELETE /realm/playgrounds/{playground_id} — https://zulip.com/api/remove-code-playground
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/realm/playgrounds/:playground_id",
  auth: "user",
  params: {},
  // test/http/playgrounds.test.ts
  testing: {
    notRefs: { playground_id: "another realm's playground is 'Invalid playground' exactly like a missing one" },
  },
  handler(ctx) {
    const raw = ctx.pathParams["playground_id"] ?? "";
    // Zulip's path converter takes digits only; anything else names no playground.
    if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Invalid playground");
    ctx.store.removePlayground(ctx.user.id, Number(raw));
    return {};
  },
});
