/**
 * @module markdown/html-diff
 * `content_html_diff` of GET /messages/{id}/history: the new rendering with the words
 * that changed highlighted, in the shape Zulip's zerver/lib/html_diff.py gives (lxml's
 * htmldiff with `<ins>`/`<del>` turned into spans): a `<div>` around the new rendering,
 * inserted words in `<span class="highlight_text_inserted">`, removed ones after them in
 * `<span class="highlight_text_deleted">`. Words are compared, markup rides along: a
 * change of markup alone (a paragraph break becoming a line break) is not highlighted and
 * the new document's markup is kept. A link's target counts as part of its words, an
 * image is a word of its own. Spans only ever hold text and empty elements, and removed
 * markup is kept only where it is balanced, so the result is always well-formed.
 * The word diff is jsdiff's (Myers); documents too different to diff within DIFF_BUDGET
 * show as all new words inserted and all old ones removed.
 */
import { diffArrays } from "diff";

const INSERTED = "highlight_text_inserted";
const DELETED = "highlight_text_deleted";
/**
 * The diff costs O((N+M)·D) for N and M words and D changed ones: the edit distance it
 * looks for is bounded so that N+M times it stays under this (about 5 ms of CPU).
 */
const DIFF_BUDGET = 200_000;
/** Elements with no content, which may stand inside a highlight span. */
const EMPTY_INLINE = /^<(br|img|wbr)\b/i;

interface Token {
  /** Markup and whitespace between the previous word and this one. */
  readonly pre: readonly string[];
  readonly word: string;
  /** What the diff compares: the word and the targets of the links around it. */
  readonly key: string;
  /** End tags and whitespace right after the word. */
  readonly post: string[];
}

interface Tokenized {
  readonly tokens: Token[];
  /** Markup after the last word. */
  readonly trailer: string[];
}

function tagName(tag: string): string {
  return /^<\/?([a-zA-Z][a-zA-Z0-9-]*)/.exec(tag)?.[1]?.toLowerCase() ?? "";
}

function tokenize(html: string): Tokenized {
  const tokens: Token[] = [];
  let pending: string[] = [];
  const links: string[] = [];
  let preDepth = 0;
  const last = (): Token | undefined => (pending.length === 0 ? tokens[tokens.length - 1] : undefined);
  const addWord = (word: string, key: string) => {
    tokens.push({ pre: pending, word, key, post: [] });
    pending = [];
  };
  for (const [piece] of html.matchAll(/<[^>]*>?|[^<]+/g)) {
    if (piece.startsWith("<")) {
      const name = tagName(piece);
      if (name === "img") addWord(piece, piece);
      else if (piece.startsWith("</")) {
        if (name === "a") links.pop();
        if (name === "pre") preDepth = Math.max(0, preDepth - 1);
        (last()?.post ?? pending).push(piece);
      } else {
        if (name === "a") links.push(/\bhref="([^"]*)"/.exec(piece)?.[1] ?? "");
        if (name === "pre") preDepth += 1;
        pending.push(piece);
      }
      continue;
    }
    for (const [part] of piece.matchAll(/\s+|\S+/g)) {
      if (/^\s/.test(part)) (last()?.post ?? pending).push(preDepth > 0 ? part : " ");
      else addWord(part, links.length === 0 ? part : `${part}\u0000${links.join("\u0000")}`);
    }
  }
  return { tokens, trailer: pending };
}

const isStructural = (item: string): boolean => item.startsWith("<") && !EMPTY_INLINE.test(item);

/**
 * The indices of the structural tags of `items` that open and close within them; a
 * removed run keeps only those (the rest belonged to the old document's structure).
 */
function balancedTags(items: readonly string[]): Set<number> {
  const kept = new Set<number>();
  const open: { name: string; index: number }[] = [];
  items.forEach((item, index) => {
    if (!isStructural(item) || item.startsWith("<!")) return;
    const name = tagName(item);
    if (!item.startsWith("</")) {
      open.push({ name, index });
      return;
    }
    const at = open.map((o) => o.name).lastIndexOf(name);
    if (at < 0) return;
    kept.add(open[at]!.index).add(index);
    open.length = at;
  });
  return kept;
}

