/**
 * @module render
 * The contract between the engine and a message renderer. The engine calls the
 * renderer once per send (and edit) and stores both the raw content and the HTML; the
 * facts the renderer reports (mentions, links, images, /me) drive flags and indexes.
 * The engine imports no renderer: src/index.ts's openStore passes src/markdown
 * (Zulip-flavoured Markdown) unless the embedder passes their own.
 */

import type { CompiledLinkifier } from "./linkifiers/linkifier.js";

export type { CompiledLinkifier } from "./linkifiers/linkifier.js";

/** A user as the renderer may refer to it. */
export interface RenderUser {
  readonly id: number;
  readonly fullName: string;
  readonly email: string;
}

/** A channel as the renderer may refer to it. */
export interface RenderChannel {
  readonly id: number;
  readonly name: string;
}

/** A user group as the renderer may refer to it. */
export interface RenderGroup {
  readonly id: number;
  readonly name: string;
}

/** An uploaded image as the renderer may preview it. */
export interface RenderUpload {
  readonly contentType: string;
  /** Original dimensions in pixels. */
  readonly width: number;
  readonly height: number;
  readonly animated: boolean;
}

/**
 * The one thumbnail format this server makes (Zulip's default 840x560 WebP); previews
 * point at /user_uploads/thumbnail/<path_id>/<format>.
 */
export const THUMBNAIL_FORMAT = {
  name: "840x560.webp",
  maxWidth: 840,
  maxHeight: 560,
  format: "webp",
  animated: false,
} as const;

/** Realm-scoped lookups for mentions and links. All name matching is case-insensitive. */
export interface RenderContext {
  /** Active users of the realm whose full name matches (several users may share one). */
  findUsersByName(fullName: string): readonly RenderUser[];
  findUserById(userId: number): RenderUser | undefined;
  /** A channel the sender can see, by name. */
  findChannelByName(name: string): RenderChannel | undefined;
  /** A non-system user group by name. */
  findGroupByName(name: string): RenderGroup | undefined;
  /**
   * An uploaded image the sender may access, by path_id (the URL path after
   * /user_uploads/, decoded); undefined for anything else (no preview then).
   */
  findUpload?(pathId: string): RenderUpload | undefined;
  /** Base URL of the realm (for absolute links); may be "". */
  readonly realmUrl: string;
  /** The image URL of the realm's active custom emoji with this name (it wins over a unicode name). */
  findRealmEmoji?(name: string): string | undefined;
  /** The realm's linkifiers in their order (earlier ones win where matches overlap). */
  readonly linkifiers?: readonly CompiledLinkifier[];
}

/** Which wildcard mention a message carries. */
export type WildcardMention = "stream" | "topic" | null;

/** What rendering produced. */
export interface RenderResult {
  /** Safe HTML: no raw HTML from the source passes through. */
  readonly html: string;
  /** Users mentioned personally and non-silently (@**Name**, @**Name|id**). */
  readonly mentionedUserIds: readonly number[];
  /** Groups mentioned non-silently (@*group*). */
  readonly mentionedGroupIds: readonly number[];
  /** @**all**, @**everyone**, @**channel**, @**stream** -> "stream"; @**topic** -> "topic". */
  readonly wildcard: WildcardMention;
  readonly hasLink: boolean;
  readonly hasImage: boolean;
  /** Links to uploaded files (/user_uploads/...). */
  readonly hasAttachment: boolean;
  /** The path_ids those links name (Zulip's potential_attachment_path_ids); the engine claims the ones that exist. */
  readonly uploadPathIds: readonly string[];
  /** The message is a /me status message. */
  readonly isMeMessage: boolean;
  /**
   * Why the renderer fell back (a bug in it): the fallback is stored, and the engine
   * reports the failure with the message's ID to Store.onRenderFailure listeners.
   */
  readonly failure?: string;
}

/** A message stored with a renderer's fallback. */
export interface RenderFailure {
  readonly messageId: number;
  readonly failure: string;
}

/** A renderer: pure function of the content and the realm lookups. */
export type MessageRenderer = (content: string, context: RenderContext) => RenderResult;
