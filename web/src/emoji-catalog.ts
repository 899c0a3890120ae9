/**
 * Every emoji a person may pick: the realm's custom emoji, then Zulip's unicode emoji by
 * name from the server's emoji data file (register's `server_emoji_data_url`, Zulip's
 * emoji_api.json, code -> names), fetched the first time the picker or `:` autocomplete
 * needs it (about 100 KB, cached by the browser for good: its URL carries its hash).
 */
import type { EmojiRef, RealmEmojiSet } from "./realm-emoji.js";
import { bestMatches } from "./typeahead.js";

/** An emoji with every name it answers to (the first is the one inserted). */
export interface EmojiChoice extends EmojiRef {
  readonly names: readonly string[];
}

/** Shown first in the picker before anything is searched (Zulip's popular set). */
const POPULAR = ["1f44d", "1f389", "1f642", "2764", "1f6e0", "1f419"];

export class EmojiCatalog {
  #unicode: EmojiChoice[] | null = null;
  #loading: Promise<void> | null = null;

  constructor(
    private readonly dataUrl: string | null,
    private readonly realm: RealmEmojiSet,
  ) {}

  get loaded(): boolean {
    return this.#unicode !== null;
  }

  /** Fetches the unicode names once; without the file only custom emoji are offered. */
  load(): Promise<void> {
    this.#loading ??= this.#fetch().catch(() => {
      this.#loading = null;
    });
    return this.#loading;
  }

  async #fetch(): Promise<void> {
    if (this.dataUrl === null) return;
    // Same origin whatever host the server calls itself (the page's CSP allows no other).
    let path = this.dataUrl;
    try {
      path = new URL(this.dataUrl).pathname;
    } catch {
      // Already a path.
    }
    const reply = await fetch(path);
    if (!reply.ok) throw new Error(`emoji data: HTTP ${reply.status}`);
    const body: unknown = await reply.json();
    const map = (body as { code_to_names?: unknown }).code_to_names;
    const out: EmojiChoice[] = [];
    if (typeof map === "object" && map !== null)
      for (const [code, names] of Object.entries(map as Record<string, unknown>))
        if (Array.isArray(names) && typeof names[0] === "string")
          out.push({ type: "unicode_emoji", code, name: names[0], names: names as string[] });
    const popular = new Map(POPULAR.map((code, i) => [code, i]));
    out.sort((a, b) => (popular.get(a.code) ?? POPULAR.length) - (popular.get(b.code) ?? POPULAR.length));
    this.#unicode = out;
  }

  /** Custom emoji first (they shadow unicode names, as in Zulip), then unicode ones. */
  all(): EmojiChoice[] {
    const custom: EmojiChoice[] = this.realm
      .active()
      .map((e) => ({ type: "realm_emoji", code: e.id, name: e.name, names: [e.name] }));
    const taken = new Set(custom.map((e) => e.name));
    return [...custom, ...(this.#unicode ?? []).filter((e) => !taken.has(e.name))];
  }

  /** The best few for a search ("" gives the first few). */
  search(query: string): EmojiChoice[] {
    return bestMatches(this.all(), query, (e) => e.names);
  }

  /** Every match, for the picker's grid. */
  filter(query: string): EmojiChoice[] {
    const q = query.trim().toLowerCase().replaceAll(" ", "_");
    if (q === "") return this.all();
    return this.all().filter((e) => e.names.some((n) => n.includes(q)));
  }
}
