/**
 * @module linkifiers/linkifier
 * Linkifiers as Zulip applies them (zerver/lib/markdown: prepare_linkifier_pattern,
 * LinkifierPattern, topic_links). A pattern is wrapped so that it matches only after
 * the start of the text, whitespace or an opening delimiter, and not when a letter or
 * digit follows; its named groups fill the URL template. The Markdown renderer and
 * message topics (`topic_links`) both go through `CompiledLinkifier.find`.
 */
import { BadRequestError } from "../errors.js";
import type { Linkifier } from "../types.js";
import { firstCharTest, MAX_PROGRAM_SIZE, Re2Program } from "./re2-match.js";
import { parseRe2, Re2SyntaxError } from "./re2-parse.js";
import { parseUrlTemplate, type UrlTemplate } from "./url-template.js";

/** Zulip's names for the wrapper's groups (not usable in URL templates: they are not the pattern's). */
export const BEFORE_GROUP = "linkifier_before_match";
export const OUTER_GROUP = "linkifier_actual_match";
export const AFTER_GROUP = "linkifier_after_match";

/**
 * Zulip's prepare_linkifier_pattern: after the start, whitespace (\s is ASCII in RE2,
 * so NEL and \pZ are named too) or one of '"(,:< ; before the end or a character that
 * is neither letter nor number.
 */
function preparedPattern(source: string): string {
  return `(?P<${BEFORE_GROUP}>^|\\s|\\x{85}|\\pZ|['"\\(,:<])(?P<${OUTER_GROUP}>${source})(?P<${AFTER_GROUP}>$|[^\\pL\\pN])`;
}

/** One match of a linkifier: the linked text's [start, end) and its URL. */
export interface LinkifierMatch {
  readonly start: number;
  readonly end: number;
  readonly url: string;
  /** Where the next search starts: the character after the match is left for the next one's "before". */
  readonly resumeAt: number;
}

export class CompiledLinkifier {
  readonly #program: Re2Program;
  readonly #template: UrlTemplate;
  /**
   * Where a match may begin: its linked text's first character passes the pattern's
   * first-character test, right at the start or after the one "before" character.
   */
  readonly #canStart: ((text: string) => (pos: number) => boolean) | undefined;

  constructor(
    readonly linkifier: Linkifier,
    program: Re2Program,
    template: UrlTemplate,
    firstChar: ((cp: number) => boolean) | null,
  ) {
    this.#program = program;
    this.#template = template;
    this.#canStart =
      firstChar === null
        ? undefined
        : (text) => (pos) => {
            const at = (i: number) => i < text.length && firstChar(text.codePointAt(i) ?? -1);
            return (pos === 0 && at(0)) || at(pos + 1);
          };
  }

