/**
 * @module actions/linkifiers
 * Linkifiers (Zulip's RealmFilter): administrators add, change, remove and reorder
 * them; everyone in the realm reads them (GET /realm/linkifiers, register). Every
 * change sends the realm's whole list, in order, to every active user
 * (`realm_linkifiers`). Messages already sent keep the HTML they were rendered with,
 * as in Zulip; topics' `topic_links` are made from the current list when shown.
 */
import { isAdmin } from "../access.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { realmAudience } from "../events/audience.js";
import { checkLinkifier, topicLinks, type TopicLink } from "../linkifiers/linkifier.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Linkifier, User } from "../types.js";
import { requireActiveUser } from "./lookups.js";

/** Zulip's LinkifierDict fields. */
export interface LinkifierInput {
  readonly pattern: string;
  readonly urlTemplate: string;
}

/** The realm's linkifiers in Zulip's order (`order`, then ID). */
export function realmLinkifiers(state: StoreState, realmId: number): Linkifier[] {
  return [...state.linkifiers.values()]
    .filter((l) => l.realmId === realmId)
    .sort((a, b) => a.order - b.order || a.id - b.id);
}

/** A topic's links under the realm's current linkifiers (message objects' `topic_links`). */
export function realmTopicLinks(state: StoreState, realmId: number, topic: string): TopicLink[] {
  if (topic === "") return [];
  const linkifiers = realmLinkifiers(state, realmId);
  return linkifiers.length === 0 ? [] : topicLinks(linkifiers, topic);
}

function requireAdmin(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  return actor;
}

function requireLinkifier(state: StoreState, realmId: number, linkifierId: number): Linkifier {
  const linkifier = state.linkifiers.get(linkifierId);
  if (linkifier === undefined || linkifier.realmId !== realmId) throw new BadRequestError("Linkifier not found.");
  return linkifier;
}

/** Zulip strips both fields, then runs the model's checks (linkifiers/linkifier.ts checkLinkifier). */
function checked(state: StoreState, realmId: number, input: LinkifierInput, exceptId: number | null): LinkifierInput {
  const pattern = input.pattern.trim();
  const urlTemplate = input.urlTemplate.trim();
  checkLinkifier(pattern, urlTemplate, (p) =>
    [...state.linkifiers.values()].some((l) => l.realmId === realmId && l.id !== exceptId && l.pattern === p),
  );
  return { pattern, urlTemplate };
}

/** POST /realm/filters: a new linkifier, last in the realm's order. */
export function addLinkifier(state: StoreState, actorId: number, input: LinkifierInput): Linkifier {
  const actor = requireAdmin(state, actorId);
  const { pattern, urlTemplate } = checked(state, actor.realmId, input, null);
  const existing = realmLinkifiers(state, actor.realmId);
  const order = existing.reduce((max, l) => Math.max(max, l.order + 1), 0);
  return state.write((ctx) => {
    const linkifier: Linkifier = {
      id: state.allocate("nextLinkifierId"),
      realmId: actor.realmId,
      pattern,
      urlTemplate,
      order,
    };
    store(state, ctx, linkifier);
    emitList(state, ctx, actor.realmId, [...existing, linkifier]);
    return linkifier;
  });
}

/** PATCH /realm/filters/{id}: a new pattern and URL template, in the same place. */
export function updateLinkifier(state: StoreState, actorId: number, linkifierId: number, input: LinkifierInput): void {
  const actor = requireAdmin(state, actorId);
  const linkifier = requireLinkifier(state, actor.realmId, linkifierId);
  const next: Linkifier = { ...linkifier, ...checked(state, actor.realmId, input, linkifier.id) };
  state.write((ctx) => {
    store(state, ctx, next);
    emitList(
      state,
      ctx,
      actor.realmId,
      realmLinkifiers(state, actor.realmId).map((l) => (l.id === next.id ? next : l)),
    );
  });
}

/** DELETE /realm/filters/{id}. */
export function removeLinkifier(state: StoreState, actorId: number, linkifierId: number): void {
  const actor = requireAdmin(state, actorId);
  const linkifier = requireLinkifier(state, actor.realmId, linkifierId);
  state.write((ctx) => {
    state.tables.linkifiers.removeSync(linkifier.id);
    ctx.afterCommit(() => state.linkifiers.delete(linkifier.id));
    emitList(
      state,
      ctx,
      actor.realmId,
      realmLinkifiers(state, actor.realmId).filter((l) => l.id !== linkifier.id),
    );
  });
}

/**
 * PATCH /realm/linkifiers: every linkifier's ID once, in the new order (Zulip's
 * check_reorder_linkifiers; a realm without linkifiers accepts [] and hears nothing).
 */
export function reorderLinkifiers(state: StoreState, actorId: number, orderedIds: readonly number[]): void {
  const actor = requireAdmin(state, actorId);
  if (new Set(orderedIds).size < orderedIds.length)
    throw new BadRequestError("The ordered list must not contain duplicated linkifiers");
  const linkifiers = realmLinkifiers(state, actor.realmId);
  const ids = new Set(linkifiers.map((l) => l.id));
  if (orderedIds.length !== ids.size || orderedIds.some((id) => !ids.has(id)))
    throw new BadRequestError("The ordered list must enumerate all existing linkifiers exactly once");
  if (linkifiers.length === 0) return;
  const byId = new Map(linkifiers.map((l) => [l.id, l]));
  const reordered = orderedIds.map((id, order): Linkifier => ({ ...byId.get(id)!, order }));
  state.write((ctx) => {
    for (const linkifier of reordered)
      if (linkifier.order !== byId.get(linkifier.id)?.order) store(state, ctx, linkifier);
    emitList(state, ctx, actor.realmId, reordered);
  });
}

function store(state: StoreState, ctx: WriteContext, linkifier: Linkifier): void {
  state.tables.linkifiers.putSync(linkifier.id, linkifier);
  ctx.afterCommit(() => state.linkifiers.set(linkifier.id, linkifier));
}

function emitList(state: StoreState, ctx: WriteContext, realmId: number, linkifiers: readonly Linkifier[]): void {
  ctx.emit({ type: "realm_linkifiers", realmId, linkifiers }, () => realmAudience(state, realmId));
}
