/**
 * @module linkifiers/re2-parse
 * A parser for the regular-expression syntax of RE2, the library Zulip compiles
 * linkifier patterns with: Perl-like syntax without backreferences or look-around,
 * `(?P<name>...)` and `(?<name>...)` groups, `(?flags)` and `(?flags:...)` for i, m, s
 * and U, `\pL`/`\p{Greek}` classes, POSIX `[[:alpha:]]` classes, `\Q...\E`, counted
 * repetition up to 1000. A pattern RE2 refuses is refused with RE2's own error text
 * ("missing ): (foo", "invalid perl operator: (?=", "invalid escape sequence: \1"),
 * which Zulip shows after "Bad regular expression: ". The tree it builds is matched by
 * linkifiers/re2-match (a Pike VM: linear time, as RE2, whatever the pattern).
 */

/** Zulip's limit is RE2's: counted repetitions of at most 1000, nested ones included. */
const MAX_REPEAT = 1000;

/** A set of code points: ranges and Unicode property tests, possibly negated. */
export interface CharClass {
  readonly ranges: readonly (readonly [number, number])[];
  /** Code point tests (Unicode groups, POSIX and Perl classes), each possibly negated. */
  readonly tests: readonly ((cp: number) => boolean)[];
  readonly negated: boolean;
  /** Case-insensitive: a code point matches when one of its case variants does. */
  readonly fold: boolean;
}

export type Re2Node =
  | { readonly t: "empty" }
  | { readonly t: "literal"; readonly cp: number; readonly fold: boolean }
  | { readonly t: "class"; readonly cls: CharClass }
  /** `.`: any code point, newline only with (?s). */
  | { readonly t: "any"; readonly newline: boolean }
  | { readonly t: "assert"; readonly kind: AssertKind }
  | { readonly t: "concat"; readonly items: readonly Re2Node[] }
  | { readonly t: "alt"; readonly items: readonly Re2Node[] }
  | { readonly t: "group"; readonly index: number | null; readonly name: string | null; readonly body: Re2Node }
  | {
      readonly t: "repeat";
      readonly min: number;
      /** -1: unbounded. */
      readonly max: number;
      readonly greedy: boolean;
      readonly body: Re2Node;
    };

/** Begin/end of line (with (?m)), of text, and ASCII word boundaries. */
export type AssertKind = "bol" | "eol" | "bot" | "eot" | "word" | "nonword";

/** RE2's parse error: its code's text, then ": " and the offending part when there is one. */
export class Re2SyntaxError extends Error {}

export interface ParsedRe2 {
  readonly root: Re2Node;
  /** Capturing groups (1-based; the whole match is group 0). */
  readonly groupCount: number;
  /** Each group name with the index of its leftmost group (RE2's NamedCapturingGroups). */
  readonly names: ReadonlyMap<string, number>;
}

interface Flags {
  readonly fold: boolean;
  /** (?m): ^ and $ match at line ends too. */
  readonly multiLine: boolean;
  /** (?s): . matches a newline. */
  readonly dotNewline: boolean;
  /** (?U): repetitions are non-greedy unless marked with ?. */
  readonly ungreedy: boolean;
}

const NO_FLAGS: Flags = { fold: false, multiLine: false, dotNewline: false, ungreedy: false };

const isWordAscii = (cp: number): boolean =>
  (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x5f;

function propertyTest(source: string): ((cp: number) => boolean) | null {
  let re: RegExp;
  try {
    re = new RegExp(`^${source}$`, "u");
  } catch {
    return null;
  }
  return (cp) => re.test(String.fromCodePoint(cp));
}

/** Perl classes (\d \s \w): ASCII only in RE2. */
const PERL_CLASSES: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  d: [[0x30, 0x39]],
  s: [
    [0x09, 0x0a],
    [0x0c, 0x0d],
    [0x20, 0x20],
  ],
  w: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
};

/** RE2's POSIX classes ([:alpha:] etc.), all ASCII. */
const POSIX_CLASSES: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: PERL_CLASSES["w"] ?? [],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

