/**
 * The entity registry (src/engine/index/entities) is what StoreState loads, reloads and
 * clears: it must cover every entity table, and after a failed batch every index must
 * hold exactly what a fresh open of the directory loads (a registered index that reload
 * forgot to clear would keep the undone batch's records). So must every derived cache
 * and read model (active subscribers, muted channels, system groups, recent
 * conversations, conversations, topic policies, message -> conversation, cached
 * bitmaps, received sets): they hold what a fresh open holds, and answer as it does.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROLE, type Store, type User } from "../../src/engine/index.js";
import { internals, receivedSetsOf } from "../../src/engine/internal.js";
import { TABLE_NAMES, TABLE_SPECS } from "../../src/engine/storage/tables.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";
import { setUserSettings } from "../support/user-settings.js";

class InjectedCommitFailure extends Error {}

let t: TempStore;
let armed = false;
let w: ReturnType<typeof seedRealm>;
let guest: User;

beforeEach(() => {
  armed = false;
  t = tempStore({
    commitHook: () => {
      if (!armed) return;
      armed = false;
      throw new InjectedCommitFailure("injected commit failure");
    },
  });
  w = seedRealm(t.store);
  // A limited guest (Zulip's can_access_all_users_group = role:members), so the accessible-users cache has entries.
  guest = t.store.createUser({ realmId: w.realm.id, email: "gus@test.dev", fullName: "Gus Guest", role: ROLE.GUEST });
  const members = t.store.systemGroupId(w.realm.id, "role:members");
  t.store.updateRealm(w.owner.id, { groups: { can_access_all_users_group: { new: members } } });
});
afterEach(() => t.cleanup());

const entityTables = () => TABLE_NAMES.filter((name) => TABLE_SPECS[name].role === "entity").sort();

/** One write to every entity table (all but presence, which a ping changes in memory only). */
function touchEveryEntity(store: Store, tag: string): void {
  const { realm, owner } = store.createRealm({
    subdomain: `r${tag}`,
    name: `Realm ${tag}`,
    owner: { email: `owner${tag}@test.dev`, fullName: `Owner ${tag}` },
  });
  const erin = store.createUser({ realmId: w.realm.id, email: `erin${tag}@test.dev`, fullName: `Erin ${tag}` });
  store.updateUser(w.owner.id, w.bob.id, { fullName: `Robert ${tag}`, role: 200 });
  store.subscribe(w.owner.id, { channels: [{ name: `bulk${tag}` }], principals: [w.owner.id, erin.id] });
  store.setChannelMuted(w.alice.id, w.general.id, true);
  store.createGroup(w.owner.id, { name: `crew${tag}`, members: [w.alice.id, erin.id] });
  setUserSettings(store, w.alice.id, { enter_sends: true });
  store.updateRealmSettingDefaults(owner.id, { enter_sends: true });
  store.scheduleMessage(w.alice.id, {
    to: { type: "direct", userIds: [w.bob.id] },
    content: `later ${tag}`,
    deliverAt: store.now() + 86_400,
    client: "test",
  });
  store.addPlayground(w.owner.id, {
    name: `Play ${tag}`,
    pygmentsLanguage: "Python",
    urlTemplate: "https://p.dev/{code}",
  });
  store.createDrafts(w.alice.id, [{ type: "stream", to: [w.general.id], topic: "t", content: `draft ${tag}` }]);
  store.createSavedSnippet(w.alice.id, `title ${tag}`, `snippet ${tag}`);
  store.updateOwnStatus(w.alice.id, { statusText: `status ${tag}` });
  store.muteUser(w.bob.id, erin.id);
  store.registerClientDevice(w.alice.id);
  store.addRealmEmoji(w.owner.id, { name: `emoji_${tag}`, fileName: `${tag.repeat(16)}.png`, isAnimated: false });
  store.createAttachment(
    {
      ownerId: w.alice.id,
      pathId: `${w.realm.id}/ab/${tag.repeat(24)}/${tag}.png`,
      name: `${tag}.png`,
      size: 10,
      contentType: "image/png",
      image: null,
    },
    null,
  );
  store.updateSettings(w.alice.id, { settings: {}, email: `alice${tag}@test.dev`, realmUrl: "http://test.dev" });
  const invite = {
    invitedAs: 400,
    channelIds: [],
    groupIds: [],
    includeRealmDefaultSubscriptions: false,
    notifyReferrerOnJoin: false,
    welcomeMessageCustomText: null,
    expiresInMinutes: null,
  };
  store.inviteUsers(w.owner.id, `invitee${tag}@test.dev`, invite, { realmUrl: "http://test.dev", dailyLimit: 100 });
  void realm;
}

/**
 * Messages to a channel and to direct conversations (one new each time), some read,
 * a topic muted: what the unread summary, recent conversations and received sets derive.
 */
function sendSome(store: Store, tag: string): void {
  const topic = `talk ${tag}`;
  const inGeneral = store.sendMessage({
    senderId: w.bob.id,
    to: { type: "channel", channel: "general", topic },
    content: `hello ${tag}`,
  });
  store.sendMessage({ senderId: w.owner.id, to: { type: "channel", channel: "general", topic }, content: "again" });
  store.sendMessage({ senderId: w.bob.id, to: { type: "direct", users: [w.alice.id] }, content: `psst ${tag}` });
  const erin = store.findUserByEmail(w.realm.id, `erin${tag}@test.dev`)!;
  store.sendMessage({ senderId: erin.id, to: { type: "direct", users: [w.alice.id, w.bob.id] }, content: "hi all" });
  store.updateFlags(w.alice.id, [inGeneral.id], "read", "add");
  store.setTopicPolicy(w.alice.id, w.general.id, topic, 1);
}

