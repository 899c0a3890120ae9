/**
 * @module markdown/render-state
 * The per-message accumulator shared by every rule during one render: the realm
 * lookups plus the facts the engine needs back (mentions, wildcards, links). It
 * travels in markdown-it's `env` under a private symbol, because `env` is the only
 * thing markdown-it threads through parsing and rendering.
 */
import type { Env } from "markdown-it";
import type { RenderContext, WildcardMention } from "../engine/render.js";

const STATE_KEY: unique symbol = Symbol("parley.markdown.state");

/** How a renderer is set up (createMarkdownRenderer); fixed for its lifetime. */
export interface MarkdownOptions {
  /**
   * Where a reader's browser loads an external image from: Zulip's camo rewrite (a
   * signed /external_content/ path on this server), or null to show no preview of
   * it. Without it, external images are loaded from their own host.
   */
  readonly externalImageUrl?: (url: string) => string | null;
}

export class RenderState {
  readonly mentionedUserIds = new Set<number>();
  readonly mentionedGroupIds = new Set<number>();
  streamWildcard = false;
  topicWildcard = false;
  hasLink = false;
  hasImage = false;
  hasAttachment = false;
  /** path_ids of linked uploads, in order of appearance. */
  readonly uploadPathIds: string[] = [];
  /** Blockquotes enclosing the inline content being parsed; mentions there are silenced. */
  quoteDepth = 0;
  /** Image URLs already previewed: Zulip shows each image once per message. */
  readonly previewedUrls = new Set<string>();

  constructor(
    readonly context: RenderContext,
    readonly options: MarkdownOptions = {},
  ) {}

  /**
   * The src of an <img> pointing at `url`: this server's own paths as they are,
   * anything else through externalImageUrl (null: no image). As Zulip's
   * InlineImageProcessor, which sends every image not on the realm through camo.
   */
  imageSrc(url: string): string | null {
    // "//host" and "/\\host" name another host (browsers read a backslash as a slash).
    if (/^\/(?![/\\])/.test(url)) return url;
    const rewrite = this.options.externalImageUrl;
    return rewrite === undefined ? url : rewrite(url);
  }

  get wildcard(): WildcardMention {
    // A channel-wide notification already covers everyone in the topic.
    if (this.streamWildcard) return "stream";
    return this.topicWildcard ? "topic" : null;
  }
}

/** A fresh env carrying `state`, for one md.parse/md.render call. */
export function createEnv(state: RenderState): Env {
  return { [STATE_KEY]: state };
}

/** The state of the render in progress; the markdown-it instance is never used without one. */
export function renderStateOf(env: Env | undefined): RenderState {
  const state = env?.[STATE_KEY];
  if (state instanceof RenderState) return state;
  throw new Error("markdown: rule invoked outside renderMarkdown");
}
