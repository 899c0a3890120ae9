/**
 * @module actions/playgrounds
 * Code playgrounds (POST /realm/playgrounds, DELETE /realm/playgrounds/{id}):
 * administrators only. The URL template must be an RFC 6570 template (parsed by the
 * uri-template package) whose only variable is `code`; the Pygments language is at
 * most 40 characters of Zulip's allowed set. (realm, language, name) is unique. Every
 * change sends the realm's complete list to every active user of the realm.
 */
import { isAdmin } from "../access.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { realmAudience } from "../events/audience.js";
import { parseUrlTemplate } from "../linkifiers/url-template.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Playground, User } from "../types.js";
import { requireActiveUser } from "./users.js";

/** Zulip's RealmPlayground.MAX_PYGMENTS_LANGUAGE_LENGTH. */
export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
const PYGMENTS_LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;

export interface PlaygroundInput {
  readonly name: string;
  readonly pygmentsLanguage: string;
  readonly urlTemplate: string;
}

/** The realm's playgrounds, by ID. */
export function realmPlaygrounds(state: StoreState, realmId: number): Playground[] {
  return [...state.playgrounds.values()].filter((p) => p.realmId === realmId).sort((a, b) => a.id - b.id);
}

function requireAdmin(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (!isAdmin(actor))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  return actor;
}

/** The template's variable names, or "Invalid URL template." (Zulip's url_template_validator). */
function templateVariables(template: string): ReadonlySet<string> {
  const parsed = parseUrlTemplate(template);
  if (parsed === null) throw new BadRequestError("Invalid URL template.");
  return parsed.variables;
}

/**
 * Checked in the order of Zulip's full_clean: each field (url_template, name,
 * pygments_language), then the template's variables, then uniqueness.
 */
export function addPlayground(state: StoreState, actorId: number, input: PlaygroundInput): Playground {
  const actor = requireAdmin(state, actorId);
  const variables = templateVariables(input.urlTemplate);
  if (input.name === "") throw new BadRequestError("This field cannot be blank.");
  const language = input.pygmentsLanguage;
  if (language === "") throw new BadRequestError("This field cannot be blank.");
  const length = [...language].length;
  if (length > MAX_PYGMENTS_LANGUAGE_LENGTH)
    throw new BadRequestError(
      `Ensure this value has at most ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters (it has ${length}).`,
    );
  if (!PYGMENTS_LANGUAGE.test(language)) throw new BadRequestError("Invalid characters in pygments language");
  if (!variables.has("code")) throw new BadRequestError('Missing the required variable "code" in the URL template');
  if (variables.size !== 1) throw new BadRequestError('"code" should be the only variable present in the URL template');
  const existing = realmPlaygrounds(state, actor.realmId);
  if (existing.some((p) => p.name === input.name && p.pygmentsLanguage === language)) {
    throw new BadRequestError("Realm playground with this Realm, Pygments language and Name already exists.");
  }
  return state.write((ctx) => {
    const playground: Playground = {
      id: state.allocate("nextPlaygroundId"),
      realmId: actor.realmId,
      name: input.name,
      pygmentsLanguage: language,
      urlTemplate: input.urlTemplate,
    };
    state.tables.playgrounds.putSync(playground.id, playground);
    ctx.afterCommit(() => state.playgrounds.set(playground.id, playground));
    emitList(state, ctx, actor.realmId, [...existing, playground]);
    return playground;
  });
}

export function removePlayground(state: StoreState, actorId: number, playgroundId: number): void {
  const actor = requireAdmin(state, actorId);
  const playground = state.playgrounds.get(playgroundId);
  if (!playground || playground.realmId !== actor.realmId) throw new BadRequestError("Invalid playground");
  state.write((ctx) => {
    state.tables.playgrounds.removeSync(playground.id);
    ctx.afterCommit(() => state.playgrounds.delete(playground.id));
    emitList(
      state,
      ctx,
      actor.realmId,
      realmPlaygrounds(state, actor.realmId).filter((p) => p.id !== playground.id),
    );
  });
}

function emitList(state: StoreState, ctx: WriteContext, realmId: number, playgrounds: readonly Playground[]): void {
  ctx.emit({ type: "realm_playgrounds", realmId, playgrounds }, () => realmAudience(state, realmId));
}
