/**
 * @module http/request
 * Reading a request off uWebSockets.js: headers are copied synchronously (uWS
 * forbids touching `req` after the handler returns; the body is read by
 * http/body-source), and form bodies are decoded —
 * application/x-www-form-urlencoded directly, multipart/form-data with busboy (file
 * parts are skipped here: only endpoints that stream their body receive files, see
 * http/body-source and http/endpoints/uploads).
 */
import busboy from "busboy";
import { BodyError } from "./errors.js";
import type { HttpRequest, HttpResponse } from "uWebSockets.js";
import { clip } from "../engine/index.js";

export interface RequestHead {
  readonly method: string;
  readonly url: string;
  readonly query: string;
  readonly host: string;
  readonly authorization: string;
  readonly contentType: string;
  readonly contentLength: number | null;
  readonly userAgent: string;
  /** For the one cacheable file served here (http/emoji-data). */
  readonly ifNoneMatch: string;
  /** The peer's address as text (failed-authentication limits are kept per address). */
  readonly remoteAddress: string;
  /** Headers only some endpoints read (downloads, tus); "" when absent. */
  readonly extra: Readonly<Record<ExtraHeader, string>>;
}

/** Headers copied for the endpoints that need them (uWS allows reading headers only in the handler's first tick). */
export const EXTRA_HEADERS = [
  "range",
  "if-range",
  "tus-resumable",
  "upload-length",
  "upload-offset",
  "upload-metadata",
  "upload-defer-length",
  "upload-concat",
  // Incoming webhooks: the event type of GitHub's and GitLab's payloads.
  "x-github-event",
  "x-gitlab-event",
  // The web client's session (http/session): its cookie, CSRF token and the page's origin.
  "cookie",
  "x-csrftoken",
  "origin",
  "sec-fetch-mode",
  "sec-fetch-site",
] as const;
export type ExtraHeader = (typeof EXTRA_HEADERS)[number];

export interface RequestBody {
  readonly fields: Map<string, string>;
}

export { BodyError } from "./errors.js";

/** Django's DATA_UPLOAD_MAX_NUMBER_FIELDS, which Zulip keeps: more fields is a 400. */
export const MAX_FIELDS = 1000;

function tooManyFields(): BodyError {
  return new BodyError("MALFORMED_BODY", `Too many parameters (limit: ${MAX_FIELDS})`);
}

/** Decoded form pairs into a map (last value wins), refusing more than MAX_FIELDS pairs. */
function formFields(text: string, into: Map<string, string>): Map<string, string> {
  let count = 0;
  for (const [k, v] of new URLSearchParams(text)) {
    if (++count > MAX_FIELDS) throw tooManyFields();
    into.set(k, v);
  }
  return into;
}

/** Reads the request head; `res` only for the peer address, which uWS also allows only now. */
export function readHead(req: HttpRequest, res: HttpResponse): RequestHead {
  const length = req.getHeader("content-length");
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    url: req.getUrl(),
    query: req.getQuery() ?? "",
    host: req.getHeader("host"),
    authorization: req.getHeader("authorization"),
    contentType: req.getHeader("content-type"),
    contentLength: length === "" ? null : Number(length),
    userAgent: req.getHeader("user-agent"),
    ifNoneMatch: req.getHeader("if-none-match"),
    remoteAddress: ADDRESS_TEXT.decode(res.getRemoteAddressAsText()),
    extra: extraHeaders((name) => req.getHeader(name)),
  };
}

/** Decodes uWS's peer address (ASCII text) without a Buffer per request. */
const ADDRESS_TEXT = new TextDecoder();

/**
 * The EXTRA_HEADERS of a request ("" when absent), for both listeners. A loop, not
 * Object.fromEntries: that cost about 3 µs a request (a pair array each, and an object of
 * no fixed shape), 1% of each worker's CPU in a profiled bench:day at `--workers auto`.
 */
export function extraHeaders(get: (name: ExtraHeader) => string): Record<ExtraHeader, string> {
  const extra = {} as Record<ExtraHeader, string>;
  for (const name of EXTRA_HEADERS) extra[name] = get(name);
  return extra;
}

/** Whether a body of this Content-Type is a form parseBody decodes (no type counts as one). */
export function isFormBody(contentType: string): boolean {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "" || type === "application/x-www-form-urlencoded" || type === "multipart/form-data";
}

/** Decodes a form body into fields. */
export async function parseBody(head: RequestHead, body: Buffer): Promise<RequestBody> {
  const fields = new Map<string, string>();
  if (body.length === 0) return { fields };
  const type = head.contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded" || type === "") {
    formFields(body.toString("utf8"), fields);
    return { fields };
  }
  if (type === "multipart/form-data") {
    await new Promise<void>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({
          headers: { "content-type": head.contentType },
          defParamCharset: "utf8",
          limits: { fields: MAX_FIELDS },
        });
      } catch {
        reject(new BodyError("MALFORMED_BODY", "Malformed multipart body"));
        return;
      }
      parser.on("field", (name, value) => fields.set(name, value));
      // No endpoint that buffers its body takes files: drain them unread.
      parser.on("file", (_name, stream) => stream.resume());
      parser.on("fieldsLimit", () => reject(tooManyFields()));
      parser.on("error", () => reject(new BodyError("MALFORMED_BODY", "Malformed multipart body")));
      parser.on("close", () => resolve());
      parser.end(body);
    });
    return { fields };
  }
  if (type === "application/json") throw new BodyError("MALFORMED_BODY", "Malformed payload");
  throw new BodyError("UNSUPPORTED_MEDIA_TYPE", `Unsupported content type ${clip(type)}`);
}

/** Query string parameters (last value wins, like Django's QueryDict.get). */
export function parseQuery(query: string): Map<string, string> {
  return formFields(query, new Map());
}
