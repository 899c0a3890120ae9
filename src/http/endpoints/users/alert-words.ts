/**
 * @module http/endpoints/users/alert-words
 * GET, POST and DELETE /users/me/alert_words — https://zulip.com/api/get-alert-words,
 * https://zulip.com/api/add-alert-words, https://zulip.com/api/remove-alert-words.
 * Each answers the user's whole list after the change; the checks and the matching at
 * send and edit are the engine's (actions/alert-words.ts).
 */
import { z } from "zod";
import { MAX_ALERT_WORD_LENGTH } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

const wordList = () => p.json(z.array(z.string()));

export const listAlertWordsEndpoint = defineEndpoint({
  method: "GET",
  path: "/users/me/alert_words",
  auth: "user",
  params: {},
  handler(ctx) {
    return { alert_words: ctx.store.alertWords(ctx.user.id) };
  },
});

export const addAlertWordsEndpoint = defineEndpoint({
  method: "POST",
  path: "/users/me/alert_words",
  auth: "user",
  params: { alert_words: wordList() },
  testing: {
    worst: {
      extra: [
        {
          label: "a word of 200,000 characters",
          params: () => ({ alert_words: JSON.stringify(["x".repeat(200_000)]) }),
          status: 400,
          code: "BAD_REQUEST",
          msg: `alert_words[0] is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`,
        },
      ],
    },
  },
  handler(ctx, input) {
    return { alert_words: ctx.store.addAlertWords(ctx.user.id, input.alert_words) };
  },
});

export const removeAlertWordsEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/users/me/alert_words",
  auth: "user",
  params: { alert_words: wordList() },
  handler(ctx, input) {
    return { alert_words: ctx.store.removeAlertWords(ctx.user.id, input.alert_words) };
  },
});
