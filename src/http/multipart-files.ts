/**
 * @module http/multipart-files
 * Receives a multipart/form-data body from a BodySource with busboy, writing each
 * file part to a temporary file as it arrives: memory holds a few chunks, never the
 * file. Backpressure runs end to end: a slow disk pauses the file stream, which
 * fills busboy, which pauses the socket (BodySource). At most MAX_FILES file parts
 * get a file (one more only marks the request as having several); a file over
 * `maxFileBytes` stops the receipt at once.
 */
import busboy from "busboy";
import { BadRequestError, type EngineError } from "../engine/index.js";
import type { TempFile } from "../uploads/index.js";
import type { BodySource } from "./body-source.js";
import { BodyError } from "./errors.js";
import { MAX_FIELDS } from "./request.js";

/** Two: enough to tell "one file" from "several" without storing more. */
const MAX_FILES = 2;

export interface ReceivedFile {
  readonly field: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly temp: TempFile;
}

export interface MultipartLimits {
  readonly maxFileBytes: number;
  /** The error for a file over maxFileBytes (Zulip's text names the limit). */
  readonly tooLarge: () => EngineError;
}

/**
 * The body's fields and files. On any failure every temporary file is deleted and the
 * error is thrown; on success the caller owns the files (and must store or discard them).
 */
export async function receiveMultipartFiles(
  body: BodySource,
  contentType: string,
  openTemp: () => Promise<TempFile>,
  limits: MultipartLimits,
): Promise<{ fields: Map<string, string>; files: ReceivedFile[]; severalFiles: boolean }> {
  const fields = new Map<string, string>();
  const files: ReceivedFile[] = [];
  const opening: Promise<unknown>[] = [];
  let severalFiles = false;
  let failure: unknown = null;
  const fail = (error: unknown) => {
    failure ??= error;
  };
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { "content-type": contentType },
      defParamCharset: "utf8",
      limits: { fields: MAX_FIELDS, files: MAX_FILES, fileSize: limits.maxFileBytes + 1 },
    });
  } catch {
    throw new BodyError("MALFORMED_BODY", "Malformed multipart body");
  }
  const closed = new Promise<void>((resolve) => {
    parser.on("close", resolve);
    parser.on("error", () => resolve());
  });
  parser.on("field", (name, value) => fields.set(name, value));
  parser.on("fieldsLimit", () => fail(new BodyError("MALFORMED_BODY", `Too many parameters (limit: ${MAX_FIELDS})`)));
  parser.on("filesLimit", () => (severalFiles = true));
  parser.on("error", () => fail(new BodyError("MALFORMED_BODY", "Malformed multipart body")));
  parser.on("file", (field, stream, info) => {
    if (files.length + opening.length >= 1) severalFiles = true;
    stream.pause();
    // parser.destroy() below fails an unfinished part with an error event: unheard, it would end the process.
    stream.on("error", () => undefined);
    stream.on("limit", () => fail(limits.tooLarge()));
    // Destroying the parser after a failure ends the part early ("Unexpected end of file"): the failure is recorded.
    stream.on("error", () => undefined);
    const opened = openTemp().then(
      (temp) => {
        files.push({ field, filename: info.filename ?? "", mimeType: info.mimeType, temp });
        stream.on("data", (chunk: Buffer) => {
          if (!temp.write(chunk)) {
            stream.pause();
            temp.onDrain(() => stream.resume());
          }
          // A failed write (full disk) ends the receipt now rather than after the whole body.
          if (temp.failure !== null) fail(temp.failure);
        });
        stream.resume();
      },
      (error: unknown) => {
        fail(error);
        stream.resume();
      },
    );
    opening.push(opened);
  });

  try {
    for await (const chunk of body) {
      if (failure !== null) break;
      if (!parser.write(chunk)) await new Promise<void>((resolve) => parser.once("drain", resolve));
    }
    if (failure === null && !body.aborted) {
      parser.end();
      await closed;
      await Promise.all(opening);
    }
    if (failure === null && body.aborted) failure = new BodyError("MALFORMED_BODY", "Malformed multipart body");
  } catch (error) {
    fail(error);
  }
  if (failure !== null) {
    parser.destroy();
    await Promise.allSettled(opening);
    await Promise.all(files.map((f) => f.temp.discard()));
    throw failure;
  }
  // busboy cut the file one byte past the limit (and said so with "limit"); this catches exactly limit + 1.
  if (files.some((f) => f.temp.received > limits.maxFileBytes)) {
    await Promise.all(files.map((f) => f.temp.discard()));
    throw limits.tooLarge();
  }
  return { fields, files, severalFiles };
}

/**
 * An image upload's files (a custom emoji, an avatar): the multipart body's files, each
 * at most `limitMib` MiB with Zulip's error naming the limit; none for any other body,
 * so the endpoint refuses with its own "exactly one" error.
 */
export function receiveImageFiles(
  body: BodySource | null,
  contentType: string,
  openTemp: () => Promise<TempFile>,
  limitMib: number,
): Promise<{ files: ReceivedFile[]; severalFiles: boolean }> {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type !== "multipart/form-data" || body === null) return Promise.resolve({ files: [], severalFiles: false });
  return receiveMultipartFiles(body, contentType, openTemp, {
    maxFileBytes: limitMib * 1024 * 1024,
    tooLarge: () => new BadRequestError(`Uploaded file is larger than the allowed limit of ${limitMib} MiB`),
  });
}
