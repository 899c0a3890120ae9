/** @module index/entities/users Users by ID, realm, email, API key and name. */
import type { User } from "../../types.js";
import { emailKey, nameKey } from "../keys.js";
import type { EntityIndex } from "./entity-index.js";

const EMPTY_IDS: ReadonlySet<number> = new Set();

export class UserIndex implements EntityIndex<User> {
  readonly byId = new Map<number, User>();
  /** realmId -> every user ID of the realm (active or not). */
  readonly byRealm = new Map<number, Set<number>>();
  /** realmId -> the realm's bot IDs (a user never stops being a bot; users are never removed). */
  readonly botsByRealm = new Map<number, Set<number>>();
  /** `${realmId}:${lowercased email}` -> userId (API email and delivery email). */
  readonly byEmail = new Map<string, number>();
  readonly byApiKey = new Map<string, number>();
  /** `${realmId}:${lowercased full name}` -> userIds (names are not unique). */
  readonly byName = new Map<string, number[]>();
  /** Told of every add with the version it replaces: derived caches (state.ts) drop what it changes. */
  readonly #onChange: (user: User, previous: User | undefined) => void;

  constructor(onChange: (user: User, previous: User | undefined) => void) {
    this.#onChange = onChange;
  }

  add(user: User): void {
    const previous = this.byId.get(user.id);
    this.#onChange(user, previous);
    if (previous) {
      const key = nameKey(previous.realmId, previous.fullName);
      const named = this.byName.get(key);
      if (named) {
        const rest = named.filter((id) => id !== previous.id);
        if (rest.length > 0) this.byName.set(key, rest);
        else this.byName.delete(key);
      }
      this.byEmail.delete(emailKey(previous.realmId, previous.email));
      this.byEmail.delete(emailKey(previous.realmId, previous.deliveryEmail));
      this.byApiKey.delete(previous.apiKey);
    }
    this.byId.set(user.id, user);
    let ofRealm = this.byRealm.get(user.realmId);
    if (!ofRealm) this.byRealm.set(user.realmId, (ofRealm = new Set()));
    ofRealm.add(user.id);
    if (user.isBot) {
      let bots = this.botsByRealm.get(user.realmId);
      if (!bots) this.botsByRealm.set(user.realmId, (bots = new Set()));
      bots.add(user.id);
    }
    this.byEmail.set(emailKey(user.realmId, user.deliveryEmail), user.id);
    this.byEmail.set(emailKey(user.realmId, user.email), user.id);
    this.byApiKey.set(user.apiKey, user.id);
    const key = nameKey(user.realmId, user.fullName);
    const named = this.byName.get(key) ?? [];
    if (!named.includes(user.id)) this.byName.set(key, [...named, user.id]);
  }

  /** Every user ID of the realm (active or not); live, do not mutate. */
  ofRealm(realmId: number): ReadonlySet<number> {
    return this.byRealm.get(realmId) ?? EMPTY_IDS;
  }

  /** The realm's bot IDs (active or not); live, do not mutate. */
  botsOf(realmId: number): ReadonlySet<number> {
    return this.botsByRealm.get(realmId) ?? EMPTY_IDS;
  }

  clear(): void {
    this.byId.clear();
    this.byRealm.clear();
    this.botsByRealm.clear();
    this.byEmail.clear();
    this.byApiKey.clear();
    this.byName.clear();
  }
}
