/**
 * The realm's custom emoji as the client knows them (no DOM here: state.ts holds them).
 */
/** What a reaction or picker entry names: Zulip's reaction_type, emoji_code and emoji_name. */
export interface EmojiRef {
  readonly type: string;
  readonly code: string;
  readonly name: string;
}

export interface RealmEmoji {
  readonly id: string;
  readonly name: string;
  readonly source_url: string;
  readonly deactivated: boolean;
}

/** The realm's custom emoji by ID, from register's `realm_emoji` and its events. */
export class RealmEmojiSet {
  #byId = new Map<string, RealmEmoji>();

  constructor(initial: unknown) {
    this.replace(initial);
  }

  /** register's map, or a `realm_emoji` update event's (always the whole set). */
  replace(map: unknown): void {
    const next = new Map<string, RealmEmoji>();
    if (typeof map === "object" && map !== null)
      for (const [id, raw] of Object.entries(map as Record<string, unknown>)) {
        const e = raw as Partial<RealmEmoji>;
        if (typeof e.name === "string" && typeof e.source_url === "string")
          next.set(id, { id, name: e.name, source_url: e.source_url, deactivated: e.deactivated === true });
      }
    this.#byId = next;
  }

  byId(id: string): RealmEmoji | undefined {
    return this.#byId.get(id);
  }

  /** Active ones, by name. */
  active(): RealmEmoji[] {
    return [...this.#byId.values()].filter((e) => !e.deactivated).sort((a, b) => a.name.localeCompare(b.name));
  }
}
