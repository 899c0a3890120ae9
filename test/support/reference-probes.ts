/**
 * The access sweep's view of the route table: which parameters of an endpoint name
 * objects (their reference kinds, marked in the endpoint files with `ref` and
 * `compoundRef` from src/http/params.ts, and `pathRefs`), how each kind is written on
 * the wire (one shared table, PROBES), and a check that no parameter which looks like
 * a reference was left unmarked.
 */
import { z } from "zod";
import { pathParamNames, type Endpoint } from "../../src/http/endpoint.js";
import type { ProbeSpec, Ref } from "../../src/http/endpoint-testing.js";
import { describeParam, type ParamInfo, type ParamRef, type RefKind } from "../../src/http/params.js";

const list = (ref: Ref) => JSON.stringify([ref]);
const narrow = (operator: string, names: ProbeSpec["names"], operand: (ref: Ref) => unknown = (r) => r): ProbeSpec => ({
  names,
  label: `narrow ${operator}:${names}`,
  encode: (ref) => JSON.stringify([{ operator, operand: operand(ref) }]),
});
const toChannel = (base: Readonly<Record<string, string>>) => base["type"] === "stream";
const toUsers = (base: Readonly<Record<string, string>>) => base["type"] === "direct";
const groupSetting: readonly ProbeSpec[] = [
  { names: "group", label: "group ID", encode: String },
  {
    names: "group",
    label: "direct_subgroups",
    encode: (r) => JSON.stringify({ direct_members: [], direct_subgroups: [r] }),
  },
  {
    names: "user",
    label: "direct_members",
    encode: (r) => JSON.stringify({ direct_members: [r], direct_subgroups: [] }),
  },
];

