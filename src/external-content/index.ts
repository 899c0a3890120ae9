/**
 * @module external-content
 * External images in messages, shown through this server (Zulip's camo): signed
 * /external_content/ URLs for the renderer, and the proxy that serves them.
 */
export {
  checkedLookup,
  isRefusedLiteral,
  publicAddressesOnly,
  publicAndLoopbackAddresses,
  type AddressPolicy,
} from "./address-policy.js";
export { ImageFetchRefused, type FetchLimits, type RefusalKind } from "./fetch-image.js";
export { DEFAULT_PROXY_LIMITS, ImageProxy, type ImageProxyOptions, type ProxiedImage } from "./proxy.js";
export { camoPath, EXTERNAL_CONTENT_PREFIX, MAX_PROXIED_URL_BYTES, signedImageUrls, verifiedUrl } from "./signing.js";
