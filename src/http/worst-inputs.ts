/**
 * @module http/worst-inputs
 * Worst inputs generated from an endpoint's definition: for each parameter built by
 * src/http/params.ts, values just past and far past its bounds (a string over its
 * maximum length, in ASCII as long as the body allows and in astral characters just
 * over; a list (or map) over its maximum items; integers past their minimum, maximum and the
 * safe range; a value of the wrong type as long as the body allows) and a body one
 * byte over the endpoint's limit, each with the refusal it must get. The other
 * parameters take valid values, so that the one at its worst is the one refused.
 * Endpoints add or skip inputs in `testing.worst` (src/http/endpoint-testing.ts).
 * Used by test/http/bounds.test.ts (answers, no echo, nothing changed) and
 * bench/worst-inputs.ts (event-loop time).
 */
import { z } from "zod";
import { DEFAULT_MAX_BODY_BYTES, type Endpoint } from "./endpoint.js";
import type { Refusal } from "./endpoint-testing.js";
import { describeParam, type Param, type ParamInfo } from "./params.js";

export interface WorstInput extends Refusal {
  readonly label: string;
  readonly params: Readonly<Record<string, string>>;
  /** The path with its parameters filled (relative to /api/v1, or to the root for `root` endpoints). */
  readonly path: string;
}

/** The longest value sent: far over every bound, within every body limit's reach. */
const HUGE = 200_000;
/** Plain values tried, in order, for a parameter that is not the one at its worst. */
const PLAIN = ["1", "x", "true", "[]", "{}", "0", '""'];

/** The bytes `params` take form-encoded, as the body of a request. */
export function formBytes(params: Readonly<Record<string, string>>): number {
  return new URLSearchParams(params).toString().length;
}

function validValue(endpoint: Endpoint, name: string, schema: Param, info: ParamInfo | undefined): string {
  const given = endpoint.testing?.worst?.valid?.[name];
  if (given !== undefined) return given;
  const fromInfo = info?.kind === "oneOf" ? info.values[0] : info?.kind === "int" ? String(info.min ?? 1) : undefined;
  for (const candidate of [...(fromInfo === undefined ? [] : [fromInfo]), ...PLAIN]) {
    if (schema.safeParse(candidate).success) return candidate;
  }
  throw new Error(
    `${endpoint.method} ${endpoint.path}: no plain value passes ${name}; give one in testing.worst.valid`,
  );
}

