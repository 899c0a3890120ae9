/**
 * @module alert-words/matcher
 * A realm's alert words as one Aho-Corasick automaton (Zulip's get_alert_word_automaton),
 * so that a send reads its text once whatever the number of users and words. The
 * matching rules are Zulip's AlertWordNotificationProcessor: the lower-cased source with
 * code fences left out (its preprocessor runs after the fenced-code one, which replaces
 * them), a match counting where the character before it is one of a few punctuation
 * marks or whitespace and so is the one after; links and inline code are not excluded.
 */

/** Zulip's allowed_before_punctuation. */
const BEFORE = new Set([" ", "\n", "(", '"', ".", ",", "'", ";", "[", "*", "`", ">"]);
/** Zulip's allowed_after_punctuation (its two-character entry '",' can never equal one character). */
const AFTER = new Set([" ", "\n", ")", "?", ":", ".", ",", "'", ";", "]", "!", "*", "`"]);

interface Node {
  readonly next: Map<string, Node>;
  fail: Node | null;
  /** The nearest node along the failure links (itself excluded) that ends a word. */
  outputLink: Node | null;
  /** The word ending here and its users, if any. */
  word: string | null;
  users: readonly number[];
}

function newNode(): Node {
  return { next: new Map(), fail: null, outputLink: null, word: null, users: [] };
}

export class AlertWordMatcher {
  readonly #root = newNode();

  /** `words`: each lower-cased word and the users who set it. */
  constructor(words: ReadonlyMap<string, readonly number[]>) {
    for (const [word, users] of words) {
      let node = this.#root;
      for (const ch of word) {
        let child = node.next.get(ch);
        if (!child) node.next.set(ch, (child = newNode()));
        node = child;
      }
      node.word = word;
      node.users = users;
    }
    this.#link();
  }

  #link(): void {
    const queue: Node[] = [];
    for (const child of this.#root.next.values()) {
      child.fail = this.#root;
      queue.push(child);
    }
    for (let i = 0; i < queue.length; i++) {
      const node = queue[i]!;
      for (const [ch, child] of node.next) {
        let f = node.fail;
        while (f !== null && !f.next.has(ch)) f = f.fail;
        const target = f === null ? this.#root : f.next.get(ch)!;
        child.fail = target === child ? this.#root : target;
        child.outputLink = child.fail.word !== null ? child.fail : child.fail.outputLink;
        queue.push(child);
      }
    }
  }

  /** The users one of whose words the message content holds, by Zulip's rules. */
  usersAlerted(content: string): Set<number> {
    const out = new Set<number>();
    const text = withoutCodeFences(content).toLowerCase();
    // Code units: the boundary characters are all ASCII, so any word's start and end land on them alike.
    const units = [...text];
    let offset = 0;
    const starts: number[] = [];
    for (const u of units) {
      starts.push(offset);
      offset += u.length;
    }
    let node = this.#root;
    for (let i = 0; i < units.length; i++) {
      const ch = units[i]!;
      while (node !== this.#root && !node.next.has(ch)) node = node.fail!;
      node = node.next.get(ch) ?? this.#root;
      for (let hit: Node | null = node.word !== null ? node : node.outputLink; hit !== null; hit = hit.outputLink) {
        const length = [...hit.word!].length;
        if (validStart(units, i + 1 - length) && validEnd(units, i + 1)) for (const u of hit.users) out.add(u);
      }
    }
    return out;
  }
}

/**
 * Zulip's check_valid_start_position receives the index of the character before the
 * word and accepts any index up to 0, so a word at the second character matches
 * whatever precedes it; kept so that the same messages are flagged.
 */
function validStart(units: readonly string[], start: number): boolean {
  const before = start - 1;
  return before <= 0 || BEFORE.has(units[before]!);
}

function validEnd(units: readonly string[], end: number): boolean {
  return end >= units.length || AFTER.has(units[end]!);
}

/** Zulip's FENCE_RE opening: optional indentation, three or more backticks or tildes, a language. */
const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+\-./#]*)\}?)?[ ]*.*$/;

/**
 * The content without the bodies of fenced code blocks (quote and spoiler fences keep
 * theirs: Zulip's fenced-code preprocessor turns those into quoted text, the rest into
 * placeholders). An unclosed fence runs to the end, as in Zulip.
 */
export function withoutCodeFences(content: string): string {
  if (!content.includes("```") && !content.includes("~~~")) return content;
  const out: string[] = [];
  let fence: string | null = null;
  // Open quote and spoiler fences, innermost last: a bare fence line closes the innermost.
  const containers: string[] = [];
  for (const line of content.split("\n")) {
    if (fence !== null) {
      if (closes(line, fence)) fence = null;
      continue;
    }
    const top = containers.at(-1);
    if (top !== undefined && closes(line, top)) {
      containers.pop();
      out.push(line);
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (open) {
      const lang = (open[3] ?? "").toLowerCase();
      if (lang === "quote" || lang === "spoiler") {
        containers.push(open[2]!);
        out.push(line);
      } else fence = open[2]!;
      continue;
    }
    out.push(line);
  }
  return out.join("\n");
}

/** Whether the line is a bare fence closing `fence` (same character, at least as long). */
function closes(line: string, fence: string): boolean {
  const close = line.trim();
  return close.length >= fence.length && close === fence[0]!.repeat(close.length);
}
