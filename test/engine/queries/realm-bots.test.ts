import { afterEach, describe, expect, it } from "vitest";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

describe("Store.realmBots", () => {
  let t: TempStore;
  afterEach(() => t.cleanup());

  it("lists exactly the realm's bots (deactivated too) by ID, live and after a reopen", () => {
    t = tempStore();
    const { realm, owner, alice } = seedRealm(t.store);
    const other = t.store.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "o@other.dev", fullName: "Other Owner" },
    });
    const expected = () =>
      t.store
        .realmUsers(realm.id)
        .filter((u) => u.isBot)
        .map((u) => u.id);
    const bots = () => t.store.realmBots(realm.id).map((u) => u.id);
    const before = expected();
    expect(bots()).toEqual(before);
    const b1 = t.store.createUser({
      realmId: realm.id,
      email: "b1-bot@test.dev",
      fullName: "B1",
      bot: { type: 1, ownerId: alice.id },
    });
    t.store.createUser({ realmId: realm.id, email: "human@test.dev", fullName: "Human" });
    const b2 = t.store.createUser({
      realmId: realm.id,
      email: "b2-bot@test.dev",
      fullName: "B2",
      bot: { type: 1, ownerId: owner.id },
    });
    t.store.createUser({
      realmId: other.realm.id,
      email: "elsewhere-bot@other.dev",
      fullName: "Elsewhere",
      bot: { type: 1, ownerId: other.owner.id },
    });
    t.store.setUserActive(b1.id, false);
    expect(bots()).toEqual(expected());
    expect(bots()).toEqual([...before, b1.id, b2.id].sort((x, y) => x - y));
    t.reopen();
    expect(bots()).toEqual(expected());
    expect(t.store.realmBots(other.realm.id).map((u) => u.isBot)).toEqual(
      t.store
        .realmUsers(other.realm.id)
        .filter((u) => u.isBot)
        .map(() => true),
    );
  });
});
