/**
 * @module http/params
 * Zulip's parameter coercions as zod schemas over the raw wire strings: integers,
 * booleans, JSON-encoded lists and objects, bounded strings. Each failure carries a
 * message template with "{var}", filled in with the parameter's name (and the JSON
 * path for nested values) by parseParams, giving Zulip's texts:
 * "num_before is not an integer", "narrow is not valid JSON", "Invalid op", ...
 */
import { z } from "zod";
import {
  BadRequestError,
  clip,
  ConfusingParamsError,
  exceedsCodePoints,
  MissingArgumentError,
} from "../engine/index.js";

/** Parameters the server reads on every request (Zulip's `client`): never reported as ignored. */
const SERVER_PARAMS: readonly string[] = ["client"];

/** One parameter: a schema from raw string (or undefined when absent) to a value. */
export type Param = z.ZodType<unknown, string | undefined>;
export type ParamShape = Readonly<Record<string, Param>>;
export type ParamValues<P extends ParamShape> = { -readonly [K in keyof P]: z.output<P[K]> };

const raw = z.string();

function fail(ctx: z.RefinementCtx, message: string): typeof z.NEVER {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER;
}

function parseInt(text: string, ctx: z.RefinementCtx, min?: number, max?: number): number {
  const trimmed = text.trim();
  if (!/^-?\d+$/.test(trimmed)) return fail(ctx, "{var} is not an integer");
  const n = Number(trimmed);
  if (!Number.isSafeInteger(n)) return fail(ctx, n < 0 ? "{var} is too small" : "{var} is too large");
  if (min !== undefined && n < min) return fail(ctx, "{var} is too small");
  if (max !== undefined && n > max) return fail(ctx, "{var} is too large");
  return n;
}

/**
 * What a builder below made, readable from the route table by tools that generate
 * requests (the fuzz test): the wire kind, its bounds, and a JSON field's value schema.
 */
export type ParamInfo =
  | { readonly kind: "int"; readonly min?: number; readonly max?: number }
  | { readonly kind: "bool" }
  | { readonly kind: "str"; readonly maxLength?: number; readonly minLength?: number }
  | { readonly kind: "oneOf"; readonly values: readonly string[] }
  | { readonly kind: "json"; readonly schema: z.ZodType; readonly maxItems?: number; readonly tooMany?: string }
  | { readonly kind: "intOrString" };

const infos = new WeakMap<z.ZodType, ParamInfo>();

function tagged<S extends z.ZodType>(schema: S, info: ParamInfo): S {
  infos.set(schema, info);
  return schema;
}

/**
 * How a reference parameter names an object on the wire. The access sweep
 * (test/http/access-sweep.test.ts) holds one way to encode each kind, and probes
 * every marked parameter of every endpoint with objects the caller must not see.
 */
export type RefKind =
  | "message"
  | "messageList"
  /** A numeric anchor (a message ID) or one of the named anchors. */
  | "anchor"
  | "narrow"
  | "channel"
  | "channelList"
  /** A channel's name, as the caller typed it. */
  | "channelName"
  | "channelNameList"
  /** A message's `to`: channel ID or name when type is a channel, user IDs or emails when direct. */
  | "recipient"
  /** A scheduled message's `to`: a channel ID or one-item list when type is a channel, user IDs when direct. */
  | "recipientIds"
  | "user"
  | "userList"
  | "userOrEmail"
  | "userListOrEmails"
  /** An account's login email (the username of POST /fetch_api_key). */
  | "loginEmail"
  | "group"
  | "groupList"
  /** A group-setting value: a group ID or {direct_members, direct_subgroups}. */
  | "groupSetting"
  /** A group-setting change: {"new": value, "old": value?}. */
  | "groupSettingChange"
  | "scheduledMessage"
  | "draft"
  | "snippet"
  | "device"
  | "channelFolder"
  | "defaultChannelGroup"
  | "linkifier"
  | "profileField"
  | "attachment"
  | "tusUpload"
  /** An upload's path_id, spread over the path segments realm_id/path_hash/path_random/filename. */
  | "uploadPath";

/** The kinds of object access rules guard (what a reference finally names). */
export type ObjectKind =
  | "message"
  | "channel"
  | "channelName"
  | "user"
  | "email"
  | "group"
  | "scheduled"
  | "draft"
  | "snippet"
  | "device"
  | "channelFolder"
  | "defaultChannelGroup"
  | "linkifier"
  | "profileField"
  | "upload"
  | "attachment"
  | "tusUpload";

