/**
 * @module engine/search/stop-words
 *
 * The English stop words that full-text search neither indexes nor
 * requires. Zulip configures PostgreSQL with its own list (the usual
 * ~127 English function words plus every single Latin letter, so that
 * stray initials and the fragments of contractions such as "don't" never
 * narrow a search); this is a restatement of that list so that a query
 * matches here exactly when it would match on a Zulip server.
 *
 * Entries are compared after NFKC normalisation and lower-casing but
 * before stemming, which is the order PostgreSQL's dictionaries apply.
 */

const PRONOUNS = `
  i me my myself we our ours ourselves
  you your yours yourself yourselves
  he him his himself she her hers herself
  it its itself they them their theirs themselves
  what which who whom this that these those
`;

const AUXILIARY_VERBS = `
  am is are was were be been being
  have has had having do does did doing
  can will should
`;

const ARTICLES_AND_CONJUNCTIONS = `
  a an the and but if or because as until while
  nor than so
`;

const PREPOSITIONS = `
  of at by for with about against between into through during
  before after above below to from up down in out on off over under
`;

const ADVERBS_AND_QUANTIFIERS = `
  again further then once here there when where why how
  all any both each few more most other some such
  no not only own same too very just now
`;

// Contraction fragments: PostgreSQL's parser splits "don't" into "don" + "t".
const CONTRACTION_FRAGMENTS = `don s t`;

// Every remaining single letter, so initials and list markers never match.
const SINGLE_LETTERS = `b c d e f g h j k l m n o p q r u v w x y z`;

/** Zulip's English stop words, lower-case. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  [
    PRONOUNS,
    AUXILIARY_VERBS,
    ARTICLES_AND_CONJUNCTIONS,
    PREPOSITIONS,
    ADVERBS_AND_QUANTIFIERS,
    CONTRACTION_FRAGMENTS,
    SINGLE_LETTERS,
  ]
    .join(" ")
    .split(/\s+/)
    .filter((word) => word.length > 0),
);

/** Whether `word` (already normalised and lower-cased) is a stop word. */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}