const inRanges = (ranges: readonly (readonly [number, number])[], cp: number): boolean =>
  ranges.some(([lo, hi]) => cp >= lo && cp <= hi);

/** RE2's Unicode group names: "Any", general categories and scripts. */
function unicodeGroupTest(name: string): ((cp: number) => boolean) | null {
  if (name === "Any") return () => true;
  if (!/^[A-Za-z_]+$/.test(name)) return null;
  // One- and two-letter names are general categories (L, Lu, Nd, Zs...); longer ones scripts (Greek, Han...).
  if (name.length <= 2) return /^[A-Z][a-z]?$/.test(name) ? propertyTest(`\\p{gc=${name}}`) : null;
  return propertyTest(`\\p{Script=${name}}`);
}

class Parser {
  #pos = 0;
  #groupCount = 0;
  readonly #names = new Map<string, number>();

  constructor(private readonly src: string) {}

  parse(): ParsedRe2 {
    const root = this.#alternation(NO_FLAGS, 0);
    if (this.#pos < this.src.length) {
      // Only a ')' stops the top level early: one that closes nothing.
      throw new Re2SyntaxError(`unexpected ): ${this.src}`);
    }
    return { root, groupCount: this.#groupCount, names: this.#names };
  }

  #fail(what: string, arg: string): never {
    throw new Re2SyntaxError(arg === "" ? what : `${what}: ${arg}`);
  }

  #peek(offset = 0): string {
    const cp = this.src.codePointAt(this.#pos + offset);
    return cp === undefined ? "" : String.fromCodePoint(cp);
  }

