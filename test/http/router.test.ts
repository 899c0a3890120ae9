/**
 * The router over the real route table: a fixed path is never taken by a parameter route of the same length, whatever
 * the method, and every endpoint is reachable at its own path.
 */
import { describe, expect, it } from "vitest";
import { defineEndpoint, type Endpoint, type Method } from "../../src/http/endpoint.js";
import { ENDPOINTS } from "../../src/http/endpoints/index.js";
import { Router } from "../../src/http/router.js";

const METHODS: readonly Method[] = ["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD"];

/** The endpoint's path with every parameter filled by a value no literal segment equals. */
const concrete = (path: string): string => path.replace(/:[a-z_]+/g, "1");
/** Segments with parameters blanked: two paths of one shape are one route. */
const shapeOf = (path: string): string => path.replace(/:[a-z_]+/g, ":");

const table = (endpoints: readonly Endpoint[]): Router => new Router(endpoints);

describe("the route table", () => {
  for (const [name, endpoints] of [
    ["/api/v1", ENDPOINTS.filter((e) => !e.root)],
    ["root", ENDPOINTS.filter((e) => e.root)],
  ] as const) {
    it(`${name}: every endpoint answers at its own path, and no other shape takes that path`, () => {
      const router = table(endpoints);
      const problems: string[] = [];
      for (const endpoint of endpoints) {
        const path = concrete(endpoint.path);
        const own = router.match(endpoint.method, path);
        if (own.kind !== "found" || own.endpoint !== endpoint) problems.push(`${endpoint.method} ${path} misses`);
        for (const method of METHODS) {
          const match = router.match(method, path);
          if (match.kind === "found" && shapeOf(match.endpoint.path) !== shapeOf(endpoint.path)) {
            problems.push(`${method} ${path} reaches ${match.endpoint.method} ${match.endpoint.path}`);
          }
        }
      }
      expect(problems).toEqual([]);
    });
  }

  it("fixed paths the issue named are not message IDs", () => {
    const router = table(ENDPOINTS.filter((e) => !e.root));
    // No GET at /messages/flags: 405 with its own methods, not GET /messages/:message_id with id "flags".
    expect(router.match("GET", "/messages/flags")).toEqual({ kind: "method-not-allowed", allowed: ["POST"] });
    expect(router.match("GET", "/messages/12")).toMatchObject({ kind: "found", pathParams: { message_id: "12" } });
  });
});

describe("Router precedence", () => {
  const endpoint = (method: Method, path: string): Endpoint =>
    defineEndpoint({ method, path, auth: "user", params: {}, handler: () => ({}) });
  const byId = endpoint("GET", "/things/:thing_id");
  const patchById = endpoint("PATCH", "/things/:other_name");
  const render = endpoint("POST", "/things/render");
  const nested = endpoint("GET", "/things/:thing_id/parts/:part_id");
  const nestedFixed = endpoint("POST", "/things/mine/parts/:part_id");
  const router = table([byId, patchById, render, nested, nestedFixed]);

  it("a literal segment wins over a parameter, and its methods alone decide", () => {
    expect(router.match("POST", "/things/render")).toMatchObject({ kind: "found", endpoint: render });
    expect(router.match("GET", "/things/render")).toEqual({ kind: "method-not-allowed", allowed: ["POST"] });
    expect(router.match("GET", "/things/mine/parts/2")).toEqual({ kind: "method-not-allowed", allowed: ["POST"] });
    expect(router.match("GET", "/things/other/parts/2")).toMatchObject({ endpoint: nested });
  });

  it("methods of one shape may name their parameters differently", () => {
    expect(router.match("GET", "/things/7")).toEqual({ kind: "found", endpoint: byId, pathParams: { thing_id: "7" } });
    expect(router.match("PATCH", "/things/7")).toEqual({
      kind: "found",
      endpoint: patchById,
      pathParams: { other_name: "7" },
    });
    expect(router.match("DELETE", "/things/7")).toEqual({ kind: "method-not-allowed", allowed: ["GET", "PATCH"] });
  });

  it("an empty or undecodable segment is no parameter", () => {
    expect(router.match("GET", "/things//parts/2")).toEqual({ kind: "not-found" });
    expect(router.match("GET", "/things/%E0%A4%A")).toEqual({ kind: "not-found" });
  });

  it("refuses a method defined twice for one shape", () => {
    expect(() => table([byId, endpoint("GET", "/things/:x")])).toThrow(/duplicate route/);
  });
});

describe("Router order", () => {
  it("does not depend on the order endpoints are listed in", () => {
    // The shapes are sorted once: a comparator that is not a total order sorts some lists wrong.
    const endpoints = ENDPOINTS.filter((e) => !e.root);
    for (let seed = 1; seed <= 20; seed++) {
      let state = seed;
      const shuffled = [...endpoints]
        .map((e) => {
          state = (state * 1103515245 + 12345) % 2 ** 31;
          return { e, k: state };
        })
        .sort((a, b) => a.k - b.k)
        .map(({ e }) => e);
      const router = table(shuffled);
      const misses = endpoints.filter((e) => {
        const match = router.match(e.method, concrete(e.path));
        return match.kind !== "found" || match.endpoint !== e;
      });
      expect(misses.map((e) => `${e.method} ${e.path}`)).toEqual([]);
    }
  });
});
