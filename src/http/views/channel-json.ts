/**
 * @module http/views/channel-json
 * Channel objects as JSON text for register's large lists (streams, never_subscribed,
 * subscriptions, unsubscribed): with ~1200 channels those were ~2 MB of objects built
 * and encoded per register. Each channel's encoding, all but subscriber_count, is kept
 * per channel record: the engine replaces a record on every change (records are never
 * mutated), so a changed channel misses the cache and nothing has to be invalidated by
 * hand. subscriber_count (which changes without the record) and per-user fields are
 * added per request. Key order differs from channelToWire's; JSON objects are unordered.
 */
import type { Channel, Store, Subscription, User } from "../../engine/index.js";
import { RawJson } from "../respond.js";
import { channelToWire, subscriberFields, subscribersFor } from "../../wire/channel.js";

/** `{"stream_id":…` up to the last field, without subscriber_count and the closing brace, by record. */
const heads = new WeakMap<Channel, string>();

function head(store: Store, channel: Channel): string {
  let text = heads.get(channel);
  if (text === undefined) {
    const { subscriber_count: _count, ...rest } = channelToWire(store, channel);
    text = JSON.stringify(rest).slice(0, -1);
    heads.set(channel, text);
  }
  return text;
}

function withFields(store: Store, channel: Channel, fields: Record<string, unknown>): string {
  let out = `${head(store, channel)},"subscriber_count":${store.subscriberCount(channel.id)}`;
  for (const [k, v] of Object.entries(fields)) out += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  return `${out}}`;
}

/**
 * A channel's whole object without per-user fields, as bytes, by record and
 * subscriber count: register's streams and never_subscribed lists (thousands of
 * channels in a large realm) are then one copy of each, instead of a string built,
 * joined and encoded per request.
 */
const plainObjects = new WeakMap<Channel, { readonly count: number; readonly bytes: Buffer }>();

function plainObject(store: Store, channel: Channel): Buffer {
  const count = store.subscriberCount(channel.id);
  let entry = plainObjects.get(channel);
  if (entry === undefined || entry.count !== count) {
    entry = { count, bytes: Buffer.from(withFields(store, channel, {})) };
    plainObjects.set(channel, entry);
  }
  return entry.bytes;
}

const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]");

/** A JSON array of basic channel objects (channelToWire), with subscribers when asked and visible. */
export function channelListJson(
  store: Store,
  viewer: User,
  channels: readonly Channel[],
  includeSubscribers: boolean,
): RawJson {
  if (!includeSubscribers) {
    const parts: Buffer[] = [OPEN];
    channels.forEach((channel, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(plainObject(store, channel));
    });
    parts.push(CLOSE);
    return new RawJson(parts);
  }
  const items = channels.map((channel) => {
    const subscribers = includeSubscribers ? subscribersFor(store, viewer, channel) : undefined;
    return withFields(store, channel, subscribers ? { subscribers } : {});
  });
  return new RawJson([Buffer.from(`[${items.join(",")}]`)]);
}

/** A JSON array of Subscription objects (subscriptionToWire). */
export function subscriptionListJson(
  store: Store,
  viewer: User,
  subs: readonly { readonly subscription: Subscription; readonly channel: Channel }[],
  includeSubscribers: boolean,
): RawJson {
  const items = subs.map(({ subscription, channel }) =>
    withFields(store, channel, subscriberFields(store, viewer, subscription, channel, includeSubscribers)),
  );
  return new RawJson([Buffer.from(`[${items.join(",")}]`)]);
}
