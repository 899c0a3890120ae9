/**
 * What the compose box's autocomplete offers, without the DOM: which trigger the text
 * before the caret ends in (`@name`, `#channel`, `#**channel>topic`, `:emoji`), the
 * matching people, groups, channels, topics and emoji, and the Zulip syntax each
 * choice inserts (`@**Name**`, `@_**Name**` silent, `@*group*`, `#**channel**`,
 * `#**channel>topic**`, `:name:`).
 */

export type Trigger =
  | { readonly kind: "mention"; readonly start: number; readonly query: string; readonly silent: boolean }
  | { readonly kind: "channel"; readonly start: number; readonly query: string }
  | { readonly kind: "topic"; readonly start: number; readonly channel: string; readonly query: string }
  | { readonly kind: "emoji"; readonly start: number; readonly query: string };

/** At most this many suggestions are shown. */
export const MAX_SUGGESTIONS = 8;

/**
 * The trigger the text before the caret ends in, or null. A trigger starts the text or
 * follows whitespace or an opening bracket, as in Zulip's composebox typeahead.
 */
export function findTrigger(before: string): Trigger | null {
  // Spaces are allowed in names and channels ("@alice sm"), newlines are not.
  const mention = /(?:^|[\s(])@(_?)(?:\*\*?)?([^\n@*]{0,40})$/.exec(before);
  if (mention) {
    const query = mention[2] ?? "";
    const start = mention.index + mention[0].indexOf("@");
    if (!query.startsWith(" ")) return { kind: "mention", start, query, silent: mention[1] === "_" };
  }
  const topic = /(?:^|[\s(])#\*\*([^\n*>]{1,60})>([^\n*]{0,60})$/.exec(before);
  if (topic)
    return {
      kind: "topic",
      start: topic.index + topic[0].indexOf("#"),
      channel: topic[1] ?? "",
      query: topic[2] ?? "",
    };
  const channel = /(?:^|[\s(])#(?:\*\*)?([^\n#*>]{0,60})$/.exec(before);
  if (channel && !(channel[1] ?? "").startsWith(" "))
    return { kind: "channel", start: channel.index + channel[0].indexOf("#"), query: channel[1] ?? "" };
  // Two characters at least, as Zulip: "10:30" and ":)" stay text.
  const emoji = /(?:^|[\s(]):([a-z0-9_+-]{2,40})$/i.exec(before);
  if (emoji) return { kind: "emoji", start: emoji.index + emoji[0].indexOf(":"), query: emoji[1] ?? "" };
  return null;
}

/** How well a name matches: 0 from its start, 1 from a word's start, -1 not at all. */
export function matchRank(name: string, query: string): number {
  const n = name.toLowerCase();
  const q = query.toLowerCase().trim();
  if (q === "" || n.startsWith(q)) return 0;
  return n.split(/[\s_\-/]+/).some((word) => word.startsWith(q)) ? 1 : -1;
}

/** The best few of `items` for the query (by rank, then the order given). */
export function bestMatches<T>(items: Iterable<T>, query: string, names: (item: T) => readonly string[]): T[] {
  const ranked: { item: T; rank: number; i: number }[] = [];
  let i = 0;
  for (const item of items) {
    const ranks = names(item)
      .map((name) => matchRank(name, query))
      .filter((r) => r >= 0);
    if (ranks.length > 0) ranked.push({ item, rank: Math.min(...ranks), i: i++ });
  }
  return ranked
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .slice(0, MAX_SUGGESTIONS)
    .map((r) => r.item);
}

/** `@**Name**`, with the ID when another person has the same name; `@_**Name**` silent. */
export function userMention(name: string, userId: number, nameIsShared: boolean, silent: boolean): string {
  return `@${silent ? "_" : ""}**${name}${nameIsShared ? `|${userId}` : ""}**`;
}

export function groupMention(name: string, silent: boolean): string {
  return `@${silent ? "_" : ""}*${name}*`;
}

export function channelLink(name: string): string {
  return `#**${name}**`;
}

export function topicLink(channel: string, topic: string): string {
  return `#**${channel}>${topic}**`;
}
