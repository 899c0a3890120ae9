/**
 * @module tools/generate/content
 * Synthetic message text and topic names: Zipf-distributed vocabulary (a few words
 * everywhere, a long tail), occasional links, and the planted rare search word.
 */
import { Rng, Zipf } from "./prng.js";
import { FIRST_NAMES, LAST_NAMES, RARE_WORD, TOPIC_NOUNS, WORDS } from "./vocab.js";

const GLUE = ["the", "we", "is", "to", "for", "and", "it", "on", "this", "with"];
const FIRST = [...new Set(FIRST_NAMES)];
const LAST = [...new Set(LAST_NAMES)];

export class ContentMaker {
  readonly #words = new Zipf(WORDS.length, 1.0);
  readonly #rng: Rng;

  constructor(rng: Rng) {
    this.#rng = rng;
  }

  /** One message body; `mentions` are full names written as @**Name**. */
  message(mentions: readonly string[], rare: boolean): string {
    const rng = this.#rng;
    const parts: string[] = mentions.map((name) => `@**${name}**`);
    const sentences = 1 + rng.int(2);
    for (let s = 0; s < sentences; s++) {
      const length = 3 + rng.int(16);
      const words: string[] = [];
      for (let w = 0; w < length; w++) {
        if (rng.chance(0.25)) words.push(rng.pick(GLUE));
        words.push(WORDS[this.#words.sample(rng)]!);
      }
      if (rare && s === 0) words.splice(rng.int(words.length + 1), 0, RARE_WORD);
      const text = words.join(" ");
      parts.push(text.charAt(0).toUpperCase() + text.slice(1) + (rng.chance(0.2) ? "?" : "."));
    }
    if (rng.chance(0.05)) parts.push(`See https://example.com/tickets/${rng.int(100_000)} for context.`);
    return parts.join(" ");
  }
}

/** The k-th topic of a channel: unique per channel, two nouns (plus a number far down the tail). */
export function topicName(k: number): string {
  const n = TOPIC_NOUNS.length;
  const base = `${TOPIC_NOUNS[k % n]} ${TOPIC_NOUNS[Math.floor(k / n) % n]}`;
  return k < n * n ? base : `${base} ${Math.floor(k / (n * n))}`;
}

/** A unique full name for user index i. */
export function fullName(i: number): string {
  const f = FIRST.length;
  const l = LAST.length;
  const base = `${FIRST[i % f]} ${LAST[Math.floor(i / f) % l]}`;
  return i < f * l ? base : `${base} ${Math.floor(i / (f * l))}`;
}

export function channelName(j: number): string {
  return j === 0 ? "general" : `${TOPIC_NOUNS[j % TOPIC_NOUNS.length]}-${j}`;
}
