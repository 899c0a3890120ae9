/**
 * @module tools/zulip-openapi
 * Extracts from Zulip's OpenAPI description (zerver/openapi/zulip.yaml of zulip/zulip,
 * Apache-2.0) the response schemas parley's conformance test checks, and every
 * component schema they reference, into test/fixtures/zulip-openapi-register.json, so
 * the test runs offline against a named version of the spec.
 *
 * Only structure is kept (type, nullable, enum, properties, required,
 * additionalProperties, items, allOf/oneOf/anyOf, $ref); prose is dropped. A property
 * whose description says it is new at a feature level above ours is recorded in
 * `addedAfter`, which the test tolerates as missing.
 *
 * The spec is YAML; this reads it converted to JSON (no YAML parser in the project):
 *   python3 -c 'import json,sys,yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)' \
 *     < zulip.yaml > /tmp/zulip.json
 *   node dist/tools/zulip-openapi.js --spec /tmp/zulip.json --repository zulip/zulip \
 *     --commit SHA [--out test/fixtures/zulip-openapi-register.json]
 */
import { writeFileSync, readFileSync } from "node:fs";
import { ZULIP_FEATURE_LEVEL } from "../src/wire/version.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Schema keywords the conformance validator understands; everything else is prose or tooling. */
const STRUCTURAL = new Set([
  ...["type", "nullable", "enum", "properties", "required", "additionalProperties"],
  ...["items", "allOf", "oneOf", "anyOf", "$ref"],
]);
const NEW_AT_LEVEL = /New in Zulip [\d.]+ \(feature level (\d+)\)/;
const REF_PREFIX = "#/components/schemas/";

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function at(root: Json, ...path: (string | number)[]): Json {
  let node: Json | undefined = root;
  for (const step of path) {
    if (Array.isArray(node) && typeof step === "number") node = node[step];
    else node = isObject(node) && typeof step === "string" ? node[step] : undefined;
    if (node === undefined) throw new Error(`spec has no ${path.join(" / ")} (stopped at ${String(step)})`);
  }
  return node;
}

/** The 200 schema of an operation. */
function responseSchema(spec: Json, path: string, method: string): Json {
  return at(spec, "paths", path, method, "responses", "200", "content", "application/json", "schema");
}

/** Does a schema (or an allOf part) pin `field` to exactly `value` with an enum? */
function pins(schema: Json, field: string, value: string): boolean {
  if (!isObject(schema)) return false;
  const property = isObject(schema["properties"]) ? schema["properties"][field] : undefined;
  const parts = isObject(property) && Array.isArray(property["allOf"]) ? property["allOf"] : [property];
  return parts.some((part) => isObject(part) && Array.isArray(part["enum"]) && part["enum"].includes(value));
}

/** One event schema of GET /events, by its `type` and `op`. */
function eventSchema(spec: Json, type: string, op: string): Json {
  const events = at(responseSchema(spec, "/events", "get"), "allOf", 1, "properties", "events", "items", "oneOf");
  if (!Array.isArray(events)) throw new Error("GET /events has no list of event schemas");
  const found = events.find((e) => pins(e, "type", type) && pins(e, "op", op));
  if (found === undefined) throw new Error(`no ${type}/${op} event in the spec`);
  return found;
}

interface Extraction {
  readonly refs: Set<string>;
  readonly addedAfter: Record<string, number>;
}

/** The schema with prose dropped; collects $refs and properties newer than our level. */
function strip(schema: Json, pointer: string, out: Extraction): Json {
  if (Array.isArray(schema)) return schema.map((s, i) => strip(s, `${pointer}/${i}`, out));
  if (!isObject(schema)) return schema;
  const kept: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!STRUCTURAL.has(key)) continue;
    if (key === "$ref" && typeof value === "string" && value.startsWith(REF_PREFIX)) {
      out.refs.add(value.slice(REF_PREFIX.length));
    }
    if (key === "properties" && isObject(value)) {
      const properties: JsonObject = {};
      for (const [name, property] of Object.entries(value)) {
        const description = isObject(property) ? property["description"] : undefined;
        const level = typeof description === "string" ? Number(NEW_AT_LEVEL.exec(description)?.[1]) : NaN;
        if (level > ZULIP_FEATURE_LEVEL) out.addedAfter[`${pointer}/properties/${name}`] = level;
        properties[name] = strip(property, `${pointer}/properties/${name}`, out);
      }
      kept[key] = properties;
    } else {
      kept[key] = key === "enum" || key === "required" ? value : strip(value, `${pointer}/${key}`, out);
    }
  }
  return kept;
}

function main(argv: readonly string[]): void {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const specPath = arg("--spec");
  const repository = arg("--repository");
  const commit = arg("--commit");
  const outPath = arg("--out") ?? "test/fixtures/zulip-openapi-register.json";
  if (!specPath || !repository || !commit) {
    process.stderr.write("usage: zulip-openapi --spec ZULIP_JSON --repository OWNER/NAME --commit SHA [--out FILE]\n");
    process.exit(2);
  }
  const spec = JSON.parse(readFileSync(specPath, "utf8")) as Json;
  const out: Extraction = { refs: new Set(), addedAfter: {} };
  const roots: JsonObject = {
    register: strip(responseSchema(spec, "/register", "post"), "#/roots/register", out),
    ownUser: strip(responseSchema(spec, "/users/me", "get"), "#/roots/ownUser", out),
    streamCreateEvent: strip(eventSchema(spec, "stream", "create"), "#/roots/streamCreateEvent", out),
  };
  const schemas: JsonObject = {};
  const pending = [...out.refs];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (name in schemas) continue;
    const before = new Set(out.refs);
    schemas[name] = strip(at(spec, "components", "schemas", name), `${REF_PREFIX}${name}`, out);
    for (const ref of out.refs) if (!before.has(ref)) pending.push(ref);
  }
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  const source = { repository, commit, path: "zerver/openapi/zulip.yaml", license: "Apache-2.0" };
  const fixture = {
    source: { ...source, extractedFor: ZULIP_FEATURE_LEVEL },
    addedAfter: out.addedAfter,
    roots,
    schemas: sorted,
  };
  writeFileSync(outPath, `${JSON.stringify(fixture, null, 1)}\n`);
  const newer = Object.keys(out.addedAfter).length;
  process.stdout.write(
    `wrote ${outPath}: ${Object.keys(sorted).length} component schemas, ` +
      `${newer} properties newer than feature level ${ZULIP_FEATURE_LEVEL}\n`,
  );
}

main(process.argv.slice(2));