/** How each reference kind names an object on the wire: every probe is sent for every marked parameter. */
export const PROBES: Readonly<Record<RefKind, readonly ProbeSpec[]>> = {
  message: [{ names: "message", label: "ID", encode: String }],
  messageList: [{ names: "message", label: "ID list", encode: list }],
  anchor: [{ names: "message", label: "numeric anchor", encode: String }],
  narrow: [
    narrow("channel", "channel"),
    narrow("stream", "channel", String),
    narrow("channel", "channelName"),
    narrow("sender", "user"),
    narrow("sender", "email"),
    narrow("dm", "user", (r) => [r]),
    narrow("dm", "email"),
    narrow("dm-including", "user"),
    narrow("group-pm-with", "user"),
    narrow("mentions", "user"),
    narrow("id", "message"),
    narrow("with", "message"),
    // The legacy [operator, operand] form of a term.
    { names: "channelName", label: "legacy narrow stream:channelName", encode: (r) => JSON.stringify([["stream", r]]) },
  ],
  channel: [{ names: "channel", label: "ID", encode: String }],
  channelList: [{ names: "channel", label: "ID list", encode: list }],
  channelName: [{ names: "channelName", label: "name", encode: String }],
  channelNameList: [{ names: "channelName", label: "name list", encode: list }],
  recipient: [
    { names: "channel", label: "channel ID", encode: String, when: toChannel },
    { names: "channel", label: "channel ID list", encode: list, when: toChannel },
    { names: "channelName", label: "channel name", encode: String, when: toChannel },
    { names: "channelName", label: "channel name (JSON)", encode: (r) => JSON.stringify(r), when: toChannel },
    { names: "user", label: "user IDs", encode: list, when: toUsers },
    { names: "email", label: "emails", encode: String, when: toUsers },
    { names: "email", label: "email list (JSON)", encode: list, when: toUsers },
  ],
  recipientIds: [
    { names: "channel", label: "channel ID", encode: String, when: toChannel },
    { names: "channel", label: "channel ID list", encode: list, when: toChannel },
    { names: "user", label: "user IDs", encode: list, when: toUsers },
    { names: "user", label: "user ID", encode: String, when: toUsers },
  ],
  user: [{ names: "user", label: "ID", encode: String }],
  userList: [{ names: "user", label: "ID list", encode: list }],
  userOrEmail: [
    { names: "user", label: "ID", encode: String },
    { names: "email", label: "email", encode: String },
  ],
  userListOrEmails: [
    { names: "user", label: "IDs", encode: list },
    { names: "email", label: "emails", encode: list },
  ],
  loginEmail: [{ names: "email", label: "login email", encode: String }],
  group: [{ names: "group", label: "ID", encode: String }],
  groupList: [{ names: "group", label: "ID list", encode: list }],
  groupSetting,
  // PATCH's {"new": value}, and a stale {"old": value} beside it.
  groupSettingChange: [
    ...groupSetting.map((probe) => ({ ...probe, encode: (r: Ref) => `{"new":${probe.encode(r)}}` })),
    ...groupSetting.map((probe) => ({
      ...probe,
      label: `old ${probe.label}`,
      encode: (r: Ref) => `{"new":${probe.encode(r)},"old":${probe.encode(r)}}`,
    })),
  ],
  scheduledMessage: [{ names: "scheduled", label: "ID", encode: String }],
  draft: [{ names: "draft", label: "ID", encode: String }],
  snippet: [{ names: "snippet", label: "ID", encode: String }],
  device: [{ names: "device", label: "ID", encode: String }],
  channelFolder: [{ names: "channelFolder", label: "ID", encode: String }],
  defaultChannelGroup: [{ names: "defaultChannelGroup", label: "ID", encode: String }],
  linkifier: [{ names: "linkifier", label: "ID", encode: String }],
  profileField: [{ names: "profileField", label: "ID", encode: String }],
  attachment: [{ names: "attachment", label: "ID", encode: String }],
  tusUpload: [{ names: "tusUpload", label: "ID", encode: String }],
  uploadPath: [
    {
      names: "upload",
      label: "path_id",
      encode: (r) => String(r).split("/")[2]!,
      encodePath: (r) => {
        const [realm_id, path_hash, path_random, filename] = String(r).split("/");
        return {
          realm_id: realm_id!,
          path_hash: path_hash!,
          path_random: path_random!,
          filename: filename!,
          thumbnail_format: "840x560.webp",
        };
      },
    },
  ],
};

export interface ParamSpec {
  readonly name: string;
  readonly inPath: boolean;
  readonly info: ParamInfo | undefined;
  readonly ref: ParamRef | undefined;
}

/** Every parameter of an endpoint, query/body first, then the path's. */
export function paramSpecs(endpoint: Endpoint): ParamSpec[] {
  return [
    ...Object.entries(endpoint.params).map(([name, schema]) => {
      const { info, ref } = describeParam(schema);
      return { name, inPath: false, info, ref };
    }),
    ...pathParamNames(endpoint.path).map((name) => {
      const kind = endpoint.pathRefs?.[name];
      return { name, inPath: true, info: undefined, ref: kind === undefined ? undefined : { kind } };
    }),
  ];
}

/** The parameters an endpoint marks as references. */
export function referenceParams(endpoint: Endpoint): (ParamSpec & { readonly ref: ParamRef })[] {
  return paramSpecs(endpoint).filter((spec): spec is ParamSpec & { ref: ParamRef } => spec.ref !== undefined);
}

/** The probes for one marked parameter: the endpoint's own, or its kind's shared ones. */
export function probesFor(endpoint: Endpoint, spec: ParamSpec & { readonly ref: ParamRef }): readonly ProbeSpec[] {
  const own = endpoint.testing?.probes?.[spec.name];
  if (own) return own;
  return spec.ref.kind === "compound" ? [] : PROBES[spec.ref.kind];
}

