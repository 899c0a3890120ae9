/**
 * @module engine/warm-up
 * Runs the pure part of a send (the renderer, then search-term extraction) over a
 * corpus that touches every Markdown rule, once at server start, so that the first
 * messages after a restart are processed by optimised code. Freshly
 * loaded, markdown-it runs interpreted: a 10,000-character message with 2000
 * emphasis markers took ~60 ms on its first render, ~40 ms on its second and ~6 ms
 * once its functions were optimised (about the fifth), and the send holds the event
 * loop for that long. A server that has been up a while is warm from real traffic;
 * this gives a fresh one the same start. Nothing is stored and no state is read:
 * the renders use stub lookups and go nowhere.
 */
import type { RenderContext, RenderUser } from "./render.js";
import { indexTerms } from "./search/index.js";
import type { StoreState } from "./state.js";

const USERS: readonly RenderUser[] = [{ id: 1, fullName: "Warm Up", email: "warm-up@example.invalid" }];

/** Lookups that know one user, one channel and one group, so mention rules run their hit paths too. */
const CONTEXT: RenderContext = {
  findUsersByName: (name) => USERS.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()),
  findUserById: (id) => USERS.find((u) => u.id === id),
  findChannelByName: (name) => (name.toLowerCase() === "general" ? { id: 1, name: "general" } : undefined),
  findGroupByName: (name) => (name === "team" ? { id: 1, name: "team" } : undefined),
  findUpload: () => undefined,
  realmUrl: "https://warm-up.invalid",
  findRealmEmoji: () => undefined,
};

/** One of everything Zulip's Markdown has, plus long runs of inline markup (where rendering time goes). */
const CORPUS = [
  "# Heading\n\nSome **bold**, *italic*, _underscored_, ~~struck~~ and `code` text, a_snake_case_word, 2*3*4.",
  "A [link](https://example.com/a?b=c#d), a bare https://zulip.com/path and example.org, mail x@example.com.",
  "Hi @**Warm Up**, @_**Warm Up**, @**Nobody**, @*team*, @**all** and @**topic**; see #**general>topic** and #**general**.",
  "Emoji :smile: :thumbs_up: :no_such_emoji: 😀 👍🏽 🇫🇷 and an image https://example.com/pic.png",
  "- one\n- two\n  - nested *x*\n\n1. first\n2. second\n\n> quoted **text** @**Warm Up**\n> more",
  "```python\ndef f(x):\n    return x * 2\n```\n\n```quote\nquoted _fence_\n```\n\n```spoiler Header **h**\nhidden\n```",
  "| a | b |\n|---|---|\n| *1* | `2` |\n\n    indented code\n\n/me waves\n\nline one\nline two  \nline three",
  "Escapes \\*not em\\* &amp; <b>not html</b> [unclosed [brackets ![img](x) **unclosed _mixed* text__",
  "**b** _i_ *e* ~~s~~ `c` ".repeat(200),
].join("\n\n");

/** Outcome of a warm-up: how many rounds, in how many milliseconds. */
export interface WarmUpResult {
  readonly rounds: number;
  readonly ms: number;
}

/**
 * Renders the corpus with the store's renderer and extracts its search terms,
 * `rounds` times (V8 optimises a function after some thousands of calls; a round is
 * ~5,000 inline tokens). Throws nothing: a renderer that fails on the corpus only
 * leaves the process colder.
 */
export function warmUpSendPath(state: StoreState, rounds = 8): WarmUpResult {
  const start = performance.now();
  for (let i = 0; i < rounds; i++) {
    try {
      indexTerms("warm up", state.renderer(CORPUS, CONTEXT).html);
    } catch {
      break;
    }
  }
  return { rounds, ms: performance.now() - start };
}
