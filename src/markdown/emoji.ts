/**
 * @module markdown/emoji
 * `:name:` emoji codes. Names and code points follow Zulip's own emoji naming
 * (not Slack's or GitHub's), so e.g. `:smile:` is U+1F642 as in Zulip. The table
 * is a curated subset of common names; anything else stays literal text, which
 * is also what Zulip does for names it does not know.
 */
import type { StateInline } from "markdown-it";
import { escapeAttr, escapeText } from "./escape.js";
import { pushInlineHtml } from "./raw-html.js";

/** Zulip emoji name → hex code point (as used in the `emoji-<codepoint>` CSS class). */
const EMOJI_CODEPOINTS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    // Faces
    grinning: "1f600",
    happy: "1f600",
    smiley: "1f603",
    big_smile: "1f604",
    laughing: "1f606",
    lol: "1f606",
    sweat_smile: "1f605",
    joy: "1f602",
    rolling_on_the_floor_laughing: "1f923",
    rofl: "1f923",
    smile: "1f642",
    slight_smile: "1f642",
    blush: "1f60a",
    innocent: "1f607",
    upside_down: "1f643",
    wink: "1f609",
    heart_eyes: "1f60d",
    yum: "1f60b",
    stuck_out_tongue: "1f61d",
    hug: "1f917",
    nerd: "1f913",
    sunglasses: "1f60e",
    smirk: "1f60f",
    unamused: "1f612",
    disappointed: "1f61e",
    pensive: "1f614",
    worried: "1f61f",
    confused: "1f615",
    frown: "1f641",
    sad: "2639",
    angry: "1f620",
    rage: "1f621",
    neutral: "1f610",
    expressionless: "1f611",
    open_mouth: "1f62e",
    astonished: "1f632",
    flushed: "1f633",
    scream: "1f631",
    cry: "1f622",
    sob: "1f62d",
    sweat: "1f613",
    sleepy: "1f62a",
    sleeping: "1f634",
    rolling_eyes: "1f644",
    thinking: "1f914",
    grimacing: "1f62c",
    poop: "1f4a9",
    ghost: "1f47b",
    skull: "1f480",
    alien: "1f47d",
    robot: "1f916",
    // Hands and people
    clap: "1f44f",
    pray: "1f64f",
    handshake: "1f91d",
    "+1": "1f44d",
    thumbs_up: "1f44d",
    "-1": "1f44e",
    thumbs_down: "1f44e",
    fist_bump: "1f44a",
    fingers_crossed: "1f91e",
    ok: "1f44c",
    point_up: "1f446",
    point_down: "1f447",
    point_left: "1f448",
    point_right: "1f449",
    wave: "1f44b",
    muscle: "1f4aa",
    raised_hands: "1f64c",
    eyes: "1f440",
    shrug: "1f937",
    face_palm: "1f926",
    selfie: "1f933",
    // Animals and nature
    cat: "1f408",
    dog: "1f415",
    rabbit: "1f407",
    octopus: "1f419",
    turtle: "1f422",
    penguin: "1f427",
    bug: "1f41b",
    bee: "1f41d",
    unicorn: "1f984",
    star: "2b50",
    sparkles: "2728",
    fire: "1f525",
    rainbow: "1f308",
    comet: "2604",
    holiday_tree: "1f384",
    // Food
    lemon: "1f34b",
    avocado: "1f951",
    kiwi: "1f95d",
    pizza: "1f355",
    cake: "1f370",
    birthday: "1f382",
    coffee: "2615",
    tea: "1f375",
    beer: "1f37a",
    // Things and symbols
    tada: "1f389",
    airplane: "2708",
    rocket: "1f680",
    anchor: "2693",
    gear: "2699",
    gold: "1f947",
    trophy: "1f3c6",
    computer: "1f4bb",
    link: "1f517",
    memo: "1f4dd",
    heart: "2764",
    broken_heart: "1f494",
    "100": "1f4af",
    check: "2705",
    cross_mark: "274c",
    x: "274e",
    warning: "26a0",
    question: "2753",
    exclamation: "2757",
    up: "2b06",
    down: "2b07",
    left: "2b05",
    right: "27a1",
  }),
);

const KNOWN_CODEPOINTS: ReadonlySet<string> = new Set(EMOJI_CODEPOINTS.values());

/** Whether the table has a name for this code point (Zulip's codepoint_to_name). */
export function isEmojiCodepoint(code: string): boolean {
  return KNOWN_CODEPOINTS.has(code);
}

/** The code point for a Zulip emoji name, if this table knows it. */
export function emojiCodepoint(name: string): string | undefined {
  return EMOJI_CODEPOINTS.get(name);
}

/** Zulip's emoji span: the code stays as text so copy/paste round-trips. */
export function emojiHtml(name: string, codepoint: string): string {
  const label = escapeAttr(name.replaceAll("_", " "));
  return `<span aria-label="${label}" class="emoji emoji-${escapeAttr(codepoint)}" role="img" title="${label}">:${escapeText(name)}:</span>`;
}

/** Zulip's EMOJI_REGEX, bounded so each attempt is O(1). */
const EMOJI_RE = /:([\w\-+]{1,100}):/y;

/** markdown-it inline rule for `:name:`. */
export function emojiRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false;
  EMOJI_RE.lastIndex = state.pos;
  const match = EMOJI_RE.exec(state.src);
  if (!match || state.pos + match[0].length > state.posMax) return false;
  const name = match[1] ?? "";
  const codepoint = emojiCodepoint(name);
  if (codepoint === undefined) return false;
  if (!silent) pushInlineHtml(state, emojiHtml(name, codepoint));
  state.pos += match[0].length;
  return true;
}