/**
 * What a parameter names: one of the shared wire forms, or a JSON structure of the
 * endpoint's own holding references to `names` (the endpoint's `testing.probes` says
 * how to write one).
 */
export type ParamRef =
  { readonly kind: RefKind } | { readonly kind: "compound"; readonly names: readonly ObjectKind[] };

const refs = new WeakMap<z.ZodType, ParamRef>();

function markRef<S extends Param>(schema: S, marked: ParamRef): S {
  const known = refs.get(schema);
  // Builders make a new schema per call; one marked twice is a shared instance used for two meanings.
  if (known && JSON.stringify(known) !== JSON.stringify(marked)) {
    throw new Error(`parameter schema already marked as ${known.kind}`);
  }
  refs.set(schema, marked);
  return schema;
}

/** Marks a parameter as naming an object: `ref(p.int(), "channel")`. */
export const ref = <S extends Param>(schema: S, kind: RefKind): S => markRef(schema, { kind });

/** Marks a JSON parameter whose structure holds references to `names` (encoded by the endpoint's testing.probes). */
export const compoundRef = <S extends Param>(schema: S, names: readonly ObjectKind[]): S =>
  markRef(schema, { kind: "compound", names });

/** A parameter's builder info (undefined for hand-written schemas), whether it may be absent, and what it names. */
export function describeParam(schema: Param): {
  readonly info: ParamInfo | undefined;
  readonly optional: boolean;
  readonly ref: ParamRef | undefined;
} {
  let inner: z.ZodType = schema;
  let optional = false;
  let marked = refs.get(inner);
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault) {
    optional = true;
    inner = inner.unwrap() as z.ZodType;
    marked ??= refs.get(inner);
  }
  return { info: infos.get(inner), optional, ref: marked };
}

/** The parameter builders every endpoint uses. */
export const p = {
  /** An integer (plain or JSON text, as Zulip accepts both). */
  int: (bounds: { min?: number; max?: number } = {}) =>
    tagged(
      raw.transform((s, ctx) => parseInt(s, ctx, bounds.min, bounds.max)),
      { kind: "int", ...bounds },
    ),
  /** A boolean: true/false (JSON), also accepting Zulip's legacy 1/0 is not done: JSON only. */
  bool: () =>
    tagged(
      raw.transform((s, ctx) => {
        const t = s.trim();
        if (t === "true") return true;
        if (t === "false") return false;
        return fail(ctx, "{var} is not a boolean");
      }),
      { kind: "bool" },
    ),
  /** A string, optionally bounded in code points; NUL bytes refused where asked. */
  str: (bounds: { maxLength?: number; minLength?: number; noNul?: boolean } = {}) =>
    tagged(
      raw.transform((s, ctx) => {
        if (bounds.maxLength !== undefined && exceedsCodePoints(s, bounds.maxLength))
          return fail(ctx, `{var} is too long (limit: ${bounds.maxLength} characters)`);
        if (bounds.minLength === 1 && s.trim().length === 0) return fail(ctx, "{var} cannot be blank");
        if (bounds.minLength !== undefined && [...s].length < bounds.minLength) return fail(ctx, "{var} is too short.");
        if (bounds.noNul && s.includes("\0")) return fail(ctx, "{var} must not contain null bytes");
        return s;
      }),
      { kind: "str", ...bounds },
    ),
  /** One of fixed strings. */
  oneOf: <T extends string>(values: readonly T[]) =>
    tagged(
      raw.transform((s, ctx) => ((values as readonly string[]).includes(s) ? (s as T) : fail(ctx, "Invalid {var}"))),
      { kind: "oneOf", values },
    ),
  /**
   * JSON text, checked against `schema`. Nested failures name their path: narrow[0].
   * `maxItems` bounds a top-level list (or object's keys) before the schema walks it;
   * `tooMany` replaces the generic message where Zulip has its own.
   */
  json: <T>(schema: z.ZodType<T>, limit: { maxItems?: number; tooMany?: string } = {}) =>
    tagged(
      raw.transform((s, ctx): T => {
        let value: unknown;
        try {
          value = JSON.parse(s);
        } catch {
          return fail(ctx, "{var} is not valid JSON");
        }
        if (limit.maxItems !== undefined && value !== null && typeof value === "object") {
          const items = Array.isArray(value) ? value.length : Object.keys(value).length;
          if (items > limit.maxItems)
            return fail(ctx, limit.tooMany ?? `{var} is too long (limit: ${limit.maxItems} items)`);
        }
        const result = schema.safeParse(value);
        if (result.success) return result.data;
        return fail(ctx, describeIssue(result.error.issues[0]));
      }),
      { kind: "json", schema, ...limit },
    ),
  /** An integer given plainly or as a JSON string/number, or a non-numeric string (anchor-like). */
  intOrString: () =>
    tagged(
      raw.transform((s) => (/^-?\d+$/.test(s.trim()) ? Number(s.trim()) : s)),
      { kind: "intOrString" },
    ),
};

