/**
 * @module linkifiers/re2-match
 * Matching for parsed RE2 patterns (linkifiers/re2-parse): the tree is compiled to a
 * program for a Pike VM, which runs every alternative in step over the text, so a
 * search costs at most (text length x program size) steps whatever the pattern: a
 * linkifier cannot make a message render slowly by backtracking, as it cannot in
 * Zulip's RE2. Matches are leftmost-first with Perl's preferences (greedy or not,
 * earlier alternatives first), as RE2's.
 */
import {
  isWordAscii,
  Re2SyntaxError,
  type AssertKind,
  type CharClass,
  type ParsedRe2,
  type Re2Node,
} from "./re2-parse.js";

/**
 * Instructions a linkifier's pattern may compile to. RE2 refuses programs past its
 * memory budget ("pattern too large - compile failed"); this bound is parley's, lower,
 * since it also bounds the steps per character of every message the linkifier runs on.
 */
export const MAX_PROGRAM_SIZE = 5000;
/** Room for what the linkifier wrapper adds around a pattern that passed MAX_PROGRAM_SIZE. */
const WRAPPER_ALLOWANCE = 100;

type Inst =
  | { readonly op: "char"; readonly test: (cp: number) => boolean }
  | { readonly op: "split"; readonly x: number; readonly y: number }
  | { readonly op: "jmp"; readonly x: number }
  | { readonly op: "save"; readonly slot: number }
  | { readonly op: "assert"; readonly kind: AssertKind }
  | { readonly op: "match" };

/** A mutable instruction while compiling (jump targets are patched). */
type Draft = {
  op: Inst["op"];
  test?: (cp: number) => boolean;
  x?: number;
  y?: number;
  slot?: number;
  kind?: AssertKind;
};

function caseVariants(cp: number): number[] {
  const ch = String.fromCodePoint(cp);
  const out = [cp];
  for (const v of [ch.toLowerCase(), ch.toUpperCase()]) {
    const vcp = v.codePointAt(0);
    if (vcp !== undefined && [...v].length === 1 && !out.includes(vcp)) out.push(vcp);
  }
  return out;
}

function classTest(cls: CharClass): (cp: number) => boolean {
  const plain = (cp: number): boolean =>
    cls.ranges.some(([lo, hi]) => cp >= lo && cp <= hi) || cls.tests.some((test) => test(cp));
  const folded = cls.fold ? (cp: number) => caseVariants(cp).some(plain) : plain;
  return cls.negated ? (cp) => !folded(cp) : folded;
}

/**
 * A test every first character of a match passes, or null when the pattern may match
 * the empty string or start with nearly anything: searches skip positions it refuses.
 */
export function firstCharTest(node: Re2Node): ((cp: number) => boolean) | null {
  const first = firstOf(node);
  return first.nullable ? null : first.test;
}

interface First {
  /** null: any character may come first. */
  readonly test: ((cp: number) => boolean) | null;
  readonly nullable: boolean;
}

const union = (a: First["test"], b: First["test"]): First["test"] =>
  a === null || b === null ? null : (cp) => a(cp) || b(cp);

function firstOf(node: Re2Node): First {
  switch (node.t) {
    case "empty":
    case "assert":
      return { test: () => false, nullable: true };
    case "literal": {
      const variants = node.fold ? caseVariants(node.cp) : [node.cp];
      return { test: (cp) => variants.includes(cp), nullable: false };
    }
    case "class":
      return { test: classTest(node.cls), nullable: false };
    case "any":
      return { test: null, nullable: false };
    case "group":
      return firstOf(node.body);
    case "repeat": {
      const body = firstOf(node.body);
      return { test: body.test, nullable: body.nullable || node.min === 0 };
    }
    case "alt":
      return node.items
        .map(firstOf)
        .reduce((a, b) => ({ test: union(a.test, b.test), nullable: a.nullable || b.nullable }));
    case "concat": {
      let test: First["test"] = () => false;
      for (const item of node.items) {
        const first = firstOf(item);
        test = union(test, first.test);
        if (!first.nullable) return { test, nullable: false };
      }
      return { test, nullable: true };
    }
  }
}

