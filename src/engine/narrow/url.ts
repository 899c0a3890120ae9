/**
 * @module narrow/url
 * Zulip's `#narrow/...` URL fragments for channels, topics and messages. Zulip
 * encodes names in hash components its own way (percent-encoding with `.` in
 * place of `%`, and `.` itself as `.2E`), and clients parse links that way, so
 * links must be built exactly like this to open the right narrow. Both the renderer
 * (channel and topic links) and the engine (Notification Bot's move notices) build them.
 */

/** Lone surrogates replaced (encodeURIComponent throws on them; String#toWellFormed is ES2024). */
function toWellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

/** Zulip's encode_hash_component: Python's quote(safe="*") with `%`→`.` and `.`→`.2E`. */
export function encodeHashComponent(component: string): string {
  const percentEncoded = encodeURIComponent(toWellFormed(component)).replace(
    // encodeURIComponent leaves these alone; Python's quote() does not.
    /[!'()]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return percentEncoded.replace(/[.%]/g, (c) => (c === "." ? ".2E" : "."));
}

/** `12-general-chat`: the id is what Zulip resolves; the name is only for humans. */
export function channelSlug(channelId: number, channelName: string): string {
  return `${channelId}-${encodeHashComponent(channelName.replaceAll(" ", "-"))}`;
}

export function channelNarrowUrl(channelId: number, channelName: string): string {
  return `/#narrow/channel/${channelSlug(channelId, channelName)}`;
}

export function topicNarrowUrl(channelId: number, channelName: string, topic: string): string {
  return `${channelNarrowUrl(channelId, channelName)}/topic/${encodeHashComponent(topic)}`;
}

export function messageNarrowUrl(channelId: number, channelName: string, topic: string, messageId: string): string {
  return `${topicNarrowUrl(channelId, channelName, topic)}/near/${messageId}`;
}
