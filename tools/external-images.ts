/**
 * @module tools/external-images
 * The camo key and the message renderer that signs external images with it, for the
 * commands that open a store which renders messages (serve, start, import).
 */
import { camoKeyFor, type ServerConfig } from "../src/config/index.js";
import type { MessageRenderer } from "../src/engine/index.js";
import { signedImageUrls } from "../src/external-content/index.js";
import { createMarkdownRenderer } from "../src/markdown/index.js";

export interface ExternalImages {
  readonly camoKey: string;
  readonly renderer: MessageRenderer;
}

/**
 * One key for the renderer (which signs image URLs into the stored HTML) and the
 * proxy (which verifies them): CAMO_KEY, else DATA/secrets.json's, generated on first use.
 */
export function externalImages(config: ServerConfig, dataDir: string): ExternalImages {
  const camoKey = camoKeyFor(config, dataDir);
  return { camoKey, renderer: createMarkdownRenderer({ externalImageUrl: signedImageUrls(camoKey) }) };
}