/**
 * A run of inserted or removed words: text in spans, structure between them. `structured`
 * says whether any markup was kept.
 */
function highlightRun(
  tokens: readonly Token[],
  klass: string,
  removed: boolean,
): { html: string; structured: boolean } {
  const items = tokens.flatMap((t) => [...t.pre, t.word, ...t.post]);
  const kept = removed ? balancedTags(items) : null;
  let structured = false;
  let out = "";
  let inline: string[] = [];
  const flush = () => {
    const text = inline.join("");
    inline = [];
    const core = text.trim();
    if (core === "") {
      out += text;
      return;
    }
    const lead = text.slice(0, text.length - text.trimStart().length);
    const tail = text.slice(text.trimEnd().length);
    out += `${lead}<span class="${klass}">${core}</span>${tail}`;
  };
  items.forEach((item, index) => {
    if (!isStructural(item)) {
      inline.push(item);
      return;
    }
    flush();
    if (kept === null || kept.has(index)) {
      out += item;
      structured = true;
    }
  });
  flush();
  return { html: out, structured };
}

/** The end tags a token's markup finishes with (after its last whitespace). */
function trailingEndTags(token: Token | undefined): string {
  const post = token?.post ?? [];
  let start = post.length;
  while (start > 0 && post[start - 1]!.startsWith("</")) start--;
  return post.slice(start).join("");
}

const plain = (t: Token): string => [...t.pre, t.word, ...t.post].join("");

/** Zulip's content_html_diff of two renderings of a message. */
export function highlightHtmlDifferences(oldHtml: string, newHtml: string): string {
  const before = tokenize(oldHtml);
  const after = tokenize(newHtml);
  const changes = diffArrays(before.tokens, after.tokens, {
    comparator: (a, b) => a.key === b.key,
    maxEditLength: Math.max(10, Math.floor(DIFF_BUDGET / (before.tokens.length + after.tokens.length + 1))),
  }) ?? [
    { value: before.tokens, added: false, removed: true, count: before.tokens.length },
    { value: after.tokens, added: true, removed: false, count: after.tokens.length },
  ];
  let out = "";
  /** End tags that closed the last unchanged words: inline removed words go inside them. */
  let closing = "";
  const removal = (tokens: readonly Token[], following: Token[] | undefined) => {
    const run = highlightRun(tokens, DELETED, true);
    const tail = run.structured ? "" : closing;
    out = out.slice(0, out.length - tail.length);
    if (out !== "" && !/\s$/.test(out)) out += " ";
    // ...and before the unchanged words that follow, inside the element they open.
    const next = following?.[0];
    if (!run.structured && tail === "" && next !== undefined && next.pre.length > 0 && out === "") {
      out += next.pre.join("");
      following![0] = { ...next, pre: [] };
    }
    out += run.html + tail;
  };
  for (let i = 0; i < changes.length; i++) {
    const change = changes[i]!;
    const next = changes[i + 1];
    const closingBefore = closing;
    closing = "";
    if (change.removed && next?.added) {
      // Zulip shows the new words first, then the ones they replaced, one space between.
      out += highlightRun(next.value, INSERTED, false).html.trimEnd();
      closing = trailingEndTags(next.value[next.value.length - 1]);
      removal(change.value, changes[i + 2]?.value);
      closing = "";
      i++;
    } else if (change.added) out += highlightRun(change.value, INSERTED, false).html;
    else if (change.removed) {
      closing = closingBefore;
      removal(change.value, next?.value);
      closing = "";
    } else {
      const html = change.value.map(plain).join("");
      out += html;
      closing = /(?:<\/[^>]+>)+$/.exec(html)?.[0] ?? "";
    }
  }
  out += after.trailer.join("");
  return `<div>${out.trim()}</div>`;
}
