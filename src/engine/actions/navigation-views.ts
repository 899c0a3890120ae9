/**
 * @module actions/navigation-views
 * Navigation views (Zulip's zerver/views/navigation_views.py and actions/navigation_views.py): per user, the pinning of
 * a built-in view of the left sidebar, or a custom view with a name. Fragments and names are stripped of surrounding
 * whitespace first; a fragment is unique per user, and so is a name. Only their owner sees or changes them.
 * Deviations (Zulip sets no bounds): fragments up to 2,000 characters, names up to 200, 1,000 views per user.
 */
import { userAudience } from "../events/audience.js";
import { BadRequestError, NotFoundError } from "../errors.js";
import { exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import type { NavigationView } from "../types.js";
import { requireActiveUser } from "./users.js";

export const MAX_NAVIGATION_FRAGMENT_LENGTH = 2000;
export const MAX_NAVIGATION_NAME_LENGTH = 200;
export const MAX_NAVIGATION_VIEWS = 1000;

/** Zulip's BUILT_IN_VIEW_FRAGMENTS: these take no custom name. */
const BUILT_IN_VIEW_FRAGMENTS = new Set([
  "inbox",
  "recent",
  "feed",
  "drafts",
  "narrow/has/reaction/sender/me",
  "narrow/is/mentioned",
  "narrow/is/starred",
]);

const ALREADY_EXISTS = "Navigation view already exists.";
const DOES_NOT_EXIST = "Navigation view does not exist.";

/** Zulip's StringConstraints(strip_whitespace=True, min_length=1), with this server's length bound. */
function checkText(name: "fragment" | "name", raw: string, max: number): string {
  const text = raw.trim();
  if (text.length === 0) throw new BadRequestError(`${name} cannot be blank`);
  if (exceedsCodePoints(text, max)) throw new BadRequestError(`${name} is too long (limit: ${max} characters)`);
  return text;
}

const checkFragment = (raw: string) => checkText("fragment", raw, MAX_NAVIGATION_FRAGMENT_LENGTH);
const checkName = (raw: string | undefined) =>
  raw === undefined ? undefined : checkText("name", raw, MAX_NAVIGATION_NAME_LENGTH);

/** GET /navigation_views and register's `navigation_views`: the user's own, in the order added. */
export function listNavigationViews(state: StoreState, userId: number): readonly NavigationView[] {
  return state.navigationViewsOf.get(userId)?.views ?? [];
}

function store(state: StoreState, userId: number, views: readonly NavigationView[]): void {
  const record = { userId, views };
  state.tables.navigationViews.putSync(userId, record);
}

/** POST /navigation_views. */
export function addNavigationView(
  state: StoreState,
  userId: number,
  input: { readonly fragment: string; readonly isPinned: boolean; readonly name?: string },
): void {
  const user = requireActiveUser(state, userId);
  const fragment = checkFragment(input.fragment);
  const name = checkName(input.name);
  if (BUILT_IN_VIEW_FRAGMENTS.has(fragment)) {
    if (name !== undefined) throw new BadRequestError("Built-in views cannot have a custom name.");
  } else if (name === undefined) throw new BadRequestError("Custom views must have a valid name.");
  const views = listNavigationViews(state, user.id);
  if (views.some((v) => v.fragment === fragment || (name !== undefined && v.name === name)))
    throw new BadRequestError(ALREADY_EXISTS);
  if (views.length >= MAX_NAVIGATION_VIEWS)
    throw new BadRequestError(`Too many navigation views (maximum ${MAX_NAVIGATION_VIEWS}).`);
  const view: NavigationView = { fragment, isPinned: input.isPinned, name: name ?? null };
  const next = [...views, view];
  state.write((ctx) => {
    store(state, user.id, next);
    ctx.afterCommit(() => state.indexNavigationViews({ userId: user.id, views: next }));
    ctx.emit({ type: "navigation_view", op: "add", userId: user.id, view }, () => userAudience(user.id));
  });
}

/** PATCH /navigation_views/{fragment}: Zulip saves and tells the user even when nothing is given. */
export function updateNavigationView(
  state: StoreState,
  userId: number,
  rawFragment: string,
  changes: { readonly isPinned?: boolean; readonly name?: string },
): void {
  const user = requireActiveUser(state, userId);
  const fragment = checkFragment(rawFragment);
  const name = checkName(changes.name);
  if (BUILT_IN_VIEW_FRAGMENTS.has(fragment) && name !== undefined)
    throw new BadRequestError("Built-in views cannot have a custom name.");
  const views = listNavigationViews(state, user.id);
  if (name !== undefined && views.some((v) => v.name === name)) throw new BadRequestError(ALREADY_EXISTS);
  const index = views.findIndex((v) => v.fragment === fragment);
  if (index < 0) throw new NotFoundError(DOES_NOT_EXIST);
  const current = views[index]!;
  const view: NavigationView = {
    fragment,
    isPinned: changes.isPinned ?? current.isPinned,
    name: name ?? current.name,
  };
  const next = views.map((v, i) => (i === index ? view : v));
  state.write((ctx) => {
    store(state, user.id, next);
    ctx.afterCommit(() => state.indexNavigationViews({ userId: user.id, views: next }));
    ctx.emit(
      {
        type: "navigation_view",
        op: "update",
        userId: user.id,
        fragment,
        ...(name === undefined ? {} : { name }),
        ...(changes.isPinned === undefined ? {} : { isPinned: changes.isPinned }),
      },
      () => userAudience(user.id),
    );
  });
}

/** DELETE /navigation_views/{fragment}. */
export function removeNavigationView(state: StoreState, userId: number, rawFragment: string): void {
  const user = requireActiveUser(state, userId);
  const fragment = checkFragment(rawFragment);
  const views = listNavigationViews(state, user.id);
  if (!views.some((v) => v.fragment === fragment)) throw new NotFoundError(DOES_NOT_EXIST);
  const next = views.filter((v) => v.fragment !== fragment);
  state.write((ctx) => {
    store(state, user.id, next);
    ctx.afterCommit(() => state.indexNavigationViews({ userId: user.id, views: next }));
    ctx.emit({ type: "navigation_view", op: "remove", userId: user.id, fragment }, () => userAudience(user.id));
  });
}
