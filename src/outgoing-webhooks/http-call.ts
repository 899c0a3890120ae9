/**
 * @module outgoing-webhooks/http-call
 * One POST to a bot's service. The address guard is the image proxy's
 * (external-content/address-policy): every address the host resolves to is checked
 * and the connection goes to a checked one, so a bot's URL cannot reach this
 * server's loopback services, the private network or cloud metadata endpoints
 * unless the policy allows it. Zulip gets the same from its Smokescreen proxy, which
 * answers such requests with 407; a refused address is reported as that 407 here.
 * Redirects are not followed (each hop would need the check again; Zulip's requests
 * session follows them through the proxy): a 3xx is an answer like any other.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { checkedLookup, isRefusedLiteral, type AddressPolicy } from "../external-content/index.js";
import type { RequestBody } from "./payload.js";

/** An answer's body is read up to this many bytes; the rest is dropped. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** Zulip's status for a URL its proxy refuses (Smokescreen: private or disallowed network). */
export const REFUSED_ADDRESS_STATUS = 407;

export interface CallAnswer {
  readonly status: number;
  readonly body: Buffer;
}

/**
 * Why no answer came: "timeout" and "connection" are retried (Zulip's Timeout and
 * ConnectionError); "exception" is any other failure, named by `type`.
 */
export class CallFailed extends Error {
  constructor(
    readonly kind: "timeout" | "connection" | "exception",
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

class AddressRefused extends Error {}

export interface CallOptions {
  readonly timeoutMs: number;
  readonly isAllowedAddress: AddressPolicy;
  readonly userAgent: string;
}

const CONNECTION_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "ECONNABORTED",
]);

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CallFailed("exception", "InvalidURL", `Invalid URL '${text}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new CallFailed("exception", "InvalidSchema", `No connection adapters were found for '${text}'`);
  return url;
}

/** POSTs `body` to `urlText`; the answer (any status), or CallFailed. */
export async function postToService(urlText: string, body: RequestBody, options: CallOptions): Promise<CallAnswer> {
  const url = parseUrl(urlText);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const refused = { status: REFUSED_ADDRESS_STATUS, body: Buffer.alloc(0) };
  if (isRefusedLiteral(host, options.isAllowedAddress)) return refused;
  const signal = AbortSignal.timeout(options.timeoutMs);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  const payload = Buffer.from(body.body, "utf8");
  try {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        {
          protocol: url.protocol,
          hostname: host,
          ...(url.port === "" ? {} : { port: Number(url.port) }),
          path: `${url.pathname}${url.search}`,
          method: "POST",
          headers: {
            "Content-Type": body.contentType,
            "Content-Length": String(payload.length),
            "User-Agent": options.userAgent,
            ...(url.username !== "" || url.password !== ""
              ? {
                  Authorization: `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`,
                }
              : {}),
          },
          // A connection of its own: never one a pooled agent resolved without the check.
          agent: false,
          lookup: checkedLookup(options.isAllowedAddress, () => new AddressRefused()),
          signal,
        },
        resolve,
      );
      req.on("error", reject);
      req.end(payload);
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response) {
      const bytes = chunk as Buffer;
      if (size < MAX_ANSWER_BYTES) chunks.push(bytes.subarray(0, MAX_ANSWER_BYTES - size));
      size += bytes.length;
    }
    return { status: response.statusCode ?? 0, body: Buffer.concat(chunks) };
  } catch (error) {
    if (error instanceof AddressRefused) return refused;
    if (signal.aborted) throw new CallFailed("timeout", "Timeout", `timed out after ${options.timeoutMs} ms`);
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const message = error instanceof Error ? error.message : String(error);
    if (code !== undefined && CONNECTION_CODES.has(code))
      throw new CallFailed("connection", "ConnectionError", message);
    throw new CallFailed("exception", code ?? (error instanceof Error ? error.name : "Error"), message);
  }
}
