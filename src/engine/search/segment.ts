/**
 * @module engine/search/segment
 *
 * Unicode word segmentation (UAX #29 word boundaries, as implemented by
 * Intl.Segmenter) with a fast path for ASCII. Intl.Segmenter allocates an
 * object per segment and costs roughly 0.1 µs per character, which is most
 * of the indexing cost of a message; ASCII text, the bulk of most chat,
 * follows a handful of rules that a plain loop applies in a fraction of
 * that time. The fast path must agree exactly with Intl.Segmenter on ASCII
 * input; a property test holds it to that.
 */

/** Receives the half-open UTF-16 range `[start, end)` of one word-like segment. */
export type WordVisitor = (start: number, end: number) => void;

// One segmenter for the process: constructing one costs far more than
// segmenting a typical message. ICU's word-boundary rules are not tailored
// per locale for the scripts that matter here, so the host default is fine.
const segmenter = new Intl.Segmenter(undefined, { granularity: "word" });

/** Word-like segments of `text.slice(start, end)` according to Intl.Segmenter. */
export function forEachWordIntl(text: string, start: number, end: number, visit: WordVisitor): void {
  const slice = start === 0 && end === text.length ? text : text.slice(start, end);
  for (const { segment, index, isWordLike } of segmenter.segment(slice)) {
    if (isWordLike === true) visit(start + index, start + index + segment.length);
  }
}

const TAB = 0x09;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const APOSTROPHE = 0x27;
const COMMA = 0x2c;
const FULL_STOP = 0x2e;
const COLON = 0x3a;
const SEMICOLON = 0x3b;
const UNDERSCORE = 0x5f;

function isLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

// Letters, digits and "_" (ExtendNumLet) never break from one another.
function isWordChar(c: number): boolean {
  return isLetter(c) || isDigit(c) || c === UNDERSCORE;
}

/**
 * Word-like segments of a pure-ASCII stretch, by the UAX #29 rules that can
 * apply to ASCII: runs of letters, digits and "_" stay together (WB5, WB8-10,
 * WB13a/b); a single "." "'" or ":" joins two letters (WB6/7); a single "."
 * "'" "," or ";" joins two digits (WB11/12); everything else breaks.
 */
function forEachWordAscii(text: string, start: number, end: number, visit: WordVisitor): void {
  let i = start;
  while (i < end) {
    if (!isWordChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const wordStart = i;
    let hasLetterOrDigit = false;
    for (;;) {
      for (; i < end; i++) {
        const c = text.charCodeAt(i);
        if (c === UNDERSCORE) continue;
        if (!isLetter(c) && !isDigit(c)) break;
        hasLetterOrDigit = true;
      }
      if (i + 1 >= end) break;
      const mid = text.charCodeAt(i);
      const before = text.charCodeAt(i - 1);
      const after = text.charCodeAt(i + 1);
      const joinsLetters =
        isLetter(before) && isLetter(after) && (mid === FULL_STOP || mid === APOSTROPHE || mid === COLON);
      const joinsDigits =
        isDigit(before) &&
        isDigit(after) &&
        (mid === FULL_STOP || mid === APOSTROPHE || mid === COMMA || mid === SEMICOLON);
      if (!joinsLetters && !joinsDigits) break;
      i++;
    }
    // ICU marks a segment word-like once a joining rule has applied, so a
    // lone "_" is not word-like but "__" is (they yield no terms anyway).
    if (hasLetterOrDigit || i - wordStart > 1) visit(wordStart, i);
  }
}

function isAsciiSpace(c: number): boolean {
  return c === SPACE || (c >= TAB && c <= CARRIAGE_RETURN);
}

/**
 * Calls `visit` for every word-like segment of `text`, in order. ASCII
 * whitespace always separates words, so the text is cut at it into
 * stretches that are either pure ASCII (fast path) or contain other
 * characters (Intl.Segmenter, given whole stretches so that dictionary
 * segmentation of CJK text sees full runs).
 */
export function forEachWord(text: string, visit: WordVisitor): void {
  const length = text.length;
  let runStart = 0;
  let runIsAscii = true;
  let i = 0;
  while (i < length) {
    // Find the next whitespace-free chunk and whether it is all ASCII.
    while (i < length && isAsciiSpace(text.charCodeAt(i))) i++;
    if (i === length) break;
    const chunkStart = i;
    let chunkIsAscii = true;
    for (; i < length; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7f) chunkIsAscii = false;
      else if (isAsciiSpace(c)) break;
    }
    if (chunkIsAscii !== runIsAscii) {
      flush(text, runStart, chunkStart, runIsAscii, visit);
      runStart = chunkStart;
      runIsAscii = chunkIsAscii;
    }
  }
  flush(text, runStart, length, runIsAscii, visit);
}

function flush(text: string, start: number, end: number, ascii: boolean, visit: WordVisitor): void {
  if (start >= end) return;
  if (ascii) forEachWordAscii(text, start, end, visit);
  else forEachWordIntl(text, start, end, visit);
}