/** The last words of wire names that name things (an ID, an address, recipients, a narrow, members...). */
const NAMING_WORDS = new Set([
  ...["id", "ids", "email", "emails", "username", "to", "anchor", "narrow", "principals", "members", "subgroups"],
  ...["subscriptions", "group", "groups", "user", "users", "channel", "channels", "stream", "streams"],
  ...["message", "messages", "draft", "drafts", "snippet", "snippets", "device", "devices", "upload", "attachment"],
]);

/** Whether a zod schema holds an integer anywhere: IDs travel as JSON integers. */
function holdsInteger(schema: z.ZodType, depth = 0): boolean {
  if (depth > 6) return false;
  const next = (s: unknown) => holdsInteger(s as z.ZodType, depth + 1);
  if (schema instanceof z.ZodNumber) return true;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault)
    return next(schema.unwrap());
  if (schema instanceof z.ZodArray) return next(schema.element);
  if (schema instanceof z.ZodObject) return Object.values(schema.shape as Record<string, z.ZodType>).some(next);
  if (schema instanceof z.ZodUnion) return (schema.options as z.ZodType[]).some(next);
  if (schema instanceof z.ZodRecord) return next(schema.valueType);
  if (schema instanceof z.ZodPipe) return next(schema.in) || next(schema.out);
  return false;
}

/**
 * Whether a parameter could name an object and so must be marked (or declared in
 * testing.notRefs): every path segment; a name whose last word names things
 * (stream_id, principals, to, ...) unless it is a boolean or one of fixed strings;
 * JSON holding integers anywhere (add, drafts, ...).
 */
export function mayNameObject(spec: ParamSpec): boolean {
  if (spec.inPath) return true;
  // A boolean or one of fixed strings cannot name an object.
  if (spec.info?.kind === "bool" || spec.info?.kind === "oneOf") return false;
  const words = spec.name.split("_");
  if (NAMING_WORDS.has(words[words.length - 1]!)) return true;
  return spec.info?.kind === "json" && holdsInteger(spec.info.schema);
}

/**
 * What is wrong with the endpoints' markings, one line each: a parameter that may
 * name an object with neither a reference kind nor a reason in testing.notRefs; a
 * reason for a marked parameter; a compound reference without probes for each
 * object it names; probes or sweep bases for parameters that are not references.
 */
export function markingProblems(endpoints: readonly Endpoint[]): string[] {
  const problems: string[] = [];
  for (const endpoint of endpoints) {
    const key = `${endpoint.method} ${endpoint.path}`;
    const notRefs = endpoint.testing?.notRefs ?? {};
    const specs = paramSpecs(endpoint);
    for (const spec of specs) {
      if (spec.ref === undefined && !(spec.name in notRefs) && mayNameObject(spec)) {
        problems.push(
          `${key}: ${spec.name} may name an object: mark it with ref() (or pathRefs), or say why not in testing.notRefs`,
        );
      }
      if (spec.ref !== undefined && spec.name in notRefs)
        problems.push(`${key}: ${spec.name} is both a reference and in notRefs`);
      if (spec.ref?.kind === "compound") {
        const probed = new Set((endpoint.testing?.probes?.[spec.name] ?? []).map((probe) => probe.names));
        const missing = spec.ref.names.filter((names) => !probed.has(names));
        if (missing.length > 0)
          problems.push(`${key}: ${spec.name} names ${missing.join(", ")} but testing.probes has no probe for it`);
      }
    }
    const marked = new Set(specs.filter((spec) => spec.ref !== undefined).map((spec) => spec.name));
    for (const name of Object.keys(endpoint.testing?.probes ?? {})) {
      if (!marked.has(name)) problems.push(`${key}: testing.probes for ${name}, which is not a reference`);
    }
    for (const base of endpoint.testing?.sweepBases ?? []) {
      for (const name of base.for ?? [])
        if (!marked.has(name)) problems.push(`${key}: a sweep base for ${name}, which is not a reference`);
    }
    if (marked.size === 0 && (endpoint.testing?.sweepBases ?? []).length > 0)
      problems.push(`${key}: sweep bases but no reference`);
  }
  return problems;
}
