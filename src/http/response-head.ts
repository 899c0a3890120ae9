/**
 * @module http/response-head
 * The one place a response's status line and header fields are built, for both
 * listeners (uWS in http/respond, Node's parser in http/compat-listener). uWS writes
 * whatever it is given, so a value carrying CR or LF would split the head and let
 * whoever chose it add headers of their own (the tus `filetype` did: issue 26).
 *
 * A header name must be an RFC 9110 token; a value may hold visible characters,
 * spaces and tabs only (no CR, LF, NUL or other control character). A reply that
 * breaks this is not sent at all: guardReply() turns it into a 500 and reports it as
 * a bug. Dropping the bad field instead would keep the reply going out, but the field
 * dropped may be the one that made it safe (a Content-Disposition: attachment, a
 * Content-Type), so failing closed is the only choice that cannot serve something the
 * code did not mean to; and the cause is always a missing check upstream, which a 500
 * in the error log makes visible.
 */
import type { Reply } from "./reply.js";

export type HeaderList = readonly (readonly [string, string])[];

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than HTAB, and DEL: matching them is the point. */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

export function isHeaderName(name: string): boolean {
  return TOKEN.test(name);
}

export function isHeaderValue(value: string): boolean {
  return !CONTROL.test(value);
}

/** A reply whose head could not be written as it stands (a bug upstream, never client input as such). */
export class UnsafeHeaderError extends Error {
  constructor(readonly field: string) {
    super(`unsafe response header ${JSON.stringify(field.slice(0, 60))}`);
  }
}

export interface ResponseHead {
  readonly status: number;
  readonly fields: HeaderList;
}

/**
 * The reply's head: its Content-Type (`defaultType` when the reply names none; none
 * at all for ""), then its own fields, then `extra`. Throws UnsafeHeaderError rather
 * than return a field that is not a token or a value with a control character.
 */
export function responseHead(reply: Reply, extra: HeaderList, defaultType: string): ResponseHead {
  if (!Number.isInteger(reply.status) || reply.status < 100 || reply.status > 599)
    throw new UnsafeHeaderError(`status ${reply.status}`);
  const fields: (readonly [string, string])[] = [];
  const type = reply.contentType ?? defaultType;
  if (type !== "") fields.push(["Content-Type", type]);
  fields.push(...(reply.headers ?? []), ...extra);
  for (const [name, value] of fields) {
    if (!isHeaderName(name)) throw new UnsafeHeaderError(name);
    if (!isHeaderValue(value)) throw new UnsafeHeaderError(name);
  }
  return { status: reply.status, fields };
}

/**
 * `reply` with `extra`, or, when their head cannot be written safely, a 500 that says
 * nothing more (logged as a bug, naming the field). Both listeners pass every reply
 * through here before logging and writing it.
 */
export function guardReply(
  reply: Reply,
  extra: HeaderList,
  defaultType: string,
  logError: (message: string, error: unknown) => void,
): { reply: Reply; headers: HeaderList } {
  try {
    responseHead(reply, extra, defaultType);
    return { reply, headers: extra };
  } catch (error) {
    if (!(error instanceof UnsafeHeaderError)) throw error;
    logError(`bug: reply ${reply.status} not sent`, error);
    const body = JSON.stringify({ result: "error", msg: "Internal server error" });
    return {
      reply: { status: 500, body },
      headers: extra.filter(([name, value]) => isHeaderName(name) && isHeaderValue(value)),
    };
  }
}
