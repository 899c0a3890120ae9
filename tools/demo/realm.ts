/**
 * @module tools/demo/realm
 * Builds the demo realm in one store.batch (one LMDB transaction, so it takes well
 * under a second and leaves nothing behind if it fails): the people of
 * tools/demo/content.ts, their channels (public, private with shared history, private
 * with protected history and a member who joins halfway), a few hundred messages
 * spread over the past two weeks, direct and group direct messages, and read and
 * starred flags that make the unread counts and starred view non-trivial.
 *
 * Everything but the timestamps is deterministic: choices cycle through the lists
 * with fixed strides instead of a random generator. Timestamps end at `now` so the
 * demo always looks recent.
 */
import type { Realm, Store, User } from "../../src/engine/index.js";
import {
  BOT_TEMPLATES,
  CHANNELS,
  DIRECT_CONVERSATIONS,
  DIRECT_TEMPLATES,
  PEOPLE,
  TEMPLATES,
  type ChannelKind,
  type DemoChannel,
} from "./content.js";

export interface DemoOptions {
  /** Subdomain of the realm; "" is the default realm served on bare hosts. */
  readonly subdomain: string;
  readonly name?: string;
  /** Total messages, channel and direct together. */
  readonly messages?: number;
  /** UNIX seconds of the last message; default now. */
  readonly now?: number;
}

export interface DemoResult {
  readonly realm: Realm;
  readonly owner: User;
  readonly users: readonly User[];
  readonly channels: readonly { readonly id: number; readonly name: string; readonly kind: ChannelKind }[];
  readonly channelMessages: number;
  readonly directMessages: number;
  readonly starred: number;
}

export const DEFAULT_DEMO_MESSAGES = 360;
const SPAN_SECONDS = 14 * 24 * 3600;
/** Every DIRECT_EVERY-th message is a direct message. */
const DIRECT_EVERY = 8;
/** Generic bot (Zulip's bot type 1). */
const GENERIC_BOT = 1;

/** How much of what they received each person has read (the rest stays unread). */
const READ_SHARE: Readonly<Record<string, number>> = {
  desdemona: 0.9,
  iago: 0.7,
  prospero: 0.5,
  hamlet: 0.8,
  othello: 0.3,
  cordelia: 0,
  polonius: 0.5,
  bot: 1,
};
/** Every n-th received message is starred by these people. */
const STAR_EVERY: Readonly<Record<string, number>> = { desdemona: 29, hamlet: 41 };

/** Fills `{other}`, `{topic}`, `{channel}` and `{n}`; other braces (code) stay. */
function fill(template: string, values: { other: string; topic: string; channel: string; n: number }): string {
  return template.replace(/\{(other|topic|channel|n)\}/g, (_, name: "other" | "topic" | "channel" | "n") =>
    String(values[name]),
  );
}

function at<T>(items: readonly T[], index: number): T {
  const item = items[((index % items.length) + items.length) % items.length];
  if (item === undefined) throw new Error("demo content: empty list");
  return item;
}

