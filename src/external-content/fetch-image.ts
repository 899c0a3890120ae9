/**
 * @module external-content/fetch-image
 * One image fetched from the outside into a file, for the proxy. The request carries
 * no cookie, credential or header of the reader's (only a fixed Accept and
 * User-Agent), so the image's host learns nothing about who views it. Every hop of a
 * redirect chain is checked again (scheme, address policy, hop count); the whole
 * exchange has one deadline; the body is counted as it streams to disk and cut at
 * the size limit; only image types the browser renders as images are kept.
 */
import { createHash } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { unlink } from "node:fs/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import { checkedLookup, isRefusedLiteral, type AddressPolicy } from "./address-policy.js";

export interface FetchLimits {
  /** The whole exchange, redirects and body included. */
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly maxRedirects: number;
  readonly isAllowedAddress: AddressPolicy;
}

/** Why an image was not fetched; the proxy route turns each into its HTTP answer. */
export type RefusalKind =
  "bad-url" | "address" | "redirects" | "not-image" | "too-large" | "upstream-missing" | "upstream-failed" | "timeout";

export class ImageFetchRefused extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Types kept: raster formats every current browser draws in an <img>. SVG is left
 * out (it is a document that can carry script and pull in other resources).
 */
const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/apng",
  "image/avif",
  "image/bmp",
  "image/gif",
  "image/jpeg",
  "image/png",
  "image/webp",
  "image/x-icon",
  "image/vnd.microsoft.icon",
]);

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const REQUEST_HEADERS = {
  Accept: "image/avif,image/webp,image/apng,image/*;q=0.8",
  "Accept-Encoding": "identity",
  "User-Agent": "parley-image-proxy (+https://zulip.com/help/block-image-and-link-previews)",
} as const;

/** The type/subtype of a Content-Type header when it is one of IMAGE_TYPES, else null. */
export function imageContentType(header: string | undefined): string | null {
  const type = (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return IMAGE_TYPES.has(type) ? type : null;
}

/** `text` as an http(s) URL the proxy may request: no credentials in it, a host present. */
function httpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ImageFetchRefused("bad-url", "Not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ImageFetchRefused("bad-url", "Only http and https URLs are proxied");
  }
  if (url.username !== "" || url.password !== "")
    throw new ImageFetchRefused("bad-url", "URLs with credentials are not proxied");
  if (url.hostname === "") throw new ImageFetchRefused("bad-url", "Not a valid URL");
  return url;
}

function refusedAddress(host: string): ImageFetchRefused {
  return new ImageFetchRefused("address", `The image's host ${host} is not a public address`);
}

function requestOnce(url: URL, policy: AddressPolicy, signal: AbortSignal): Promise<IncomingMessage> {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (isRefusedLiteral(host, policy)) return Promise.reject(refusedAddress(host));
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: url.protocol,
        hostname: host,
        ...(url.port === "" ? {} : { port: Number(url.port) }),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: REQUEST_HEADERS,
        // A connection of its own: never one a pooled agent resolved without the check.
        agent: false,
        lookup: checkedLookup(policy, refusedAddress),
        signal,
      },
      resolve,
    );
    req.on("error", reject);
    req.end();
  });
}

/** Counts and hashes the body as it passes, failing once it exceeds `maxBytes`. */
class BodyMeter extends Transform {
  bytes = 0;
  readonly #hash = createHash("sha256");

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      done(new ImageFetchRefused("too-large", `The image is larger than ${this.maxBytes} bytes`));
      return;
    }
    this.#hash.update(chunk);
    done(null, chunk);
  }

  digest(): string {
    return this.#hash.digest("base64url");
  }
}

export interface FetchedImage {
  readonly contentType: string;
  readonly size: number;
  /** SHA-256 of the bytes (base64url), for the ETag. */
  readonly sha256: string;
}

function upstreamFailure(error: unknown, signal: AbortSignal, timeoutMs: number): ImageFetchRefused {
  if (error instanceof ImageFetchRefused) return error;
  if (signal.aborted) return new ImageFetchRefused("timeout", `The image's host did not answer within ${timeoutMs} ms`);
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return new ImageFetchRefused(
    "upstream-failed",
    `The image could not be fetched${code === undefined ? "" : ` (${code})`}`,
  );
}

/** The response to follow after a redirect, or the final 200 response. */
async function finalResponse(start: URL, limits: FetchLimits, signal: AbortSignal): Promise<IncomingMessage> {
  let url = start;
  for (let hops = 0; ; hops++) {
    const response = await requestOnce(url, limits.isAllowedAddress, signal);
    const status = response.statusCode ?? 0;
    if (status === 200) return response;
    response.destroy();
    if (!REDIRECT_STATUSES.has(status)) {
      const kind = status === 404 || status === 410 ? "upstream-missing" : "upstream-failed";
      throw new ImageFetchRefused(kind, `The image's host answered ${status}`);
    }
    if (hops >= limits.maxRedirects)
      throw new ImageFetchRefused("redirects", `More than ${limits.maxRedirects} redirects`);
    const location = response.headers.location;
    if (location === undefined) {
      throw new ImageFetchRefused("upstream-failed", `The image's host answered ${status} without a Location`);
    }
    url = httpUrl(new URL(location, url).href);
  }
}

/**
 * Fetches `urlText` into a new file at `destination` (which must not exist). On any
 * failure the file is removed and an ImageFetchRefused says why.
 */
export async function fetchImage(urlText: string, destination: string, limits: FetchLimits): Promise<FetchedImage> {
  const url = httpUrl(urlText);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  let file: WriteStream | null = null;
  try {
    const response = await finalResponse(url, limits, controller.signal);
    const contentType = imageContentType(response.headers["content-type"]);
    const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase();
    const declared = Number(response.headers["content-length"] ?? "0");
    if (contentType === null || encoding !== "identity" || declared > limits.maxBytes) response.destroy();
    if (contentType === null) throw new ImageFetchRefused("not-image", "The URL is not an image");
    if (encoding !== "identity")
      throw new ImageFetchRefused("upstream-failed", "The image's host sent an encoded body");
    if (declared > limits.maxBytes)
      throw new ImageFetchRefused("too-large", `The image is larger than ${limits.maxBytes} bytes`);
    const meter = new BodyMeter(limits.maxBytes);
    file = createWriteStream(destination, { flags: "wx", mode: 0o600 });
    await pipeline(response, meter, file, { signal: controller.signal });
    return { contentType, size: meter.bytes, sha256: meter.digest() };
  } catch (error) {
    // A stream destroyed while its open() is pending still creates the file when
    // the open completes, so the unlink waits for the stream to close first.
    if (file !== null) {
      if (!file.closed) await once(file, "close").catch(() => undefined);
      await unlink(destination).catch(() => undefined);
    }
    throw upstreamFailure(error, controller.signal, limits.timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}
