/**
 * @module http/endpoints/drafts/draft-params
 * A draft as clients send it (Zulip's DraftData: no other keys), and the path's draft ID.
 */
import { z } from "zod";
import type { DraftInput } from "../../../engine/index.js";
import type { AuthedContext } from "../../endpoint.js";
import type { ProbeSpec } from "../../endpoint-testing.js";
import { j } from "../../params.js";

export const draftSchema = z.strictObject({
  type: z.enum(["", "stream", "private"]),
  to: j.intList(),
  topic: z.string(),
  content: z.string(),
  timestamp: z.number().optional(),
});

/** A draft addressed to a channel or to a user, for the access sweep; `wrap` makes the parameter of one draft. */
export function draftProbes(wrap: (draft: unknown) => unknown): readonly ProbeSpec[] {
  const draft = (type: string, to: unknown, topic: string) =>
    JSON.stringify(wrap({ type, to: [to], topic, content: "c" }));
  return [
    { names: "channel", label: "channel draft", encode: (id) => draft("stream", id, "t") },
    { names: "user", label: "direct draft", encode: (id) => draft("private", id, "") },
  ];
}

export function toDraftInput(d: z.output<typeof draftSchema>): DraftInput {
  return {
    type: d.type,
    to: d.to,
    topic: d.topic,
    content: d.content,
    ...(d.timestamp !== undefined ? { timestamp: d.timestamp } : {}),
  };
}

/**
 * The path's draft ID; anything else names no draft (the engine answers "Draft does not exist" after its own checks).
 */
export function draftIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["draft_id"] ?? "";
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}