  /** The first match in `text` at or after `from` (`^` holds only at 0 of `text`). */
  find(text: string, from: number): LinkifierMatch | null {
    const m = this.#program.search(text, from, this.#canStart?.(text));
    if (m === null) return null;
    const names = this.#program.names;
    const span = (name: string): [number, number] => {
      const index = names.get(name) ?? 0;
      return [m.slots[2 * index] ?? -1, m.slots[2 * index + 1] ?? -1];
    };
    const values: Record<string, string | undefined> = {};
    for (const name of names.keys()) {
      const [s, e] = span(name);
      values[name] = s === -1 ? undefined : text.slice(s, e);
    }
    const [start, end] = span(OUTER_GROUP);
    const [afterStart, afterEnd] = span(AFTER_GROUP);
    const matchEnd = m.slots[1] ?? end;
    return { start, end, url: this.#template.expand(values), resumeAt: matchEnd - (afterEnd - afterStart) };
  }
}

const compiled = new WeakMap<Linkifier, CompiledLinkifier | null>();

/**
 * The linkifier ready to match, or null when its wrapped pattern does not compile
 * (Zulip then skips it: it matches nothing). Cached per record: an update stores a new one.
 */
export function compileLinkifier(linkifier: Linkifier): CompiledLinkifier | null {
  let out = compiled.get(linkifier);
  if (out !== undefined) return out;
  out = null;
  const template = parseUrlTemplate(linkifier.urlTemplate);
  try {
    if (template !== null) {
      const program = new Re2Program(parseRe2(preparedPattern(linkifier.pattern)));
      out = new CompiledLinkifier(linkifier, program, template, firstCharTest(parseRe2(linkifier.pattern).root));
    }
  } catch (error) {
    if (!(error instanceof Re2SyntaxError)) throw error;
  }
  compiled.set(linkifier, out);
  return out;
}

/** A link in a topic name (Zulip's topic_links entries). */
export interface TopicLink {
  readonly text: string;
  readonly url: string;
}

/**
 * Zulip's topic_links for the linkifier part: every match of every linkifier, earlier
 * linkifiers first and then leftmost; a match overlapping one already taken is dropped;
 * the rest in order of position.
 */
export function topicLinks(linkifiers: readonly Linkifier[], topic: string): TopicLink[] {
  const matches: { index: number; text: string; url: string }[] = [];
  for (const linkifier of linkifiers) {
    const program = compileLinkifier(linkifier);
    if (program === null) continue;
    let pos = 0;
    while (pos < topic.length) {
      const m = program.find(topic, pos);
      if (m === null) break;
      matches.push({ index: m.start, text: topic.slice(m.start, m.end), url: m.url });
      // An empty match at the same place would be found again: step past it.
      pos = m.resumeAt > pos ? m.resumeAt : pos + 1;
    }
  }
  const taken: typeof matches = [];
  for (const m of matches) {
    const overlaps = taken.some(
      (t) =>
        (t.index <= m.index && m.index < t.index + t.text.length) ||
        (m.index <= t.index && t.index < m.index + m.text.length),
    );
    if (!overlaps) taken.push(m);
  }
  return taken.sort((a, b) => a.index - b.index).map((m) => ({ text: m.text, url: m.url }));
}

/** Django's NON_FIELD_ERRORS key. */
const ALL = "__all__";

/**
 * Zulip's RealmFilter.full_clean, in its order: field checks (blank pattern, blank or
 * invalid URL template), then clean() (the pattern compiles under RE2, the template's
 * variables are the pattern's named groups, both ways), then uniqueness in the realm.
 * Refused with the first message and every message by field (Zulip's `errors`).
 */
export function checkLinkifier(pattern: string, urlTemplate: string, patternTaken: (pattern: string) => boolean): void {
  const errors: Record<string, string[]> = {};
  const add = (key: string, message: string): void => {
    (errors[key] ??= []).push(message);
  };
  if (pattern === "") add("pattern", "This field cannot be blank.");
  const template = urlTemplate === "" ? null : parseUrlTemplate(urlTemplate);
  if (urlTemplate === "") add("url_template", "This field cannot be blank.");
  else if (template === null) add("url_template", "Invalid URL template.");
  let groups: ReadonlySet<string> | null = null;
  try {
    const parsed = parseRe2(pattern);
    if (new Re2Program(parsed).size > MAX_PROGRAM_SIZE) throw new Re2SyntaxError("pattern too large - compile failed");
    groups = new Set(parsed.names.keys());
  } catch (error) {
    if (!(error instanceof Re2SyntaxError)) throw error;
    add(ALL, `Bad regular expression: ${error.message}`);
  }
  if (groups !== null && template !== null) {
    const missingInPattern = [...template.variables].filter((v) => !groups.has(v)).sort();
    const missingInTemplate = [...groups].filter((g) => !template.variables.has(g)).sort();
    if (missingInPattern[0] !== undefined)
      add(ALL, `Group '${missingInPattern[0]}' in URL template is not present in linkifier pattern.`);
    else if (missingInTemplate[0] !== undefined)
      add(ALL, `Group '${missingInTemplate[0]}' in linkifier pattern is not present in URL template.`);
  }
  if (errors["pattern"] === undefined && patternTaken(pattern))
    add(ALL, "Realm filter with this Realm and Pattern already exists.");
  const first = Object.values(errors)[0]?.[0];
  if (first !== undefined) throw new BadRequestError(first, { errors });
}
