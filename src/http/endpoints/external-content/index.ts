/**
 * @module http/endpoints/external-content
 * GET /external_content/{digest}/{hex of the URL}: an external image from a message,
 * fetched by this server (Zulip's camo, which Zulip serves at this path), so readers'
 * browsers never contact the image's host. Only URLs this server signed are fetched
 * (403 otherwise). The image is answered as a sandboxed, never-sniffed resource of
 * the declared image type; no credentials are needed, as in Zulip (the URL is the
 * capability, and it names only a public image).
 */
import { BadRequestError, NotFoundError, PermissionDeniedError } from "../../../engine/index.js";
import { ImageFetchRefused, type ProxiedImage, type RefusalKind } from "../../../external-content/index.js";
import { defineEndpoint, RawReply, type PublicContext } from "../../endpoint.js";
import { UnknownRouteError, UpstreamImageError } from "../../errors.js";

/** The HTTP answer to each reason an image was not fetched. */
function refusalError(refusal: ImageFetchRefused): Error {
  const byKind: Record<RefusalKind, () => Error> = {
    "bad-url": () => new BadRequestError(refusal.message),
    address: () => new PermissionDeniedError(refusal.message, "ACCESS_DENIED"),
    redirects: () => new BadRequestError(refusal.message),
    "not-image": () => new BadRequestError(refusal.message),
    "too-large": () => new BadRequestError(refusal.message),
    "upstream-missing": () => new NotFoundError(refusal.message),
    "upstream-failed": () => new UpstreamImageError(refusal.message),
    timeout: () => new UpstreamImageError(refusal.message),
  };
  return byKind[refusal.kind]();
}

const IMAGE_HEADERS: readonly (readonly [string, string])[] = [
  // Opened on its own, the image can run nothing and load nothing.
  ["Content-Security-Policy", "default-src 'none'; sandbox"],
  ["X-Content-Type-Options", "nosniff"],
  // The URL names one external image; its content is the same for every reader.
  ["Cache-Control", "public, max-age=86400"],
];

function imageReply(image: ProxiedImage, ctx: PublicContext): RawReply {
  const headers = [...IMAGE_HEADERS, ["ETag", image.etag] as const];
  const tags = ctx.head.ifNoneMatch === "" ? [] : ctx.head.ifNoneMatch.split(",").map((t) => t.trim());
  if (tags.includes(image.etag) || tags.includes("*")) return new RawReply(304, headers, { kind: "empty" });
  const file = {
    kind: "file",
    path: image.path,
    start: 0,
    length: image.size,
    contentType: image.contentType,
  } as const;
  return new RawReply(200, headers, file);
}

export const externalContentEndpoint = defineEndpoint({
  method: "GET",
  path: "/external_content/:digest/:encoded_url",
  root: true,
  auth: "none",
  params: {},
  // test/http/external-content
  testing: {
    notRefs: {
      digest: "the server's signature of the URL: it names no realm's object",
      encoded_url: "an external image's URL, signed by the server",
    },
  },
  async handler(ctx) {
    const proxy = ctx.server.imageProxy;
    // No camo key: as in Zulip with CAMO_URI empty, the route does not exist.
    if (proxy === null) throw new UnknownRouteError();
    const url = proxy.verify(ctx.pathParams["digest"] ?? "", ctx.pathParams["encoded_url"] ?? "");
    if (url === null) throw new PermissionDeniedError("Invalid signature", "ACCESS_DENIED");
    try {
      return imageReply(await proxy.image(url), ctx);
    } catch (error) {
      throw error instanceof ImageFetchRefused ? refusalError(error) : error;
    }
  },
});

export const EXTERNAL_CONTENT_ENDPOINTS = [externalContentEndpoint];
