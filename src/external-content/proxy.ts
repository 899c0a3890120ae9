/**
 * @module external-content/proxy
 * The image proxy behind /external_content/ (Zulip's camo): verifies that this server
 * signed a URL, fetches the image once into a small on-disk cache and hands out the
 * cached file, which the route streams from disk like an upload (one chunk in memory
 * per download, whatever the image's size). Readers opening the same message share
 * one fetch: concurrent requests for a URL wait on the same one, later ones reuse
 * the file until it expires or the cache needs the room. The cache directory is
 * emptied at the first fetch after a start: nothing in it is needed across restarts.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publicAddressesOnly } from "./address-policy.js";
import { fetchImage, type FetchLimits } from "./fetch-image.js";
import { verifiedUrl } from "./signing.js";

const MiB = 1024 * 1024;

/** Defaults: go-camo's order of magnitude, and the sizes a chat image has. */
export const DEFAULT_PROXY_LIMITS: FetchLimits = {
  timeoutMs: 10_000,
  maxBytes: 10 * MiB,
  maxRedirects: 5,
  isAllowedAddress: publicAddressesOnly,
};

export interface ImageProxyOptions extends Partial<FetchLimits> {
  /** HMAC key of the signed URLs (CAMO_KEY). */
  readonly key: string;
  /** Cache directory (DATA/external_content); a temporary one when null. */
  readonly root: string | null;
  /** Bytes of images kept on disk; the least recently used go first. */
  readonly maxCacheBytes?: number;
  /** How long a fetched image is served before it is fetched again. */
  readonly ttlMs?: number;
  readonly now?: () => number;
}

/** A fetched image on disk. */
export interface ProxiedImage {
  readonly path: string;
  readonly size: number;
  readonly contentType: string;
  readonly etag: string;
}

interface CacheEntry extends ProxiedImage {
  readonly expiresAt: number;
}

export class ImageProxy {
  readonly limits: FetchLimits;
  readonly #key: string;
  readonly #maxCacheBytes: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #root: string | null;
  #rootReady = false;
  /** By URL, least recently used first (a Map keeps insertion order; a hit re-inserts). */
  readonly #entries = new Map<string, CacheEntry>();
  readonly #inFlight = new Map<string, Promise<CacheEntry>>();
  #cachedBytes = 0;

  constructor(options: ImageProxyOptions) {
    this.#key = options.key;
    this.limits = {
      timeoutMs: options.timeoutMs ?? DEFAULT_PROXY_LIMITS.timeoutMs,
      maxBytes: options.maxBytes ?? DEFAULT_PROXY_LIMITS.maxBytes,
      maxRedirects: options.maxRedirects ?? DEFAULT_PROXY_LIMITS.maxRedirects,
      isAllowedAddress: options.isAllowedAddress ?? DEFAULT_PROXY_LIMITS.isAllowedAddress,
    };
    this.#maxCacheBytes = Math.max(options.maxCacheBytes ?? 256 * MiB, this.limits.maxBytes);
    this.#ttlMs = options.ttlMs ?? 60 * 60 * 1000;
    this.#now = options.now ?? (() => Date.now());
    this.#root = options.root;
  }

  /** The URL a proxied path names, or null when this server did not sign it. */
  verify(digest: string, hexUrl: string): string | null {
    return verifiedUrl(this.#key, digest, hexUrl);
  }

  /** The image at `url`, from the cache or fetched now; throws ImageFetchRefused. */
  async image(url: string): Promise<ProxiedImage> {
    const cached = this.#entries.get(url);
    if (cached !== undefined) {
      if (cached.expiresAt > this.#now()) {
        this.#entries.delete(url);
        this.#entries.set(url, cached);
        return cached;
      }
      this.#drop(url, cached);
    }
    let pending = this.#inFlight.get(url);
    if (pending === undefined) {
      pending = this.#fetch(url).finally(() => this.#inFlight.delete(url));
      this.#inFlight.set(url, pending);
    }
    return pending;
  }

  async #fetch(url: string): Promise<CacheEntry> {
    const path = join(this.#directory(), randomBytes(12).toString("hex"));
    const fetched = await fetchImage(url, path, this.limits);
    const entry: CacheEntry = {
      path,
      size: fetched.size,
      contentType: fetched.contentType,
      etag: `"${fetched.sha256.slice(0, 22)}"`,
      expiresAt: this.#now() + this.#ttlMs,
    };
    const previous = this.#entries.get(url);
    if (previous !== undefined) this.#drop(url, previous);
    this.#add(url, entry);
    for (const [oldUrl, old] of this.#entries) {
      if (this.#cachedBytes <= this.#maxCacheBytes || old === entry) break;
      this.#drop(oldUrl, old);
    }
    return entry;
  }

  #add(url: string, entry: CacheEntry): void {
    this.#entries.set(url, entry);
    this.#cachedBytes += entry.size;
  }

  /**
   * Forgets an entry and deletes its file. A download already streaming it
   * keeps its open file; one about to open it answers 404 and the client may retry.
   */
  #drop(url: string, entry: CacheEntry): void {
    this.#entries.delete(url);
    this.#cachedBytes -= entry.size;
    void unlink(entry.path).catch(() => undefined);
  }

  /** The cache directory, emptied and created on first use. */
  #directory(): string {
    if (this.#root === null) this.#root = mkdtempSync(join(tmpdir(), "parley-external-"));
    else if (!this.#rootReady) {
      rmSync(this.#root, { recursive: true, force: true });
      mkdirSync(this.#root, { recursive: true, mode: 0o700 });
    }
    this.#rootReady = true;
    return this.#root;
  }
}
