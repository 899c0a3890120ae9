/**
 * The engine's login and credential actions, without HTTP: what survives a reopen,
 * which index a regenerated key leaves, and that a password change cannot be stored
 * without its old-password check.
 */
import { afterEach, describe, expect, it } from "vitest";
import { hashPassword, LoginError, WrongPasswordError } from "../../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

const CHEAP = { N: 1024, r: 8, p: 1 };
let t: TempStore;
afterEach(() => t?.cleanup());

describe("accounts", () => {
  it("keeps a regenerated key, a changed email, a new password and the special permission across a reopen", async () => {
    t = tempStore();
    const { owner, alice, realm } = seedRealm(t.store);
    t.store.setPassword(alice.id, await hashPassword("first-password-1", CHEAP));
    const oldKey = alice.apiKey;
    const key = t.store.regenerateApiKey(alice.id);
    expect(t.store.findUserByApiKey(oldKey)).toBeUndefined();
    expect(t.store.findUserByApiKey(key)?.id).toBe(alice.id);
    t.store.setCanChangeUserEmails(owner.id, true);
    t.store.updateUser(owner.id, alice.id, { newEmail: "alice2@test.dev" });
    await t.store.updateSettingsWithPassword(
      alice.id,
      { settings: {}, oldPassword: "first-password-1", newPassword: "second-password-2" },
      CHEAP,
    );

    const store = t.reopen();
    expect(store.findUserByApiKey(oldKey)).toBeUndefined();
    expect(store.findUserByApiKey(key)?.id).toBe(alice.id);
    expect(store.getUser(owner.id).canChangeUserEmails).toBe(true);
    expect(store.findUserByEmail(realm.id, "alice@test.dev")).toBeUndefined();
    expect((await store.loginWithPassword(realm.id, "ALICE2@test.dev", "second-password-2", CHEAP)).id).toBe(alice.id);
    await expect(
      store.loginWithPassword(realm.id, "alice2@test.dev", "first-password-1", CHEAP),
    ).rejects.toBeInstanceOf(LoginError);
  });

  it("stores no new password without the old one checked, even from an embedder calling updateSettings directly", async () => {
    t = tempStore();
    const { alice } = seedRealm(t.store);
    const before = await hashPassword("first-password-1", CHEAP);
    t.store.setPassword(alice.id, before);
    expect(() => t.store.updateSettings(alice.id, { settings: {}, newPassword: "second-password-2" })).toThrow(
      WrongPasswordError,
    );
    await expect(
      t.store.updateSettingsWithPassword(
        alice.id,
        { settings: {}, oldPassword: "nope-nope-1", newPassword: "second-password-2" },
        CHEAP,
      ),
    ).rejects.toBeInstanceOf(WrongPasswordError);
    expect(t.store.passwordOf(alice.id)).toEqual(before);
  });
});
