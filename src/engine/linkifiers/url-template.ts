/**
 * @module linkifiers/url-template
 * RFC 6570 URL templates as Zulip validates them (its `uri_template.validate`), parsed
 * by the uri-template package: shared by linkifiers and code playgrounds.
 */
import { parse as parseUriTemplate } from "uri-template";

export interface UrlTemplate {
  /** The variable names the template uses. */
  readonly variables: ReadonlySet<string>;
  /** The template expanded; undefined values are left out, as RFC 6570 says. */
  expand(values: Readonly<Record<string, string | undefined>>): string;
}

/** The parsed template, or null when it is not a valid RFC 6570 template. */
export function parseUrlTemplate(template: string): UrlTemplate | null {
  let parsed: ReturnType<typeof parseUriTemplate>;
  try {
    parsed = parseUriTemplate(template);
  } catch {
    return null;
  }
  // A stray brace the parser kept as a literal makes no valid template either.
  if (/[{}]/.test(template.replace(/\{[^{}]*\}/g, ""))) return null;
  const variables = new Set(
    parsed.ast.parts.flatMap((part) => (part.type === "expression" ? part.variables.map((v) => v.name) : [])),
  );
  return { variables, expand: (values) => parsed.expand(values) };
}