class Compiler {
  readonly prog: Draft[] = [];

  #emit(inst: Draft): number {
    if (this.prog.length >= MAX_PROGRAM_SIZE + WRAPPER_ALLOWANCE)
      throw new Re2SyntaxError("pattern too large - compile failed");
    this.prog.push(inst);
    return this.prog.length - 1;
  }

  compile(node: Re2Node): void {
    switch (node.t) {
      case "empty":
        return;
      case "literal": {
        const variants = node.fold ? caseVariants(node.cp) : [node.cp];
        const cp = node.cp;
        this.#emit({ op: "char", test: variants.length === 1 ? (c) => c === cp : (c) => variants.includes(c) });
        return;
      }
      case "class":
        this.#emit({ op: "char", test: classTest(node.cls) });
        return;
      case "any":
        this.#emit({ op: "char", test: node.newline ? () => true : (c) => c !== 10 });
        return;
      case "assert":
        this.#emit({ op: "assert", kind: node.kind });
        return;
      case "concat":
        for (const item of node.items) this.compile(item);
        return;
      case "alt": {
        // split L1, next; L1: a; jmp end; next: split L2, ...; last alternative plain.
        const jumps: Draft[] = [];
        node.items.forEach((item, i) => {
          if (i === node.items.length - 1) {
            this.compile(item);
            return;
          }
          const split = this.prog[this.#emit({ op: "split" })]!;
          split.x = this.prog.length;
          this.compile(item);
          jumps.push(this.prog[this.#emit({ op: "jmp" })]!);
          split.y = this.prog.length;
        });
        for (const jump of jumps) jump.x = this.prog.length;
        return;
      }
      case "group":
        if (node.index === null) {
          this.compile(node.body);
          return;
        }
        this.#emit({ op: "save", slot: 2 * node.index });
        this.compile(node.body);
        this.#emit({ op: "save", slot: 2 * node.index + 1 });
        return;
      case "repeat":
        this.#repeat(node.body, node.min, node.max, node.greedy);
        return;
    }
  }

  #repeat(body: Re2Node, min: number, max: number, greedy: boolean): void {
    for (let i = 0; i < min; i++) this.compile(body);
    if (max === -1) {
      // L: split body, out; body; jmp L
      const loop = this.prog.length;
      const split = this.prog[this.#emit({ op: "split" })]!;
      this.compile(body);
      this.#emit({ op: "jmp", x: loop });
      const out = this.prog.length;
      split.x = greedy ? loop + 1 : out;
      split.y = greedy ? out : loop + 1;
      return;
    }
    // Each optional copy: split body, end.
    const splits: Draft[] = [];
    for (let i = min; i < max; i++) {
      const split = this.prog[this.#emit({ op: "split" })]!;
      splits.push(split);
      split.x = this.prog.length;
      this.compile(body);
    }
    const end = this.prog.length;
    for (const split of splits) {
      const into = split.x ?? end;
      split.x = greedy ? into : end;
      split.y = greedy ? end : into;
    }
  }
}

/** A successful search: each group's [start, end) in UTF-16 units, -1 where it did not take part. */
export interface Re2Match {
  readonly slots: readonly number[];
}

interface Thread {
  readonly pc: number;
  readonly slots: number[];
}

/** A compiled RE2 pattern. */
export class Re2Program {
  readonly #prog: readonly Inst[];
  readonly #slotCount: number;
  readonly names: ReadonlyMap<string, number>;
  readonly groupCount: number;
  /** Instructions in the program. */
  readonly size: number;

  constructor(parsed: ParsedRe2) {
    const compiler = new Compiler();
    compiler.prog.push({ op: "save", slot: 0 });
    compiler.compile(parsed.root);
    compiler.prog.push({ op: "save", slot: 1 }, { op: "match" });
    this.#prog = compiler.prog.map((d): Inst => {
      switch (d.op) {
        case "char":
          return { op: "char", test: d.test ?? (() => false) };
        case "split":
          return { op: "split", x: d.x ?? 0, y: d.y ?? 0 };
        case "jmp":
          return { op: "jmp", x: d.x ?? 0 };
        case "save":
          return { op: "save", slot: d.slot ?? 0 };
        case "assert":
          return { op: "assert", kind: d.kind ?? "bot" };
        case "match":
          return { op: "match" };
      }
    });
    this.size = this.#prog.length;
    this.groupCount = parsed.groupCount;
    this.#slotCount = 2 * (parsed.groupCount + 1);
    this.names = parsed.names;
  }

  /**
   * The leftmost-first match starting at or after `from` in `text`, or null. `^` and
   * `\A` hold only at 0. `canStart`, when given, says where a match may begin (no
   * attempt is started elsewhere, and stretches with none are skipped).
   */
  search(text: string, from = 0, canStart?: (pos: number) => boolean): Re2Match | null {
    const prog = this.#prog;
    const marks = new Int32Array(prog.length).fill(-1);
    let generation = 0;
    let current: Thread[] = [];
    let matched: number[] | null = null;

    const assertHolds = (kind: AssertKind, pos: number): boolean => {
      const before = pos > 0 ? text.charCodeAt(pos - 1) : -1;
      const after = pos < text.length ? text.charCodeAt(pos) : -1;
      switch (kind) {
        case "bot":
          return pos === 0;
        case "eot":
          return pos === text.length;
        case "bol":
          return pos === 0 || before === 10;
        case "eol":
          return pos === text.length || after === 10;
        case "word":
        case "nonword": {
          const boundary = (before !== -1 && isWordAscii(before)) !== (after !== -1 && isWordAscii(after));
          return kind === "word" ? boundary : !boundary;
        }
      }
    };

    // Follows jumps, splits, saves and assertions from pc at pos, adding the threads that
    // wait on a character (or match) to `list` in priority order; each pc once per step.
    const add = (list: Thread[], pc: number, slots: number[], pos: number, gen: number): void => {
      const stack: { pc: number; slots: number[] }[] = [{ pc, slots }];
      while (stack.length > 0) {
        const top = stack.pop()!;
        let at = top.pc;
        let own = top.slots;
        for (;;) {
          if (marks[at] === gen) break;
          marks[at] = gen;
          const inst = prog[at]!;
          if (inst.op === "jmp") at = inst.x;
          else if (inst.op === "split") {
            stack.push({ pc: inst.y, slots: own });
            at = inst.x;
          } else if (inst.op === "save") {
            own = own.slice();
            own[inst.slot] = pos;
            at++;
          } else if (inst.op === "assert") {
            if (!assertHolds(inst.kind, pos)) break;
            at++;
          } else {
            list.push({ pc: at, slots: own });
            break;
          }
        }
      }
    };

    const empty = new Array<number>(this.#slotCount).fill(-1);
    let currentGeneration = ++generation;
    for (let pos = from; ;) {
      // A new attempt starting here ranks below every attempt that started earlier.
      if (matched === null && (canStart === undefined || canStart(pos))) add(current, 0, empty, pos, currentGeneration);
      if (current.length === 0) {
        // No thread left: done once something matched; otherwise on to where an attempt may start.
        if (matched !== null || pos >= text.length) break;
        if (canStart !== undefined) {
          let next = pos + 1;
          while (next < text.length && !canStart(next)) next++;
          if (next >= text.length && !canStart(text.length)) break;
          pos = next;
          currentGeneration = ++generation;
          continue;
        }
      }
      const cp = pos < text.length ? (text.codePointAt(pos) ?? -1) : -1;
      const width = cp > 0xffff ? 2 : 1;
      const next: Thread[] = [];
      const nextGeneration = ++generation;
      for (const thread of current) {
        const inst = prog[thread.pc]!;
        if (inst.op === "match") {
          matched = thread.slots;
          // Lower-priority threads lose to this match.
          break;
        }
        if (inst.op === "char" && cp !== -1 && inst.test(cp))
          add(next, thread.pc + 1, thread.slots, pos + width, nextGeneration);
      }
      current = next;
      currentGeneration = nextGeneration;
      if (pos >= text.length) break;
      pos += width;
    }
    return matched === null ? null : { slots: matched };
  }
}
