/** @module index/entities/channels Channels by ID and name; subscriptions by user and by channel. */
import type { Channel, Subscription } from "../../types.js";
import { channelKey } from "../keys.js";
import type { EntityIndex } from "./entity-index.js";

export class SubscriptionIndex implements EntityIndex<Subscription> {
  /** userId -> channelId -> subscription (active or not). */
  readonly byUser = new Map<number, Map<number, Subscription>>();
  /** channelId -> userIds with an active subscription (every channel has an entry). */
  readonly subscribers = new Map<number, Set<number>>();
  /**
   * channelId -> userId -> subscription record, active or not (records are never
   * removed): who may have received a channel message, without walking the realm.
   */
  readonly everSubscribed = new Map<number, Map<number, Subscription>>();
  /**
   * Bumped per user on any subscription change, and for every user on clear: derived
   * caches keyed by it (received.ts, mutedChannelsOf) never see an old version again.
   * A version, not content: a reload keeps it.
   */
  readonly #versions = new Map<number, number>();
  readonly #onChange: (sub: Subscription) => void;

  constructor(onChange: (sub: Subscription) => void) {
    this.#onChange = onChange;
  }

  add(sub: Subscription): void {
    let byChannel = this.byUser.get(sub.userId);
    if (!byChannel) this.byUser.set(sub.userId, (byChannel = new Map()));
    byChannel.set(sub.channelId, sub);
    let set = this.subscribers.get(sub.channelId);
    if (!set) this.subscribers.set(sub.channelId, (set = new Set()));
    if (sub.active) set.add(sub.userId);
    else set.delete(sub.userId);
    let ever = this.everSubscribed.get(sub.channelId);
    if (!ever) this.everSubscribed.set(sub.channelId, (ever = new Map()));
    ever.set(sub.userId, sub);
    this.#onChange(sub);
    this.#versions.set(sub.userId, (this.#versions.get(sub.userId) ?? 0) + 1);
  }

  /** A channel has a (possibly empty) subscriber set from its creation on. */
  ensureChannel(channelId: number): void {
    if (!this.subscribers.has(channelId)) this.subscribers.set(channelId, new Set());
  }

  get versions(): ReadonlyMap<number, number> {
    return this.#versions;
  }

  clear(): void {
    this.byUser.clear();
    this.subscribers.clear();
    this.everSubscribed.clear();
    for (const [userId, version] of this.#versions) this.#versions.set(userId, version + 1);
  }
}

export class ChannelIndex implements EntityIndex<Channel> {
  readonly byId = new Map<number, Channel>();
  /** `${realmId}:${folded name}` -> channelId. */
  readonly byName = new Map<string, number>();
  readonly #subscriptions: SubscriptionIndex;

  constructor(subscriptions: SubscriptionIndex) {
    this.#subscriptions = subscriptions;
  }

  add(channel: Channel): void {
    const previous = this.byId.get(channel.id);
    if (previous !== undefined && previous.name !== channel.name)
      this.byName.delete(channelKey(previous.realmId, previous.name));
    this.byId.set(channel.id, channel);
    this.byName.set(channelKey(channel.realmId, channel.name), channel.id);
    this.#subscriptions.ensureChannel(channel.id);
  }

  clear(): void {
    this.byId.clear();
    this.byName.clear();
  }
}