/** Creates the demo realm; throws if the subdomain is taken (nothing is written then). */
export function createDemoRealm(store: Store, options: DemoOptions): DemoResult {
  const total = options.messages ?? DEFAULT_DEMO_MESSAGES;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  return store.batch(() => {
    const [ownerSpec, ...others] = PEOPLE;
    if (!ownerSpec) throw new Error("demo content: no people");
    const { realm, owner } = store.createRealm({
      subdomain: options.subdomain,
      name: options.name ?? "Parley Demo",
      owner: { email: ownerSpec.email, fullName: ownerSpec.fullName },
    });
    const users = new Map<string, User>([[ownerSpec.key, owner]]);
    for (const person of others) {
      const user = store.createUser({
        realmId: realm.id,
        email: person.email,
        fullName: person.fullName,
        role: person.role,
        ...(person.bot ? { bot: { type: GENERIC_BOT, ownerId: owner.id } } : {}),
      });
      users.set(person.key, user);
    }
    const user = (key: string): User => {
      const found = users.get(key);
      if (!found) throw new Error(`demo content: unknown person '${key}'`);
      return found;
    };

    // Membership as the loop goes: late members join halfway, and who is subscribed
    // at send time decides who received (and can later read) each message.
    const members = new Map<string, string[]>();
    const channels: { id: number; name: string; kind: ChannelKind }[] = [];
    for (const channel of CHANNELS) {
      const result = store.subscribe(owner.id, {
        channels: [{ name: channel.name, description: channel.description }],
        principals: channel.members.map((key) => user(key).id),
        newChannel: {
          inviteOnly: channel.kind !== "public",
          historyPublicToSubscribers: channel.kind !== "private-protected",
        },
      });
      const id = result.createdChannelIds[0];
      if (id === undefined) throw new Error(`demo content: channel '${channel.name}' was not created`);
      channels.push({ id, name: channel.name, kind: channel.kind });
      members.set(channel.name, [...channel.members]);
    }

    // Channels repeated by weight, walked with a stride coprime to the length so that
    // traffic interleaves instead of arriving channel by channel.
    const slots: DemoChannel[] = CHANNELS.flatMap((c) => Array.from({ length: c.weight }, () => c));
    const stride = coprimeStride(slots.length);
    const received = new Map<string, number[]>([...users.keys()].map((key) => [key, []]));
    const step = Math.max(1, Math.floor(SPAN_SECONDS / Math.max(total, 1)));
    let channelMessages = 0;
    let directMessages = 0;

    for (let i = 0; i < total; i++) {
      if (i === Math.floor(total / 2)) {
        for (const channel of CHANNELS) {
          if (!channel.lateMembers?.length) continue;
          store.subscribe(owner.id, {
            channels: [{ name: channel.name }],
            principals: channel.lateMembers.map((key) => user(key).id),
          });
          members.get(channel.name)?.push(...channel.lateMembers);
        }
      }
      const dateSent = now - (total - 1 - i) * step;
      let senderKey: string;
      let recipients: readonly string[];
      let id: number;
      if (i % DIRECT_EVERY === DIRECT_EVERY - 1) {
        const round = Math.floor(i / DIRECT_EVERY);
        recipients = at(DIRECT_CONVERSATIONS, round);
        senderKey = at(recipients, round * 3 + 1);
        const otherKeys = recipients.filter((key) => key !== senderKey);
        const content = fill(at(DIRECT_TEMPLATES, round), {
          other: user(at(otherKeys, 0)).fullName,
          topic: "",
          channel: "",
          n: round + 2,
        });
        ({ id } = store.sendMessage({
          senderId: user(senderKey).id,
          to: { type: "direct", users: otherKeys.map((key) => user(key).id) },
          content,
          client: "website",
          dateSent,
        }));
        directMessages++;
      } else {
        // Cycles count channel messages only (c), not i: with i, the residues taken by
        // direct messages would skip some templates and senders entirely.
        const c = channelMessages;
        const channel = at(slots, c * stride);
        const topic = at(channel.topics, c * 3 + Math.floor(c / 24));
        const channelMembers = members.get(channel.name) ?? [];
        const humans = channelMembers.filter((key) => key !== "bot");
        const isDeploy = topic === "deploys" && channelMembers.includes("bot");
        senderKey = isDeploy ? "bot" : at(humans, c * 5 + 1);
        const senderIndex = humans.indexOf(senderKey);
        const otherKey = at(
          humans.filter((key) => key !== senderKey),
          c + senderIndex,
        );
        const template = isDeploy ? at(BOT_TEMPLATES, c) : at(TEMPLATES, c * 11);
        const content = fill(template, {
          other: user(otherKey).fullName,
          topic,
          channel: channel.name,
          n: (c % 97) + 3,
        });
        ({ id } = store.sendMessage({
          senderId: user(senderKey).id,
          to: { type: "channel", channel: channel.name, topic },
          content,
          client: isDeploy ? "API" : "website",
          dateSent,
        }));
        recipients = channelMembers;
        channelMessages++;
      }
      for (const key of recipients) if (key !== senderKey) received.get(key)?.push(id);
    }

    let starred = 0;
    for (const [key, ids] of received) {
      const reader = user(key);
      const readCount = Math.floor(ids.length * (READ_SHARE[key] ?? 0));
      if (readCount > 0) store.updateFlags(reader.id, ids.slice(0, readCount), "read", "add");
      const every = STAR_EVERY[key];
      if (every !== undefined) {
        const stars = ids.filter((_, index) => index % every === every - 1);
        if (stars.length > 0) starred += store.updateFlags(reader.id, stars, "starred", "add").updatedCount;
      }
    }

    return { realm, owner, users: [...users.values()], channels, channelMessages, directMessages, starred };
  });
}

/** A stride (7, or the next one coprime to `length`) that visits every slot before repeating. */
function coprimeStride(length: number): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  for (let s = 7; s < 7 + length; s++) if (gcd(s, length) === 1) return s;
  return 1;
}