  #take(): number {
    const cp = this.src.codePointAt(this.#pos);
    if (cp === undefined) throw new Re2SyntaxError("unexpected error");
    this.#pos += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** Alternatives up to a ')' (left for the caller) or the end. */
  #alternation(initial: Flags, depth: number): Re2Node {
    const branches: Re2Node[] = [];
    let flags = initial;
    for (;;) {
      const result = this.#concatenation(flags, depth);
      branches.push(result.node);
      // Flags set in a branch, (?i) alone, hold for the rest of the group, later branches included.
      flags = result.flags;
      if (this.#peek() !== "|") break;
      this.#pos++;
    }
    return branches.length === 1 ? (branches[0] ?? { t: "empty" }) : { t: "alt", items: branches };
  }

  #concatenation(initial: Flags, depth: number): { node: Re2Node; flags: Flags } {
    let flags = initial;
    const items: Re2Node[] = [];
    // Where the previous repetition operator began, to refuse stacked ones as RE2 does (a**, a{2}{3}).
    let lastRepeatStart = -1;
    while (this.#pos < this.src.length) {
      const c = this.src[this.#pos];
      if (c === "|" || c === ")") break;
      const start = this.#pos;
      let repeatStart = -1;
      if (c === "*" || c === "+" || c === "?" || (c === "{" && this.#countedRepeat() !== null)) {
        repeatStart = start;
        this.#repetition(items, flags, lastRepeatStart);
      } else if (c === "(") {
        if (this.src[this.#pos + 1] === "?") {
          const group = this.#perlGroup(flags, depth);
          if (group.node !== null) items.push(group.node);
          else flags = group.flags;
        } else {
          this.#pos++;
          const index = ++this.#groupCount;
          items.push({ t: "group", index, name: null, body: this.#groupBody(flags, depth) });
        }
      } else if (c === "[") {
        items.push({ t: "class", cls: this.#bracketClass(flags) });
      } else if (c === "\\") {
        this.#escapeAtom(items, flags);
      } else if (c === "^") {
        this.#pos++;
        items.push({ t: "assert", kind: flags.multiLine ? "bol" : "bot" });
      } else if (c === "$") {
        this.#pos++;
        items.push({ t: "assert", kind: flags.multiLine ? "eol" : "eot" });
      } else if (c === ".") {
        this.#pos++;
        items.push({ t: "any", newline: flags.dotNewline });
      } else {
        items.push({ t: "literal", cp: this.#take(), fold: flags.fold });
      }
      lastRepeatStart = repeatStart;
    }
    const node: Re2Node = items.length === 0 ? { t: "empty" } : items.length === 1 ? items[0]! : { t: "concat", items };
    return { node, flags };
  }

  /** The body of a group whose '(' is consumed, and its ')'. Flags set inside end with it. */
  #groupBody(flags: Flags, depth: number): Re2Node {
    const body = this.#alternation(flags, depth + 1);
    if (this.#peek() !== ")") this.#fail("missing )", this.src);
    this.#pos++;
    return body;
  }

  /** `{n}`, `{n,}` or `{n,m}` at the cursor, or null when the brace is a literal (RE2's rule). */
  #countedRepeat(): { min: number; max: number; length: number } | null {
    const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(this.src.slice(this.#pos, this.#pos + 32));
    if (!m) return null;
    const parse = (digits: string): number | null =>
      // RE2 refuses leading zeros and numbers past 10^8 here, making the brace a literal.
      (digits.length > 1 && digits[0] === "0") || digits.length > 8 ? null : Number(digits);
    const min = parse(m[1] ?? "");
    if (min === null) return null;
    let max = min;
    if (m[2] === ",") {
      if ((m[3] ?? "") === "") max = -1;
      else {
        const parsed = parse(m[3] ?? "");
        if (parsed === null) return null;
        max = parsed;
      }
    }
    return { min, max, length: m[0].length };
  }

  #repetition(items: Re2Node[], flags: Flags, lastRepeatStart: number): void {
    const start = this.#pos;
    const c = this.src[start];
    let min: number;
    let max: number;
    if (c === "{") {
      const counted = this.#countedRepeat();
      if (counted === null) throw new Re2SyntaxError("unexpected error");
      ({ min, max } = counted);
      this.#pos += counted.length;
    } else {
      this.#pos++;
      [min, max] = c === "*" ? [0, -1] : c === "+" ? [1, -1] : [0, 1];
    }
    let greedy = !flags.ungreedy;
    if (this.#peek() === "?") {
      greedy = !greedy;
      this.#pos++;
    }
    const opText = this.src.slice(start, this.#pos);
    if (lastRepeatStart !== -1) this.#fail("bad repetition operator", this.src.slice(lastRepeatStart, this.#pos));
    if (c === "{" && ((max !== -1 && max < min) || min > MAX_REPEAT || max > MAX_REPEAT))
      this.#fail("invalid repetition size", opText);
    const body = items.pop();
    if (body === undefined) this.#fail("no argument for repetition operator", opText);
    const node: Re2Node = { t: "repeat", min, max, greedy, body };
    if (c === "{" && repeatProduct(node) > MAX_REPEAT) this.#fail("invalid repetition size", opText);
    items.push(node);
  }

  /** `(?` groups: named captures, flag changes, non-capturing groups; look-around is refused. */
  #perlGroup(flags: Flags, depth: number): { node: Re2Node | null; flags: Flags } {
    const start = this.#pos;
    const rest = this.src.slice(start);
    if (/^\(\?[=!]/.test(rest) || /^\(\?<[=!]/.test(rest))
      this.#fail("invalid perl operator", rest.slice(0, rest[2] === "<" ? 4 : 3));
    const named = /^\(\?P?</.exec(rest);
    if (named && rest.length > named[0].length) {
      const close = rest.indexOf(">", 2);
      if (close === -1) this.#fail("invalid named capture group", rest);
      const capture = rest.slice(0, close + 1);
      const name = rest.slice(named[0].length, close);
      if (!/^[\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}]+$/u.test(name)) this.#fail("invalid named capture group", capture);
      this.#pos += capture.length;
      const index = ++this.#groupCount;
      if (!this.#names.has(name)) this.#names.set(name, index);
      return { node: { t: "group", index, name, body: this.#groupBody(flags, depth) }, flags };
    }
    this.#pos += 2;
    const next = { ...flags };
    let negated = false;
    let sawFlag = false;
    for (;;) {
      const bad = (): never => this.#fail("invalid perl operator", this.src.slice(start, this.#pos));
      if (this.#pos >= this.src.length) bad();
      const c = String.fromCodePoint(this.#take());
      if (c === "i" || c === "m" || c === "s" || c === "U") {
        sawFlag = true;
        const key = ({ i: "fold", m: "multiLine", s: "dotNewline", U: "ungreedy" } as const)[c];
        next[key] = !negated;
      } else if (c === "-") {
        if (negated) bad();
        negated = true;
        sawFlag = false;
      } else if (c === ":" || c === ")") {
        if (negated && !sawFlag) bad();
        if (c === ")") return { node: null, flags: next };
        return { node: { t: "group", index: null, name: null, body: this.#groupBody(next, depth) }, flags };
      } else bad();
    }
  }

  #escapeAtom(items: Re2Node[], flags: Flags): void {
    const next = this.src[this.#pos + 1];
    if (next === "b" || next === "B") {
      this.#pos += 2;
      items.push({ t: "assert", kind: next === "b" ? "word" : "nonword" });
      return;
    }
    if (next === "A" || next === "z") {
      this.#pos += 2;
      items.push({ t: "assert", kind: next === "A" ? "bot" : "eot" });
      return;
    }
    if (next === "C") {
      this.#pos += 2;
      items.push({ t: "any", newline: true });
      return;
    }
    if (next === "Q") {
      this.#pos += 2;
      while (this.#pos < this.src.length) {
        if (this.src.startsWith("\\E", this.#pos)) {
          this.#pos += 2;
          break;
        }
        items.push({ t: "literal", cp: this.#take(), fold: flags.fold });
      }
      return;
    }
    const group = this.#classEscape();
    if (group !== null) {
      items.push({ t: "class", cls: { ranges: [], tests: [group], negated: false, fold: false } });
      return;
    }
    items.push({ t: "literal", cp: this.#escape(), fold: flags.fold });
  }

  /** `\d \D \s \S \w \W \pX \p{Name} \PX` at the cursor as a test, or null. */
  #classEscape(): ((cp: number) => boolean) | null {
    const c = this.src[this.#pos + 1] ?? "";
    const perl = "dswDSW".includes(c) ? PERL_CLASSES[c.toLowerCase()] : undefined;
    if (perl !== undefined) {
      this.#pos += 2;
      return c === c.toLowerCase() ? (cp) => inRanges(perl, cp) : (cp) => !inRanges(perl, cp);
    }
    if (c !== "p" && c !== "P") return null;
    const start = this.#pos;
    this.#pos += 2;
    if (this.#pos >= this.src.length) this.#fail("invalid character class range", this.src.slice(start));
    let name: string;
    if (this.src[this.#pos] === "{") {
      const close = this.src.indexOf("}", this.#pos);
      if (close === -1) this.#fail("invalid character class range", this.src.slice(start));
      name = this.src.slice(this.#pos + 1, close);
      this.#pos = close + 1;
    } else name = String.fromCodePoint(this.#take());
    let positive = c === "p";
    if (name.startsWith("^")) {
      positive = !positive;
      name = name.slice(1);
    }
    const test = unicodeGroupTest(name);
    if (test === null) this.#fail("invalid character class range", this.src.slice(start, this.#pos));
    return positive ? test : (cp) => !test(cp);
  }

  /** One escaped code point (RE2's ParseEscape); backreferences and unknown letters are refused. */
  #escape(): number {
    const begin = this.#pos;
    this.#pos++;
    if (this.#pos >= this.src.length) this.#fail("trailing \\", "");
    const c = this.#take();
    const bad = (): never => this.#fail("invalid escape sequence", this.src.slice(begin, this.#pos));
    const ch = String.fromCodePoint(c);
    if (c < 0x80 && !/[0-9A-Za-z]/.test(ch)) return c;
    if (/[1-7]/.test(ch) && !/[0-7]/.test(this.#peek())) bad();
    if (/[0-7]/.test(ch)) {
      let code = c - 0x30;
      for (let i = 0; i < 2 && /[0-7]/.test(this.#peek()); i++) code = code * 8 + (this.#take() - 0x30);
      return code;
    }
    if (ch === "x") {
      if (this.#pos >= this.src.length) bad();
      if (this.#peek() === "{") {
        this.#pos++;
        let digits = "";
        while (/[0-9A-Fa-f]/.test(this.#peek())) {
          digits += this.#peek();
          this.#pos++;
          if (Number.parseInt(digits, 16) > 0x10ffff) bad();
        }
        if (this.#pos >= this.src.length) bad();
        this.#take();
        if (this.src[this.#pos - 1] !== "}" || digits === "") bad();
        return Number.parseInt(digits, 16);
      }
      const hex = this.src.slice(this.#pos, this.#pos + 2);
      this.#pos = Math.min(this.src.length, this.#pos + 2);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) bad();
      return Number.parseInt(hex, 16);
    }
    const simple: Readonly<Record<string, number>> = { n: 10, r: 13, t: 9, a: 7, f: 12, v: 11 };
    const value = simple[ch];
    if (value === undefined) bad();
    return value ?? 0;
  }

  /** `[...]` (the cursor on '['), RE2's ParseCharClass. */
  #bracketClass(flags: Flags): CharClass {
    const start = this.#pos;
    const missing = (): never => this.#fail("missing ]", this.src.slice(start));
    this.#pos++;
    let negated = false;
    if (this.#peek() === "^") {
      negated = true;
      this.#pos++;
    }
    const ranges: [number, number][] = [];
    const tests: ((cp: number) => boolean)[] = [];
    let first = true;
    while (this.#pos < this.src.length && (this.src[this.#pos] !== "]" || first)) {
      first = false;
      const posix = /^\[:(\^?)([a-z]*):\]/.exec(this.src.slice(this.#pos, this.#pos + 16));
      if (posix) {
        const cls = POSIX_CLASSES[posix[2] ?? ""];
        if (cls === undefined) this.#fail("invalid character class range", posix[0]);
        tests.push(posix[1] === "^" ? (cp) => !inRanges(cls, cp) : (cp) => inRanges(cls, cp));
        this.#pos += posix[0].length;
        continue;
      }
      if (this.src[this.#pos] === "\\") {
        const group = this.#classEscape();
        if (group !== null) {
          tests.push(group);
          continue;
        }
      }
      const rangeStart = this.#pos;
      const lo = this.#classChar(missing);
      let hi = lo;
      if (this.src[this.#pos] === "-" && this.#pos + 1 < this.src.length && this.src[this.#pos + 1] !== "]") {
        this.#pos++;
        hi = this.#classChar(missing);
        if (hi < lo) this.#fail("invalid character class range", this.src.slice(rangeStart, this.#pos));
      }
      ranges.push([lo, hi]);
    }
    if (this.#pos >= this.src.length) missing();
    this.#pos++;
    return { ranges, tests, negated, fold: flags.fold };
  }

  #classChar(missing: () => never): number {
    if (this.#pos >= this.src.length) missing();
    return this.src[this.#pos] === "\\" ? this.#escape() : this.#take();
  }
}

/** How many times the innermost body of nested counted repetitions is repeated (RE2 allows 1000). */
function repeatProduct(node: Re2Node): number {
  switch (node.t) {
    case "repeat": {
      const count = node.max === -1 ? node.min : node.max;
      return Math.max(1, count) * repeatProduct(node.body);
    }
    case "group":
      return repeatProduct(node.body);
    case "concat":
    case "alt":
      return Math.max(1, ...node.items.map(repeatProduct));
    default:
      return 1;
  }
}

/** Parses an RE2 pattern; throws Re2SyntaxError with RE2's message when RE2 would refuse it. */
export function parseRe2(pattern: string): ParsedRe2 {
  // A lone surrogate is what arrives for bytes that were not UTF-8.
  if (/[\uD800-\uDFFF]/u.test(pattern)) throw new Re2SyntaxError("invalid UTF-8");
  return new Parser(pattern).parse();
}

export { isWordAscii };
