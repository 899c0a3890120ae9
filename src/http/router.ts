/**
 * @module http/router
 * Matches /api/v1 paths to endpoints. ":name" segments capture one non-empty,
 * URL-decoded path segment. A path that exists with other methods gives 405 with the allowed list.
 */
import type { Endpoint, Method } from "./endpoint.js";

interface Route {
  readonly segments: readonly string[];
  readonly byMethod: Map<Method, Endpoint>;
}

export type RouteMatch =
  | { readonly kind: "found"; readonly endpoint: Endpoint; readonly pathParams: Record<string, string> }
  | { readonly kind: "method-not-allowed"; readonly allowed: readonly Method[] }
  | { readonly kind: "not-found" };

export class Router {
  readonly #routes: Route[] = [];

  constructor(endpoints: readonly Endpoint[]) {
    for (const endpoint of endpoints) {
      const segments = split(endpoint.path);
      let route = this.#routes.find((r) => r.segments.join("/") === segments.join("/"));
      if (!route) this.#routes.push((route = { segments, byMethod: new Map() }));
      if (route.byMethod.has(endpoint.method)) throw new Error(`duplicate route ${endpoint.method} ${endpoint.path}`);
      route.byMethod.set(endpoint.method, endpoint);
    }
    // Literal segments win over parameters: /users/me before /users/:email.
    this.#routes.sort((a, b) => literalScore(b) - literalScore(a));
  }

  match(method: string, path: string): RouteMatch {
    const segments = split(path);
    const allowed = new Set<Method>();
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      const endpoint = route.byMethod.get(method as Method);
      if (endpoint) return { kind: "found", endpoint, pathParams: params };
      for (const m of route.byMethod.keys()) allowed.add(m);
    }
    return allowed.size > 0 ? { kind: "method-not-allowed", allowed: [...allowed].sort() } : { kind: "not-found" };
  }
}

/** Path segments; one leading and one trailing slash are dropped, inner empty segments kept. */
function split(path: string): string[] {
  const segments = path.split("/");
  if (segments[0] === "") segments.shift();
  if (segments.length > 0 && segments[segments.length - 1] === "") segments.pop();
  return segments;
}

function literalScore(route: Route): number {
  return route.segments.reduce((n, s, i) => n + (s.startsWith(":") ? 0 : 2 ** (10 - i)), 0);
}

function matchSegments(pattern: readonly string[], actual: readonly string[]): Record<string, string> | null {
  if (pattern.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const a = actual[i]!;
    if (p.startsWith(":")) {
      // "/messages//reactions" names no message: it must not match "/messages/:message_id".
      if (a === "") return null;
      try {
        params[p.slice(1)] = decodeURIComponent(a);
      } catch {
        return null;
      }
    } else if (p !== a) return null;
  }
  return params;
}
