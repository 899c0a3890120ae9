/**
 * @module markdown/links
 * Link policy and link facts. Only http(s), mailto, uploaded files (/user_uploads/)
 * and in-app fragments (#narrow/...) may become links, so `javascript:` and
 * `data:` never reach an href. After parsing, every link is normalised the way
 * Zulip does (realm-local URLs made relative, empty labels replaced by the URL,
 * Markdown image syntax turned into a link plus preview), the message's
 * link/image/attachment facts are recorded, and image previews are placed after
 * the paragraph that links them.
 */
import type { StateCore, Token } from "markdown-it";
import { THUMBNAIL_FORMAT, type RenderUpload } from "../engine/render.js";
import { escapeAttr } from "./escape.js";
import { BLOCK_HTML, blockHtmlToken } from "./raw-html.js";
import { renderStateOf, type RenderState } from "./render-state.js";

const ALLOWED_URL_RE = /^(?:https?:|mailto:|\/user_uploads\/|#)/i;
const UPLOAD_PATH = "/user_uploads/";
/** Zulip's IMAGE_EXTENSIONS. */
const IMAGE_PATH_RE = /\.(?:bmp|gif|jpe|jpeg|jpg|png|webp)$/i;

/** markdown-it's validateLink hook: the allow-list above. */
export function isAllowedUrl(url: string): boolean {
  return ALLOWED_URL_RE.test(url.trim());
}

function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/** Whether a link points at an image Zulip would preview. */
export function isImageUrl(url: string): boolean {
  return /^(?:https?:\/\/|\/user_uploads\/)/i.test(url) && IMAGE_PATH_RE.test(pathOf(url));
}

/**
 * Zulip's list of top-level domains leaves out ones that are mostly file
 * extensions, so `readme.md` and `views.py` are not linkified.
 */
const FILE_EXTENSION_TLDS: ReadonlySet<string> = new Set(["java", "md", "mov", "py", "zip"]);

/** A schemeless bare link whose "domain" is really a file name. */
function isFileNameLink(token: Token, label: string, href: string): boolean {
  if (token.markup !== "linkify" || /^[a-z][a-z0-9+.-]*:/i.test(label) || label.includes("@")) return false;
  const host = /^https?:\/\/([^/?#:]+)/i.exec(href)?.[1] ?? "";
  return FILE_EXTENSION_TLDS.has(host.slice(host.lastIndexOf(".") + 1).toLowerCase());
}

/** Links into this realm become relative, so they keep working if the realm's host changes. */
function relativiseRealmUrl(url: string, realmUrl: string): string {
  const realm = realmUrl.replace(/\/+$/, "");
  if (realm === "") return url;
  if (url.startsWith(`${realm}/#`)) return url.slice(realm.length + 1);
  if (url.startsWith(`${realm}${UPLOAD_PATH}`)) return url.slice(realm.length);
  return url;
}

interface Preview {
  readonly href: string;
  /** The link's label when it differs from the URL; Zulip shows it as the preview's title. */
  readonly title: string;
  /** An uploaded image: previewed through its thumbnail. */
  readonly upload?: RenderUpload;
  /** Any other image: where the reader's browser loads it from (RenderState.imageSrc). */
  readonly src?: string;
}

/**
 * The path_id an upload link names (decoded, without query or fragment), or null if the link is not an upload or is not
 * decodable.
 */
export function uploadPathId(href: string): string | null {
  if (!href.startsWith(UPLOAD_PATH)) return null;
  try {
    const pathId = decodeURIComponent(pathOf(href.slice(UPLOAD_PATH.length)));
    return pathId === "" ? null : pathId;
  } catch {
    return null;
  }
}

/**
 * Zulip's preview markup. An uploaded image shows its thumbnail with the original's
 * dimensions and type (so clients size it before it loads); the link keeps the original.
 */
function previewHtml(preview: Preview): string {
  const title = preview.title === "" ? "" : ` title="${escapeAttr(preview.title)}"`;
  const href = escapeAttr(preview.href);
  const upload = preview.upload;
  if (upload) {
    const thumbnail = `/user_uploads/thumbnail/${pathOf(preview.href.slice(UPLOAD_PATH.length))}/${THUMBNAIL_FORMAT.name}`;
    const animated = upload.animated ? ' data-animated="true"' : "";
    return `<div class="message_inline_image"><a href="${href}"${title}><img${animated} data-original-content-type="${escapeAttr(upload.contentType)}" data-original-dimensions="${upload.width}x${upload.height}" src="${escapeAttr(thumbnail)}"></a></div>`;
  }
  return `<div class="message_inline_image"><a href="${href}"${title}><img src="${escapeAttr(preview.src ?? preview.href)}"></a></div>`;
}

function textToken(state: StateCore, content: string): Token {
  const token = new state.Token("text", "", 0);
  token.content = content;
  return token;
}

/** Index of the link_close matching the link_open at `open` (links never nest). */
function closingIndex(children: Token[], open: number): number {
  for (let i = open + 1; i < children.length; i++) {
    if (children[i]?.type === "link_close") return i;
  }
  return children.length;
}

function labelOf(tokens: readonly Token[]): string {
  return tokens
    .filter((t) => t.type === "text" || t.type === "text_special" || t.type === "code_inline")
    .map((t) => t.content)
    .join("");
}

/**
 * Rewrites one inline token's links in place and returns the previews they ask for.
 * `![alt](src)` becomes a link too: Zulip never puts a user's <img> in the text
 * itself, only in the preview below it.
 */
function processInlineLinks(state: StateCore, inline: Token, renderState: RenderState): Preview[] {
  const children = inline.children ?? [];
  const out: Token[] = [];
  const previews: Preview[] = [];
  for (let i = 0; i < children.length; i++) {
    const token = children[i];
    if (!token) continue;
    const isImageSyntax = token.type === "image";
    if (token.type !== "link_open" && !isImageSyntax) {
      out.push(token);
      continue;
    }
    const close = isImageSyntax ? i : closingIndex(children, i);
    const label = isImageSyntax ? (token.children ?? []) : children.slice(i + 1, close);
    const rawHref = String(token.attrGet(isImageSyntax ? "src" : "href") ?? "");
    i = close;
    const labelText = labelOf(label);
    if (rawHref === "" || isFileNameLink(token, labelText, rawHref)) {
      // A rejected destination or a file name: keep the label as plain text.
      out.push(...label);
      continue;
    }
    const href = relativiseRealmUrl(rawHref, renderState.context.realmUrl);
    const open = new state.Token("link_open", "a", 1);
    open.attrs = [["href", href]];
    open.markup = token.markup;
    open.info = token.info;
    const linkClose = new state.Token("link_close", "a", -1);
    linkClose.markup = token.markup;
    linkClose.info = token.info;
    const shownLabel = labelText.trim() === "" ? [textToken(state, state.md.normalizeLinkText(rawHref))] : label;
    out.push(open, ...shownLabel, linkClose);

    renderState.hasLink = true;
    const pathId = uploadPathId(href);
    if (href.startsWith(UPLOAD_PATH)) renderState.hasAttachment = true;
    if (pathId !== null) renderState.uploadPathIds.push(pathId);
    if (isImageSyntax || isImageUrl(href)) {
      const title = labelText.trim() === "" || labelText === rawHref ? "" : labelText;
      // Zulip previews an upload only when it knows the image (it exists, the sender may
      // see it, it was readable as an image): a thumbnail of anything else would be a 404.
      const upload = pathId === null ? undefined : renderState.context.findUpload?.(pathId);
      // An external image is shown only through the server's proxy when it has one.
      const src = href.startsWith(UPLOAD_PATH) ? null : renderState.imageSrc(href);
      if (upload || src !== null) {
        renderState.hasImage = true;
        previews.push(upload ? { href, title, upload } : { href, title, src: src ?? href });
      }
    }
  }
  inline.children = out;
  return previews;
}

/** A paragraph holding nothing but one bare image URL is replaced by its preview, as in Zulip. */
function isBareLinkOnly(inline: Token): boolean {
  const [open, text, close, ...rest] = inline.children ?? [];
  return (
    rest.length === 0 &&
    open?.type === "link_open" &&
    open.markup === "linkify" &&
    text?.type === "text" &&
    close?.type === "link_close"
  );
}

/** Core rule (after linkify): link normalisation, facts and image previews. */
export function processLinks(state: StateCore): void {
  const renderState = renderStateOf(state.env);
  const tokens = state.tokens;
  const out: Token[] = [];
  let quoteDepth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (!token) continue;
    out.push(token);
    if (token.type === "blockquote_open") quoteDepth++;
    else if (token.type === "blockquote_close") quoteDepth--;
    if (token.type !== "inline") continue;

    const requested = processInlineLinks(state, token, renderState);
    const open = tokens[i - 1];
    const close = tokens[i + 1];
    // Zulip previews only under paragraphs, and never inside quotes.
    if (quoteDepth > 0 || open?.type !== "paragraph_open" || close?.type !== "paragraph_close") continue;
    const previews = requested.filter((p) => {
      if (renderState.previewedUrls.has(p.href)) return false;
      renderState.previewedUrls.add(p.href);
      return true;
    });
    if (previews.length === 0) continue;
    if (isBareLinkOnly(token) && !open.hidden) {
      open.hidden = true;
      close.hidden = true;
      token.children = [];
    }
    const next = tokens[i + 2];
    // Keep block output on separate lines, but stay glued inside a tight list item.
    const newline = next !== undefined && next.nesting !== -1 && next.type !== BLOCK_HTML ? "\n" : "";
    out.push(close, blockHtmlToken(state.Token, previews.map(previewHtml).join("") + newline));
    i++;
  }
  state.tokens = out;
}
