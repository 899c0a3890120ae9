/**
 * The compose box's suggestions: in the message, @-mentions (people, groups, the
 * wildcards; `@_` for a silent mention), #channel and #channel>topic links and :emoji:;
 * in the topic field, the channel's topics (GET /users/me/{stream_id}/topics when not
 * known yet). People and channels come from the client's state; groups are fetched
 * once (GET /user_groups, which register is not asked for).
 */
import type { Api } from "./api.js";
import { Autocomplete, type Suggestion, type Suggestions } from "./autocomplete.js";
import { h } from "./dom.js";
import { emojiElement } from "./emoji.js";
import { avatar } from "./people.js";
import type { ClientState } from "./state.js";
import {
  bestMatches,
  channelLink,
  findTrigger,
  groupMention,
  topicLink,
  userMention,
  type Trigger,
} from "./typeahead.js";

/** Zulip's wildcard mentions, as its typeahead offers them. */
const WILDCARDS: readonly { name: string; detail: string }[] = [
  { name: "all", detail: "Notify channel" },
  { name: "everyone", detail: "Notify channel" },
  { name: "channel", detail: "Notify channel" },
  { name: "topic", detail: "Notify topic" },
];

interface Group {
  readonly id: number;
  readonly name: string;
  readonly description: string;
}

export class ComposeAutocomplete {
  #groups: Promise<Group[]> | null = null;
  readonly #topicFetches = new Map<number, Promise<void>>();

  constructor(
    private readonly api: Api,
    private readonly state: ClientState,
    text: HTMLTextAreaElement,
    topic: HTMLInputElement,
    /** The channel the topic field is for. */
    private readonly channelId: () => number | null,
    host: HTMLElement,
  ) {
    new Autocomplete(text, "compose-suggestions", (value, caret) => this.#forText(value, caret), host);
    new Autocomplete(topic, "topic-suggestions", (value) => this.#forTopic(value), host);
  }

  async #forText(value: string, caret: number): Promise<Suggestions | null> {
    const trigger = findTrigger(value.slice(0, caret));
    if (!trigger) return null;
    const items = await this.#items(trigger);
    return { start: trigger.start, end: caret, items };
  }

  async #items(t: Trigger): Promise<Suggestion[]> {
    switch (t.kind) {
      case "mention":
        return this.#mentions(t.query, t.silent);
      case "channel":
        return bestMatches(this.state.subs.values(), t.query, (s) => [s.name]).map((s) => ({
          label: [`#${s.name}`],
          insert: `${channelLink(s.name)} `,
        }));
      case "topic": {
        const streamId = this.state.channelIdByName(t.channel);
        if (streamId === undefined) return [];
        await this.#loadTopics(streamId);
        const channel = this.state.channelName(streamId);
        return bestMatches(this.state.topicsOf(streamId), t.query, (x) => [x.name]).map((x) => ({
          label: [`#${channel} › ${x.name}`],
          insert: `${topicLink(channel, x.name)} `,
        }));
      }
      case "emoji": {
        const catalog = this.state.emojiCatalog;
        await catalog.load();
        return catalog.search(t.query).map((e) => ({
          label: [emojiElement(e, this.state.realmEmoji), ` :${e.name}:`],
          insert: `:${e.name}: `,
        }));
      }
    }
  }

  async #mentions(query: string, silent: boolean): Promise<Suggestion[]> {
    const people = [...this.state.users.values()].filter((u) => u.is_active !== false);
    const counts = new Map<string, number>();
    for (const u of people) counts.set(u.full_name.toLowerCase(), (counts.get(u.full_name.toLowerCase()) ?? 0) + 1);
    const users: Suggestion[] = bestMatches(people, query, (u) => [u.full_name, u.email]).map((u) => ({
      label: [avatar(u, u.user_id, "tiny"), u.full_name, h("span", { class: "detail" }, u.email)],
      insert: `${userMention(u.full_name, u.user_id, (counts.get(u.full_name.toLowerCase()) ?? 0) > 1, silent)} `,
    }));
    const groups: Suggestion[] = bestMatches(await this.#loadGroups(), query, (g) => [g.name]).map((g) => ({
      label: [g.name, h("span", { class: "detail" }, g.description || "Group")],
      insert: `${groupMention(g.name, silent)} `,
    }));
    const wildcards: Suggestion[] = silent
      ? []
      : bestMatches(WILDCARDS, query, (w) => [w.name]).map((w) => ({
          label: [w.name, h("span", { class: "detail" }, w.detail)],
          insert: `@**${w.name}** `,
        }));
    return [...users, ...groups, ...(query === "" ? [] : wildcards)].slice(0, 8);
  }

  #loadGroups(): Promise<Group[]> {
    this.#groups ??= this.api
      .get("/user_groups")
      .then((reply) => {
        const list = Array.isArray(reply["user_groups"]) ? (reply["user_groups"] as Record<string, unknown>[]) : [];
        // Role groups (role:members...) are not mentionable.
        return list
          .filter((g) => g["is_system_group"] !== true && g["deactivated"] !== true)
          .map((g) => ({ id: Number(g["id"]), name: String(g["name"]), description: String(g["description"] ?? "") }));
      })
      .catch(() => {
        this.#groups = null;
        return [];
      });
    return this.#groups;
  }

  #loadTopics(streamId: number): Promise<void> {
    if (this.state.topicsLoaded.has(streamId)) return Promise.resolve();
    let fetching = this.#topicFetches.get(streamId);
    if (!fetching) {
      fetching = this.api
        .get(`/users/me/${streamId}/topics`)
        .then((reply) => {
          const topics = Array.isArray(reply["topics"]) ? (reply["topics"] as { name: string; max_id: number }[]) : [];
          this.state.setChannelTopics(streamId, topics);
        })
        .catch(() => undefined)
        .finally(() => this.#topicFetches.delete(streamId));
      this.#topicFetches.set(streamId, fetching);
    }
    return fetching;
  }

  async #forTopic(value: string): Promise<Suggestions | null> {
    const streamId = this.channelId();
    if (streamId === null) return null;
    await this.#loadTopics(streamId);
    const items = bestMatches(this.state.topicsOf(streamId), value, (t) => [t.name])
      .filter((t) => t.name !== value)
      .map((t) => ({ label: [t.name], insert: t.name }));
    return { start: 0, end: value.length, items };
  }
}