/** Every user ID and channel ID the store has, and a few above (the failed batch allocated those). */
function probeIds(store: Store): { readonly users: number[]; readonly channels: number[] } {
  const state = internals(store);
  const upTo = (n: number) => Array.from({ length: n + 5 }, (_, i) => i + 1);
  return { users: upTo(Math.max(...state.users.keys())), channels: upTo(Math.max(...state.channels.keys())) };
}

/**
 * Reads every derived cache and read model StoreState and the received sets keep
 * (which warms them), and returns the answers.
 */
function readDerived(store: Store): unknown {
  const state = internals(store);
  const { users, channels } = probeIds(store);
  const realUsers = users.filter((id) => state.users.has(id));
  return {
    activeSubscribers: channels.map((id) => state.activeSubscriberList(id)),
    mutedChannels: users.map((id) => state.mutedChannelsOf(id)),
    systemGroup: state.systemGroupIdOf(w.realm.id, "role:members"),
    groupMembers: [...state.groupMembers(state.systemGroupIdOf(w.realm.id, "role:members")!)].sort((a, b) => a - b),
    groups: store.userGroups(w.owner.id, true),
    accessibleUsers: [...(store.accessibleUserIds(guest.id) ?? [])].sort((a, b) => a - b),
    perUser: realUsers.map((id) => ({
      recent: store.recentConversations(id),
      topics: store.userTopics(id),
      unread: store.unreadSummary(id),
      window: store.getMessageWindow(id, { anchor: "first_unread", numBefore: 5, numAfter: 5 }),
    })),
  };
}

/** Reads every derived cache StoreState keeps, so that a reload has something to clear. */
function warmDerivedCaches(store: Store): void {
  readDerived(store);
}

/** What each derived cache holds, by key, order aside (a reload and a fresh open fill them in different orders). */
function derivedHoldings(store: Store): Record<string, string[]> {
  const sorted = (keys: Iterable<unknown>) => [...keys].map((k) => JSON.stringify(k)).sort();
  const received = receivedSetsOf(store).cachedUsers();
  const holdings: Record<string, string[]> = {};
  for (const [name, keys] of Object.entries(internals(store).derivedCacheKeys())) holdings[name] = sorted(keys);
  holdings.bitmaps = sorted(internals(store).bitmaps.cachedKeys());
  for (const [kind, userIds] of Object.entries(received)) holdings[`received.${kind}`] = sorted(userIds);
  return holdings;
}

function expectSameHoldings(live: Record<string, string[]>, fresh: Record<string, string[]>, when: string): void {
  expect(Object.keys(live)).toEqual(Object.keys(fresh));
  for (const [name, keys] of Object.entries(fresh)) expect(live[name], `${name} held ${when}`).toEqual(keys);
}

describe("entity registry", () => {
  it("has an index for every entity table of TABLE_SPECS, and nothing else", () => {
    expect(Object.keys(internals(t.store).entities).sort()).toEqual(entityTables());
  });

  it("after a batch whose commit fails, every registered index equals a fresh load of the directory", () => {
    touchEveryEntity(t.store, "a");
    sendSome(t.store, "a");
    t.store.updatePresence(w.bob.id, "active");
    t.store.flushPresence();
    warmDerivedCaches(t.store);
    armed = true;
    expect(() =>
      t.store.batch(() => {
        touchEveryEntity(t.store, "b");
        sendSome(t.store, "b");
        warmDerivedCaches(t.store);
      }),
    ).toThrow(InjectedCommitFailure);
    expect(armed, "the batch reached its commit").toBe(false);
    const live = internals(t.store).entities;
    const reopened = new Map(Object.entries(internals(t.reopen()).entities));
    for (const name of entityTables()) {
      const index = (live as Record<string, unknown>)[name];
      expect(index, `index of ${name}`).toEqual(reopened.get(name));
    }
  });

  it("after a batch whose commit fails, every derived cache holds and answers what a fresh open does", () => {
    touchEveryEntity(t.store, "a");
    sendSome(t.store, "a");
    warmDerivedCaches(t.store);
    // Every cache holds something before the batch (else this test would prove nothing about it).
    for (const [name, keys] of Object.entries(derivedHoldings(t.store))) expect(keys, name).not.toEqual([]);
    armed = true;
    expect(() =>
      t.store.batch(() => {
        touchEveryEntity(t.store, "b");
        sendSome(t.store, "b");
        warmDerivedCaches(t.store);
      }),
    ).toThrow(InjectedCommitFailure);
    expect(armed, "the batch reached its commit").toBe(false);
    const liveHeld = derivedHoldings(t.store);
    // The same reads on the store whose batch failed, then on a fresh open of its directory.
    const liveAnswers = readDerived(t.store);
    const liveWarm = derivedHoldings(t.store);
    const fresh = t.reopen();
    expectSameHoldings(liveHeld, derivedHoldings(fresh), "right after the failure");
    expect(liveAnswers, "answers").toEqual(readDerived(fresh));
    expectSameHoldings(liveWarm, derivedHoldings(fresh), "after the same reads");
  });
});
