/**
 * The derived caches' base: each change kind reaches the dependency a cache declared for
 * it (nothing for "ignore", a clear for "clear" and for a failed write), dispose stops
 * it, and createServer().close() leaves no listener on the store. The HTTP caches keep
 * what a change to fields they do not show leaves valid.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  CHANGE_KINDS,
  DerivedCache,
  type ChangeKind,
  type Dependencies,
  type Store,
} from "../../../src/engine/index.js";
import { createServer } from "../../../src/http/server.js";
import { MessageJsonCache } from "../../../src/http/views/message-cache.js";
import { WindowReplyCache } from "../../../src/http/views/window-cache.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t.cleanup());

/** Records what reached it; follows messages and users precisely, clears on channels. */
class Recorder extends DerivedCache {
  readonly seen: string[] = [];
  protected readonly dependencies: Dependencies = {
    ...(Object.fromEntries(CHANGE_KINDS.map((kind) => [kind, "ignore"])) as Record<ChangeKind, "ignore">),
    message: (messages) => this.seen.push(`message ${[...messages.keys()].join(",")}`),
    user: (users) => this.seen.push(`user ${[...users.keys()].join(",")}`),
    channel: "clear",
  };
  protected clear(): void {
    this.seen.push("clear");
  }
}

/** Counts the store's live listeners of both kinds by wrapping its subscribe methods. */
function countListeners(store: Store): { readonly live: () => number } {
  let live = 0;
  for (const method of ["onChanges", "onEvents"] as const) {
    const subscribe = store[method].bind(store) as (listener: never) => () => void;
    (store as unknown as Record<string, unknown>)[method] = (listener: never) => {
      live++;
      const stop = subscribe(listener);
      let stopped = false;
      return () => {
        if (!stopped) live--;
        stopped = true;
        stop();
      };
    };
  }
  return { live: () => live };
}

describe("DerivedCache", () => {
  it("hands each part to its dependency, clears on 'clear' and after a failed write, and stops on dispose", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    // The channel's first message changes the channel too (first_message_id): sent before.
    t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "first",
    });
    const cache = new Recorder(t.store);
    const { id } = t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
    });
    t.store.updateFlags(w.alice.id, [id], "starred", "add");
    t.store.updateUser(w.owner.id, w.bob.id, { fullName: "Robert" });
    t.store.subscribe(w.owner.id, { channels: [{ name: "brand new" }] });
    expect(() =>
      t.store.batch(() => {
        t.store.sendMessage({
          senderId: w.owner.id,
          to: { type: "channel", channel: "general", topic: "t" },
          content: "y",
        });
        throw new Error("undo");
      }),
    ).toThrow("undo");
    expect(cache.seen).toEqual([`message ${id}`, `user ${w.bob.id}`, "clear", "clear"]);
    const generation = cache.generation;
    cache.dispose();
    expect(cache.disposed).toBe(true);
    t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "z",
    });
    // Dispose's own clear, and nothing after it.
    expect(cache.seen.slice(4)).toEqual(["clear"]);
    expect(cache.generation).toBe(generation + 1);
  });

  it("createServer().close() leaves no listener on the store", () => {
    t = tempStore();
    seedRealm(t.store);
    const counter = countListeners(t.store);
    const server = createServer(t.store, { rateLimit: false, logError: () => undefined });
    expect(counter.live()).toBeGreaterThanOrEqual(4);
    server.close();
    expect(counter.live()).toBe(0);
  });
});

describe("the HTTP caches keep what a change leaves valid", () => {
  it("an API key or the announcements channel keeps message JSON and windows; another user's flags keep windows", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const { id } = t.store.sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
    });
    const messages = new MessageJsonCache(t.store);
    const windows = new WindowReplyCache(t.store);
    const window = t.store.getMessageWindow(w.alice.id, { anchor: "newest", numBefore: 10, numAfter: 0, narrow: [] });
    messages.windowJson(w.realm, window, { applyMarkdown: true, clientGravatar: true, allowEmptyTopicName: false });
    const keep = () => {
      const epoch = windows.epoch;
      windows.put(w.alice.id, w.realm.id, "k", epoch, { messages: [] });
      windows.put(w.alice.id, w.realm.id, "k", epoch, { messages: [] });
    };
    keep();
    const bytes = messages.bytes;
    expect(bytes).toBeGreaterThan(0);
    expect(windows.size).toBe(1);
    t.store.regenerateApiKey(w.alice.id);
    t.store.setNewChannelAnnouncementsChannel(w.realm.id, w.general.id);
    expect(windows.get(w.alice.id, "k")).not.toBeNull();
    // Groups decide access: windows go (as before change sets); message JSON shows none.
    t.store.createGroup(w.owner.id, { name: "crew", members: [w.bob.id] });
    expect(messages.bytes).toBe(bytes);
    keep();
    t.store.updateFlags(w.bob.id, [id], "starred", "add");
    // Another user's flags: alice's answer stays.
    expect(windows.get(w.alice.id, "k")).not.toBeNull();
    // A name a message shows: both go.
    t.store.updateUser(w.owner.id, w.owner.id, { fullName: "Olive Renamed" });
    expect(messages.bytes).toBe(0);
    expect(windows.get(w.alice.id, "k")).toBeNull();
    keep();
    t.store.updateFlags(w.alice.id, [id], "starred", "add");
    expect(windows.get(w.alice.id, "k")).toBeNull();
    messages.dispose();
    windows.dispose();
  });
});
