/**
 * @module http/endpoints/realm/linkifiers
 * Linkifiers — https://zulip.com/api/get-linkifiers and its siblings: GET
 * /realm/linkifiers (everyone in the realm), POST /realm/filters, PATCH and DELETE
 * /realm/filters/{filter_id}, PATCH /realm/linkifiers (the new order). Administrators
 * change them; the checks (RE2 pattern, URL template, permissions) live in the
 * engine (actions/linkifiers.ts).
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { linkifierToWire } from "../../../wire/linkifier.js";

/** parley's bounds (Zulip has none): far above any real linkifier. */
const MAX_PATTERN_LENGTH = 1000;
const MAX_URL_TEMPLATE_LENGTH = 10_000;
/** Linkifiers one reorder names at most. */
const MAX_LINKIFIERS_IN_ORDER = 1000;

const pattern = () => p.str({ maxLength: MAX_PATTERN_LENGTH });
const urlTemplate = () => p.str({ maxLength: MAX_URL_TEMPLATE_LENGTH });

function filterIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["filter_id"] ?? "";
  // Zulip's path takes digits only; anything else names no linkifier.
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Linkifier not found.");
  return Number(raw);
}

export const listLinkifiers = defineEndpoint({
  method: "GET",
  path: "/realm/linkifiers",
  auth: "user",
  params: {},
  handler(ctx) {
    return { linkifiers: ctx.store.linkifiers(ctx.user.id).map(linkifierToWire) };
  },
});

export const addLinkifier = defineEndpoint({
  method: "POST",
  path: "/realm/filters",
  auth: "user",
  params: { pattern: pattern(), url_template: urlTemplate() },
  handler(ctx, input) {
    const linkifier = ctx.store.addLinkifier(ctx.user.id, { pattern: input.pattern, urlTemplate: input.url_template });
    return { id: linkifier.id };
  },
});

export const updateLinkifier = defineEndpoint({
  method: "PATCH",
  path: "/realm/filters/:filter_id",
  pathRefs: { filter_id: "linkifier" },
  auth: "user",
  params: { pattern: pattern(), url_template: urlTemplate() },
  testing: {
    sweepBases: [{ params: { pattern: "SWEEP-(?P<id>[0-9]+)", url_template: "https://sweep.example/{id}" } }],
  },
  handler(ctx, input) {
    ctx.store.updateLinkifier(ctx.user.id, filterIdParam(ctx), {
      pattern: input.pattern,
      urlTemplate: input.url_template,
    });
    return {};
  },
});

export const removeLinkifier = defineEndpoint({
  method: "DELETE",
  path: "/realm/filters/:filter_id",
  pathRefs: { filter_id: "linkifier" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.removeLinkifier(ctx.user.id, filterIdParam(ctx));
    return {};
  },
});

export const reorderLinkifiers = defineEndpoint({
  method: "PATCH",
  path: "/realm/linkifiers",
  auth: "user",
  params: {
    ordered_linkifier_ids: ref(p.json(j.intList(), { maxItems: MAX_LINKIFIERS_IN_ORDER }), "linkifier"),
  },
  testing: {
    probes: {
      ordered_linkifier_ids: [{ names: "linkifier", label: "ID list", encode: (id) => JSON.stringify([id]) }],
    },
  },
  handler(ctx, input) {
    ctx.store.reorderLinkifiers(ctx.user.id, input.ordered_linkifier_ids);
    return {};
  },
});
