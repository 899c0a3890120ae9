/**
 * @module http/router
 * Matches /api/v1 paths to endpoints. ":name" segments capture one non-empty,
 * URL-decoded path segment.
 *
 * Routes are grouped by shape (their segments with every parameter alike), and the most specific shape matching a path
 * decides it alone, as Zulip's URL table does: a literal segment wins over a parameter at the first position where two
 * shapes differ. So "/messages/render" is never "/messages/:message_id" with id "render", whatever the method; a method
 * the deciding shape lacks gives 405 with that shape's allowed list.
 */
import type { Endpoint, Method } from "./endpoint.js";

/** One endpoint with its own segments (parameter names may differ between the methods of one shape). */
interface Target {
  readonly endpoint: Endpoint;
  readonly segments: readonly string[];
}

interface Shape {
  /** Segments with parameters as null: what the shape matches. */
  readonly pattern: readonly (string | null)[];
  readonly byMethod: Map<Method, Target>;
}

export type RouteMatch =
  | { readonly kind: "found"; readonly endpoint: Endpoint; readonly pathParams: Record<string, string> }
  | { readonly kind: "method-not-allowed"; readonly allowed: readonly Method[] }
  | { readonly kind: "not-found" };

export class Router {
  readonly #shapes: Shape[] = [];

  constructor(endpoints: readonly Endpoint[]) {
    const byKey = new Map<string, Shape>();
    for (const endpoint of endpoints) {
      const segments = split(endpoint.path);
      const pattern = segments.map((s) => (s.startsWith(":") ? null : s));
      const key = pattern.map((s) => (s === null ? ":" : `=${s}`)).join("/");
      let shape = byKey.get(key);
      if (!shape) byKey.set(key, (shape = { pattern, byMethod: new Map() }));
      if (shape.byMethod.has(endpoint.method)) throw new Error(`duplicate route ${endpoint.method} ${endpoint.path}`);
      shape.byMethod.set(endpoint.method, { endpoint, segments });
    }
    this.#shapes = [...byKey.values()].sort((a, b) => comparePrecedence(a.pattern, b.pattern));
  }

  match(method: string, path: string): RouteMatch {
    const actual = split(path);
    for (const shape of this.#shapes) {
      if (!matchesPattern(shape.pattern, actual)) continue;
      const target = shape.byMethod.get(method as Method);
      if (!target) return { kind: "method-not-allowed", allowed: [...shape.byMethod.keys()].sort() };
      const pathParams = decodeParams(target.segments, actual);
      return pathParams ? { kind: "found", endpoint: target.endpoint, pathParams } : { kind: "not-found" };
    }
    return { kind: "not-found" };
  }
}

/** Path segments; one leading and one trailing slash are dropped, inner empty segments kept. */
function split(path: string): string[] {
  const segments = path.split("/");
  if (segments[0] === "") segments.shift();
  if (segments.length > 0 && segments[segments.length - 1] === "") segments.pop();
  return segments;
}

/**
 * Negative when `a` is tried first: at the first position where one has a literal and the other a parameter. Only
 * shapes of one length can match one path, but the order must be total for the sort: a shorter prefix goes first.
 */
function comparePrecedence(a: readonly (string | null)[], b: readonly (string | null)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const aLiteral = a[i] !== null;
    if (aLiteral !== (b[i] !== null)) return aLiteral ? -1 : 1;
  }
  return a.length - b.length;
}

function matchesPattern(pattern: readonly (string | null)[], actual: readonly string[]): boolean {
  if (pattern.length !== actual.length) return false;
  // "/messages//reactions" names no message: an empty segment is no parameter.
  return pattern.every((p, i) => (p === null ? actual[i] !== "" : p === actual[i]));
}

function decodeParams(segments: readonly string[], actual: readonly string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (!s.startsWith(":")) continue;
    try {
      params[s.slice(1)] = decodeURIComponent(actual[i]!);
    } catch {
      return null;
    }
  }
  return params;
}