/** Values past one parameter's bounds, with the message its refusal carries. */
function pastBounds(name: string, info: ParamInfo, room: number): { label: string; value: string; msg: string }[] {
  const longest = (unit: string, unitBytes: number) => unit.repeat(Math.min(HUGE, Math.floor(room / unitBytes)));
  const out: { label: string; value: string; msg: string }[] = [];
  switch (info.kind) {
    case "str": {
      if (info.maxLength === undefined) break;
      const msg = `${name} is too long (limit: ${info.maxLength} characters)`;
      const ascii = longest("x", 1);
      if (ascii.length > info.maxLength) out.push({ label: `${ascii.length} characters`, value: ascii, msg });
      // Counted in code points, not UTF-16 units: one over the limit in characters of two units.
      if ((info.maxLength + 1) * 12 <= room)
        out.push({ label: `${info.maxLength + 1} astral characters`, value: "🐙".repeat(info.maxLength + 1), msg });
      break;
    }
    case "json": {
      const tooMany = info.tooMany ?? `${name} is too long (limit: ${info.maxItems} items)`;
      if (info.maxItems !== undefined && (info.maxItems + 1) * 4 <= room) {
        const items = Math.min(Math.max(info.maxItems + 1, 40_000), Math.floor(room / 4));
        out.push({
          label: `${items} items`,
          value: JSON.stringify(Array.from({ length: items }, () => 1)),
          msg: tooMany,
        });
      }
      // A map is bounded by its keys: one over, each key and value about 20 bytes form-encoded.
      if (info.maxItems !== undefined && info.schema instanceof z.ZodRecord && (info.maxItems + 1) * 24 <= room) {
        const keys = Object.fromEntries(Array.from({ length: info.maxItems + 1 }, (_, i) => [`k${i}`, true]));
        out.push({ label: `${info.maxItems + 1} keys`, value: JSON.stringify(keys), msg: tooMany });
      }
      const junk = longest("x", 1);
      out.push({ label: `${junk.length} characters of junk`, value: junk, msg: `${name} is not valid JSON` });
      break;
    }
    case "int": {
      out.push({ label: "400 digits", value: "9".repeat(400), msg: `${name} is too large` });
      out.push({ label: "-400 digits", value: `-${"9".repeat(400)}`, msg: `${name} is too small` });
      if (info.max !== undefined && Number.isSafeInteger(info.max + 1))
        out.push({ label: "maximum + 1", value: String(info.max + 1), msg: `${name} is too large` });
      if (info.min !== undefined && Number.isSafeInteger(info.min - 1))
        out.push({ label: "minimum - 1", value: String(info.min - 1), msg: `${name} is too small` });
      const junk = longest("9", 1);
      out.push({ label: `${junk.length} digits`, value: junk, msg: `${name} is too large` });
      break;
    }
    case "bool": {
      const junk = longest("x", 1);
      out.push({ label: `${junk.length} characters`, value: junk, msg: `${name} is not a boolean` });
      break;
    }
    case "oneOf": {
      const junk = longest("x", 1);
      out.push({ label: `${junk.length} characters`, value: junk, msg: `Invalid ${name}` });
      break;
    }
    case "intOrString":
      break;
  }
  return out;
}

/** Whether generatedWorstInputs gives the endpoint any (it holds long strings: build it when sending). */
export function hasGeneratedWorstInputs(endpoint: Endpoint): boolean {
  return endpoint.body !== "stream" && endpoint.method !== "HEAD";
}

/**
 * The generated worst inputs of one endpoint. Endpoints whose body streams to the
 * handler (uploads) and HEAD requests (no answer body to check) get none: their
 * worst inputs are hand-written in test/http/bounds.test.ts.
 */
export function generatedWorstInputs(endpoint: Endpoint): WorstInput[] {
  if (!hasGeneratedWorstInputs(endpoint)) return [];
  const overrides = endpoint.testing?.worst ?? {};
  // Parameters are parsed before any handler looks the path up: any segment will do.
  const path = endpoint.path.replace(/:(\w+)/g, () => "1");
  const limit = endpoint.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const inputs: WorstInput[] = [];
  // Parameters are checked in order: one at its worst needs the required ones before it valid.
  const required: [string, Param, ParamInfo | undefined][] = [];
  for (const [name, schema] of Object.entries(endpoint.params)) {
    const { info, optional } = describeParam(schema);
    if (info !== undefined && overrides.skip?.[name] === undefined) {
      const before = Object.fromEntries(required.map(([other, s, i]) => [other, validValue(endpoint, other, s, i)]));
      // Room left for the value once the others and its name are in the body.
      const room = limit - formBytes(before) - name.length - 64;
      for (const { label, value, msg } of pastBounds(name, info, room)) {
        inputs.push({
          label: `${name}: ${label}`,
          params: { ...before, [name]: value },
          path,
          status: 400,
          code: "BAD_REQUEST",
          msg,
        });
      }
    }
    if (!optional) required.push([name, schema, info]);
  }
  inputs.push({
    label: `a body of ${limit + 1} bytes`,
    params: { padding: "x".repeat(limit + 1 - "padding=".length) },
    path,
    status: 413,
    code: "BAD_REQUEST",
    msg: "Request body too large",
  });
  for (const extra of overrides.extra ?? []) {
    inputs.push({
      label: extra.label,
      params: extra.params(),
      path,
      status: extra.status,
      code: extra.code,
      msg: extra.msg,
    });
  }
  return inputs;
}