/** JSON-side value schemas with Zulip-style messages. */
export const j = {
  int: () => z.number().int(),
  intList: () => z.array(z.number().int()),
  stringList: () => z.array(z.string()),
  intOrStringList: () => z.union([z.array(z.number().int()), z.array(z.string())]),
  /** A group-setting value: a group ID or {direct_members, direct_subgroups}. */
  groupSetting: () =>
    z.union([
      z.number().int(),
      z.object({ direct_members: z.array(z.number().int()), direct_subgroups: z.array(z.number().int()) }),
    ]),
};

type Issue = z.core.$ZodIssue;

/** A Zulip-style message template for a nested zod issue. */
function describeIssue(issue: Issue | undefined): string {
  if (!issue) return "Invalid {var}";
  const where = `{var}${issue.path.map((part) => (typeof part === "number" ? `[${part}]` : `["${clip(String(part))}"]`)).join("")}`;
  switch (issue.code) {
    case "invalid_type": {
      const noun: Record<string, string> = {
        number: "an integer",
        int: "an integer",
        string: "a string",
        boolean: "a boolean",
        array: "a list",
        object: "a dict",
      };
      if (issue.expected === "undefined" || issue.expected === "never")
        return `Argument "${clip(String(issue.path[issue.path.length - 1]))}" at {var} is unexpected`;
      return `${where} is not ${noun[issue.expected] ?? `a ${issue.expected}`}`;
    }
    case "too_small":
      return `${where} is too small`;
    case "too_big":
      return `${where} is too large`;
    case "invalid_union": {
      const first = issue.errors[0]?.[0];
      return first ? describeIssue({ ...first, path: [...issue.path, ...first.path] } as Issue) : `Invalid ${where}`;
    }
    case "unrecognized_keys":
      return `Argument "${clip(issue.keys[0] ?? "")}" at {var} is unexpected`;
    default:
      return `Invalid ${where}`;
  }
}

export interface ParsedParams<P extends ParamShape> {
  readonly values: ParamValues<P>;
  /** Parameters the endpoint does not know, sorted (Zulip's ignored_parameters_unsupported). */
  readonly ignored: readonly string[];
}

/**
 * Parses raw wire values against an endpoint's parameter shape. A missing parameter
 * whose schema rejects undefined is REQUEST_VARIABLE_MISSING; any other failure is
 * BAD_REQUEST with the filled-in template.
 */
export function parseParams<P extends ParamShape>(
  shape: P,
  input: ReadonlyMap<string, string>,
  aliases: Readonly<Record<string, string>> = {},
): ParsedParams<P> {
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(shape)) {
    const alias = Object.entries(aliases).find(([, target]) => target === name)?.[0];
    if (alias !== undefined && input.has(alias) && input.has(name)) {
      throw new ConfusingParamsError(name, alias);
    }
    const value = input.get(name) ?? (alias !== undefined ? input.get(alias) : undefined);
    const result = schema.safeParse(value);
    if (result.success) {
      values[name] = result.data;
      continue;
    }
    if (value === undefined) throw new MissingArgumentError(name);
    const message = result.error.issues[0]?.message ?? "Invalid {var}";
    throw new BadRequestError(
      message.startsWith("Invalid input") ? `Invalid ${name}` : message.replaceAll("{var}", name),
    );
  }
  const known = new Set([...Object.keys(shape), ...Object.keys(aliases), ...SERVER_PARAMS]);
  const ignored = [...input.keys()]
    .filter((k) => !known.has(k))
    .map((k) => clip(k))
    .sort();
  return { values: values as ParamValues<P>, ignored };
}
