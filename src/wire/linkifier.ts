/**
 * @module wire/linkifier
 * A linkifier on the wire (Zulip's LinkifierDict) and topic links.
 */
import type { Linkifier, TopicLink } from "../engine/index.js";

export function linkifierToWire(l: Linkifier): Record<string, unknown> {
  return { pattern: l.pattern, url_template: l.urlTemplate, id: l.id };
}

export function topicLinksToWire(links: readonly TopicLink[]): Record<string, unknown>[] {
  return links.map((link) => ({ text: link.text, url: link.url }));
}
