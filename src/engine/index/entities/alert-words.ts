/**
 * @module index/entities/alert-words
 * Users' alert words (Zulip's AlertWord), and per realm the one matcher a send reads,
 * built at the first send after a change to that realm's words (Zulip's
 * get_alert_word_automaton, cached until a flush_realm_alert_words).
 */
import { AlertWordMatcher } from "../../alert-words/matcher.js";
import type { AlertWordsRecord } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class AlertWordsIndex implements EntityIndex<AlertWordsRecord> {
  /** user ID -> their record (only users with at least one word). */
  readonly byUser = new Map<number, AlertWordsRecord>();
  /** realm ID -> its matcher, null when no user of the realm has a word. */
  readonly #matchers = new Map<number, AlertWordMatcher | null>();

  add(record: AlertWordsRecord): void {
    this.remove(record);
    this.#matchers.delete(record.realmId);
    if (record.words.length > 0) this.byUser.set(record.userId, record);
  }

  remove(record: Pick<AlertWordsRecord, "userId">): void {
    const previous = this.byUser.get(record.userId);
    if (!previous) return;
    this.byUser.delete(record.userId);
    this.#matchers.delete(previous.realmId);
  }

  clear(): void {
    this.byUser.clear();
    this.#matchers.clear();
  }

  /** The realm's matcher (null when none of its users has a word). */
  matcher(realmId: number): AlertWordMatcher | null {
    let matcher = this.#matchers.get(realmId);
    if (matcher !== undefined) return matcher;
    const words = new Map<string, number[]>();
    for (const record of this.byUser.values()) {
      if (record.realmId !== realmId) continue;
      // Stored as typed and distinct case-insensitively: each user is listed once per lower-cased word.
      for (const word of record.words.map((w) => w.toLowerCase())) {
        const users = words.get(word);
        if (users) users.push(record.userId);
        else words.set(word, [record.userId]);
      }
    }
    matcher = words.size === 0 ? null : new AlertWordMatcher(words);
    this.#matchers.set(realmId, matcher);
    return matcher;
  }
}
