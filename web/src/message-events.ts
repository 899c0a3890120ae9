/**
 * Zulip's update_message and delete_message events, read into what the client acts on.
 * One update_message may both edit content (of `message_id`) and move messages
 * (`message_ids`): a move has `new_stream_id` (channel changed) and/or `subject` (topic
 * changed); `orig_subject` and `stream_id` say where they were.
 */
import type { ServerEvent } from "./types.js";

export interface ContentEdit {
  readonly id: number;
  readonly renderedContent: string;
  /** This user's flags for the message after the edit (mentions may have changed). */
  readonly flags: readonly string[] | null;
  readonly editedAt: number | null;
  /** Link previews or thumbnails: not an edit by anyone. */
  readonly renderingOnly: boolean;
}

export interface Move {
  readonly ids: readonly number[];
  readonly fromStream: number;
  readonly toStream: number;
  readonly fromTopic: string;
  readonly toTopic: string;
  /** change_one, change_later or change_all. */
  readonly mode: string;
  readonly movedAt: number | null;
}

function ids(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((v): v is number => typeof v === "number") : [];
}

export function contentEditOf(e: ServerEvent): ContentEdit | null {
  if (e.type !== "update_message" || typeof e["rendered_content"] !== "string") return null;
  const id = e["message_id"];
  if (typeof id !== "number") return null;
  return {
    id,
    renderedContent: e["rendered_content"],
    flags: Array.isArray(e["flags"]) ? e["flags"].filter((f): f is string => typeof f === "string") : null,
    editedAt: typeof e["edit_timestamp"] === "number" ? e["edit_timestamp"] : null,
    renderingOnly: e["rendering_only"] === true,
  };
}

export function moveOf(e: ServerEvent): Move | null {
  if (e.type !== "update_message") return null;
  const fromStream = e["stream_id"];
  const newStream = e["new_stream_id"];
  const subject = e["subject"];
  const orig = e["orig_subject"];
  if (typeof fromStream !== "number" || typeof orig !== "string") return null;
  if (typeof newStream !== "number" && typeof subject !== "string") return null;
  const moved = ids(e["message_ids"]);
  return {
    ids: moved.length > 0 ? moved : ids([e["message_id"]]),
    fromStream,
    toStream: typeof newStream === "number" ? newStream : fromStream,
    fromTopic: orig,
    toTopic: typeof subject === "string" ? subject : orig,
    mode: typeof e["propagate_mode"] === "string" ? e["propagate_mode"] : "change_one",
    movedAt: typeof e["edit_timestamp"] === "number" ? e["edit_timestamp"] : null,
  };
}

/** The IDs a delete_message event removes (both forms: with and without bulk_message_deletion). */
export function deletedIdsOf(e: ServerEvent): number[] {
  if (e.type !== "delete_message") return [];
  return Array.isArray(e["message_ids"]) ? ids(e["message_ids"]) : ids([e["message_id"]]);
}

export function isMention(flag: string): boolean {
  return flag === "mentioned" || flag === "stream_wildcard_mentioned" || flag === "topic_wildcard_mentioned";
}
