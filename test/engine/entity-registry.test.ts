/**
 * The entity registry (src/engine/index/entities) is what StoreState loads, reloads and
 * clears: it must cover every entity table, and after a failed batch every index must
 * hold exactly what a fresh open of the directory loads (a registered index that reload
 * forgot to clear would keep the undone batch's records).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { TABLE_NAMES, TABLE_SPECS } from "../../src/engine/storage/tables.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";
import { setUserSettings } from "../support/user-settings.js";

class InjectedCommitFailure extends Error {}

let t: TempStore;
let armed = false;
let w: ReturnType<typeof seedRealm>;

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

/** Reads every derived cache StoreState keeps, so that a reload has something to clear. */
function warmDerivedCaches(store: Store): void {
  const state = internals(store);
  for (const channel of state.channels.values()) state.activeSubscriberList(channel.id);
  for (const user of state.users.values()) state.mutedChannelsOf(user.id);
  state.systemGroupIdOf(w.realm.id, "role:members");
  store.recentConversations(w.alice.id);
  store.userTopics(w.alice.id);
}

describe("entity registry", () => {
  it("has an index for every entity table of TABLE_SPECS, and nothing else", () => {
    expect(Object.keys(internals(t.store).entities).sort()).toEqual(entityTables());
  });

  it("after a batch whose commit fails, every registered index equals a fresh load of the directory", () => {
    touchEveryEntity(t.store, "a");
    t.store.updatePresence(w.bob.id, "active");
    t.store.flushPresence();
    warmDerivedCaches(t.store);
    armed = true;
    expect(() =>
      t.store.batch(() => {
        touchEveryEntity(t.store, "b");
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
});
