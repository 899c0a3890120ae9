/**
 * @module wire/playground
 * A code playground on the wire (Zulip's RealmPlaygroundDict).
 */
import type { Playground } from "../engine/index.js";

export function playgroundToWire(p: Playground): Record<string, unknown> {
  return { id: p.id, name: p.name, pygments_language: p.pygmentsLanguage, url_template: p.urlTemplate };
}
