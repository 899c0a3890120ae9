/**
 * @module http/endpoints/users/user-status
 * User status — https://zulip.com/api/update-status, https://zulip.com/api/update-status-for-user
 * and https://zulip.com/api/get-user-status: POST /users/me/status, the administrators'
 * POST /users/{user_id}/status (no `away`) and GET /users/{user_id}/status. The rules
 * (60-character text after stripping, emoji checked as reactions, `away` as the inverse
 * of presence_enabled, who may set whose) are the engine's (actions/user-status.ts).
 */
import { MAX_STATUS_TEXT_LENGTH } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { userIdParam } from "./path.js";

// Names and codes are short (Zulip's emoji names, a custom emoji's ID); the bound keeps
// echoed errors short. The text is bounded by the engine after stripping, as Zulip does.
const statusParams = {
  status_text: p.str().optional(),
  emoji_name: p.str({ maxLength: 80 }).optional(),
  emoji_code: p.str({ maxLength: 80 }).optional(),
  reaction_type: p.str({ maxLength: 80 }).optional(),
};

const longText = {
  label: "a status text of 200,000 characters",
  params: () => ({ status_text: "x".repeat(200_000) }),
  status: 400,
  code: "BAD_REQUEST",
  msg: `status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`,
};

export const updateOwnStatusEndpoint = defineEndpoint({
  method: "POST",
  path: "/users/me/status",
  auth: "user",
  params: { away: p.bool().optional(), ...statusParams },
  testing: { worst: { extra: [longText] } },
  handler(ctx, input) {
    ctx.store.updateOwnStatus(ctx.user.id, {
      away: input.away,
      statusText: input.status_text,
      emojiName: input.emoji_name,
      emojiCode: input.emoji_code,
      reactionType: input.reaction_type,
    });
    return {};
  },
});

export const updateStatusForUserEndpoint = defineEndpoint({
  method: "POST",
  path: "/users/:user_id/status",
  pathRefs: { user_id: "user" },
  auth: "user",
  params: statusParams,
  // A member (who sends the worst inputs) is refused before the text is looked at, as in Zulip.
  testing: { sweepBases: [{ params: { status_text: "busy" } }] },
  handler(ctx, input) {
    ctx.store.updateStatusFor(ctx.user.id, userIdParam(ctx.pathParams), {
      statusText: input.status_text,
      emojiName: input.emoji_name,
      emojiCode: input.emoji_code,
      reactionType: input.reaction_type,
    });
    return {};
  },
});

export const getUserStatusEndpoint = defineEndpoint({
  method: "GET",
  path: "/users/:user_id/status",
  pathRefs: { user_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    return { status: ctx.store.userStatus(ctx.user.id, userIdParam(ctx.pathParams)) };
  },
});
