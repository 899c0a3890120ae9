/**
 * Custom profile fields in the engine: permission rules, values stored and rendered,
 * persisted across a reopen, a deleted field's values gone in the same write, the
 * change sets and events each write releases, and refusals that change nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROFILE_FIELD_TYPE, ROLE, type ChangeSet, type EngineEvent, type User } from "../../../src/engine/index.js";
import { expectFailsUnchanged } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
let w: ReturnType<typeof seedRealm>;
let admin: User;
beforeEach(() => {
  t = tempStore();
  w = seedRealm(t.store);
  admin = t.store.createUser({
    realmId: w.realm.id,
    email: "admin@test.dev",
    fullName: "Ada",
    role: ROLE.ADMINISTRATOR,
  });
});
afterEach(() => t.cleanup());

describe("profile fields", () => {
  it("administrators define fields; members may not", () => {
    expectFailsUnchanged(
      t.store,
      () => t.store.createProfileField(w.bob.id, PROFILE_FIELD_TYPE.SHORT_TEXT, { name: "x" }),
      {
        code: "UNAUTHORIZED_PRINCIPAL",
        message: "Must be an organization administrator",
      },
    );
    const field = t.store.createProfileField(admin.id, PROFILE_FIELD_TYPE.SHORT_TEXT, { name: " Team " });
    expect(field).toMatchObject({ name: "Team", order: field.id, editableByUser: true, fieldData: "" });
    expect(t.store.profileFields(w.guest.id).map((f) => f.id)).toEqual([field.id]);
  });

  it("stores rendered values, keeps them across a reopen, and a deleted field takes its values along", () => {
    const bio = t.store.createProfileField(admin.id, PROFILE_FIELD_TYPE.LONG_TEXT, { name: "Bio" });
    const team = t.store.createProfileField(admin.id, PROFILE_FIELD_TYPE.SHORT_TEXT, { name: "Team" });
    const changes: ChangeSet[] = [];
    const events: EngineEvent[] = [];
    t.store.onChanges((c) => changes.push(c));
    t.store.onEvents((batch) => events.push(...batch.deliveries.map((d) => d.event)));
    t.store.updateOwnProfileData(w.bob.id, [
      { id: bio.id, value: "so *much*" },
      { id: team.id, value: "core" },
    ]);
    expect(t.store.getUser(w.bob.id)).toMatchObject({
      profileData: { [bio.id]: "so *much*", [team.id]: "core" },
      profileRendered: { [bio.id]: "<p>so <em>much</em></p>", [team.id]: "<p>core</p>" },
    });
    expect(events.filter((e) => e.type === "realm_user")).toHaveLength(2);
    const reopened = t.reopen();
    expect(reopened.getUser(w.bob.id).profileData).toEqual({ [bio.id]: "so *much*", [team.id]: "core" });
    changes.length = 0;
    reopened.onChanges((c) => changes.push(c));
    reopened.deleteProfileField(admin.id, bio.id);
    expect(reopened.getUser(w.bob.id).profileData).toEqual({ [team.id]: "core" });
    expect(reopened.getUser(w.bob.id).profileRendered).toEqual({ [team.id]: "<p>core</p>" });
    expect([...changes[0]!.profileFields.keys()]).toEqual([w.realm.id]);
    expect(changes[0]!.user.get(w.bob.id)).toEqual({
      op: "changed",
      fields: new Set(["profileData", "profileRendered"]),
    });
    expect(
      t
        .reopen()
        .profileFields(w.bob.id)
        .map((f) => f.id),
    ).toEqual([team.id]);
  });

  it("a refused value stores nothing of the request", () => {
    const team = t.store.createProfileField(admin.id, PROFILE_FIELD_TYPE.SHORT_TEXT, { name: "Team" });
    const day = t.store.createProfileField(admin.id, PROFILE_FIELD_TYPE.DATE, { name: "Day" });
    expectFailsUnchanged(
      t.store,
      () =>
        t.store.updateOwnProfileData(w.bob.id, [
          { id: team.id, value: "core" },
          { id: day.id, value: "2024-13-01" },
        ]),
      { code: "BAD_REQUEST", message: "Day is not a date" },
    );
  });
});
