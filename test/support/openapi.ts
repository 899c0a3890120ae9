/**
 * A validator for the subset of OpenAPI 3.0 schema that Zulip's description uses
 * (type, nullable, enum, properties, required, additionalProperties, items,
 * allOf/oneOf/anyOf, $ref), against the fixture tools/zulip-openapi.ts extracts.
 *
 * allOf is merged before validating, as Zulip's own test suite does
 * (naively_merge_allOf in zerver/openapi/openapi.py): Zulip writes a derived object
 * as allOf [base, {additionalProperties: false, properties: {inherited: {}, ...}}],
 * whose empty property entries mean "as in the base", and whose additionalProperties
 * applies to the merged object.
 */
import { readFileSync } from "node:fs";

export type Schema = { readonly [key: string]: unknown };

export interface OpenApiFixture {
  readonly source: {
    readonly repository: string;
    readonly commit: string;
    readonly extractedFor: number;
  };
  /** JSON pointers of properties new at a feature level above ours: tolerated when missing. */
  readonly addedAfter: Readonly<Record<string, number>>;
  readonly roots: Readonly<Record<string, Schema>>;
  readonly schemas: Readonly<Record<string, Schema>>;
}

const FIXTURE = new URL("../fixtures/zulip-openapi-register.json", import.meta.url);

export function loadFixture(path: URL = FIXTURE): OpenApiFixture {
  return JSON.parse(readFileSync(path, "utf8")) as OpenApiFixture;
}

const isObject = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export class OpenApiValidator {
  readonly #schemas: Readonly<Record<string, Schema>>;

  constructor(fixture: OpenApiFixture) {
    this.#schemas = fixture.schemas;
  }

  /** The schema with $ref and allOf resolved at the top level (nested ones stay lazy). */
  resolve(schema: Schema): Schema {
    let current = schema;
    const ref = current["$ref"];
    if (typeof ref === "string") {
      const target = this.#schemas[ref.replace("#/components/schemas/", "")];
      if (!target) throw new Error(`fixture lacks ${ref}`);
      const { $ref: _ignored, ...rest } = current;
      current = merge(this.resolve(target), rest);
    }
    const parts = current["allOf"];
    if (Array.isArray(parts)) {
      const { allOf: _ignored, ...rest } = current;
      let merged: Schema = rest;
      for (const part of parts) if (isObject(part)) merged = merge(merged, this.resolve(part));
      current = merged;
    }
    return current;
  }

  /** Every way `value` breaks `schema`, as "path: problem" lines (empty when it conforms). */
  validate(value: unknown, schema: Schema, path = "$"): string[] {
    const s = this.resolve(schema);
    if (value === null) {
      const unconstrained = s["type"] === undefined && !("oneOf" in s) && !("enum" in s);
      return s["nullable"] === true || unconstrained ? [] : [`${path}: null where ${describe(s)} is required`];
    }
    const errors: string[] = [];
    const type = s["type"];
    if (typeof type === "string" && !hasType(value, type)) {
      return [`${path}: ${JSON.stringify(value)?.slice(0, 60)} is not ${type}`];
    }
    const choices = s["enum"];
    if (Array.isArray(choices) && !choices.includes(value)) {
      errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(choices)}`);
    }
    const oneOf = s["oneOf"] ?? s["anyOf"];
    if (Array.isArray(oneOf)) {
      const fits = (option: unknown) => isObject(option) && this.validate(value, option, path).length === 0;
      const matching = oneOf.filter(fits).length;
      const exact = "oneOf" in s ? matching === 1 : matching >= 1;
      if (!exact) errors.push(`${path}: matches ${matching} of the ${oneOf.length} alternatives`);
    }
    if (Array.isArray(value) && isObject(s["items"])) {
      const items = s["items"];
      value.forEach((item, i) => errors.push(...this.validate(item, items, `${path}[${i}]`)));
    }
    const objectSchema = type === "object" || "properties" in s || "additionalProperties" in s;
    if (isObject(value) && objectSchema) errors.push(...this.#validateObject(value, s, path));
    return errors;
  }

  #validateObject(value: Schema, s: Schema, path: string): string[] {
    const errors: string[] = [];
    const properties = isObject(s["properties"]) ? s["properties"] : {};
    const required = Array.isArray(s["required"]) ? s["required"] : [];
    for (const key of required) {
      if (typeof key === "string" && !(key in value)) errors.push(`${path}: missing required key ${key}`);
    }
    const extra = s["additionalProperties"];
    for (const [key, item] of Object.entries(value)) {
      const property = properties[key];
      if (isObject(property)) errors.push(...this.validate(item, property, `${path}.${key}`));
      else if (extra === false) errors.push(`${path}: unknown key ${key}`);
      else if (isObject(extra)) errors.push(...this.validate(item, extra, `${path}.${key}`));
    }
    return errors;
  }
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      throw new Error(`unknown schema type ${type}`);
  }
}

function describe(s: Schema): string {
  return typeof s["type"] === "string" ? s["type"] : "a value";
}

/** Later keys win, except properties (merged per property) and required (united). */
function merge(base: Schema, over: Schema): Schema {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    if (key === "properties" && isObject(current) && isObject(value)) {
      const properties: Record<string, unknown> = { ...current };
      for (const [name, property] of Object.entries(value)) {
        const previous = properties[name];
        properties[name] = isObject(previous) && isObject(property) ? { ...previous, ...property } : property;
      }
      out[key] = properties;
    } else if (key === "required" && Array.isArray(current) && Array.isArray(value)) {
      out[key] = [...new Set([...current, ...value])];
    } else {
      out[key] = value;
    }
  }
  return out;
}
