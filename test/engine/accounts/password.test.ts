import { afterEach, describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../../src/engine/index.js";
import { tempStore, type TempStore } from "../../support/temp-store.js";

// A cheap cost keeps the suite fast; the parameters travel with the record either way.
const CHEAP = { N: 1024, r: 8, p: 1 };

describe("password hashing", () => {
  it("verifies the right password and refuses others", async () => {
    const record = await hashPassword("correct horse battery", CHEAP);
    expect(record).toMatchObject({ algorithm: "scrypt", N: 1024, r: 8, p: 1 });
    expect(await verifyPassword(record, "correct horse battery")).toBe(true);
    expect(await verifyPassword(record, "correct horse batterY")).toBe(false);
    expect(await verifyPassword(record, "")).toBe(false);
  });

  it("salts every hash and keeps its own parameters", async () => {
    const a = await hashPassword("same", CHEAP);
    const b = await hashPassword("same", { N: 2048, r: 8, p: 1 });
    expect(a.salt).not.toBe(b.salt);
    expect(a.hash).not.toBe(b.hash);
    expect(await verifyPassword(b, "same")).toBe(true);
  });

  it("uses the default cost when none is given", async () => {
    const record = await hashPassword("x");
    expect(record.N).toBeGreaterThanOrEqual(2 ** 15);
    expect(await verifyPassword(record, "x")).toBe(true);
  });
});

describe("stored passwords", () => {
  let temp: TempStore | undefined;
  afterEach(() => temp?.cleanup());

  it("are kept apart from the user record and survive reopening", async () => {
    temp = tempStore();
    const realm = temp.store.createRealm({
      subdomain: "p",
      name: "P",
      owner: { email: "o@p.test", fullName: "Owner" },
    });
    const user = temp.store.createUser({
      realmId: realm.realm.id,
      email: "u@p.test",
      fullName: "User",
      password: await hashPassword("pw-one", CHEAP),
    });
    expect(JSON.stringify(temp.store.getUser(user.id))).not.toContain("scrypt");
    expect(await verifyPassword(temp.store.passwordOf(user.id)!, "pw-one")).toBe(true);
    temp.store.setPassword(user.id, await hashPassword("pw-two", CHEAP));
    const reopened = temp.reopen();
    expect(await verifyPassword(reopened.passwordOf(user.id)!, "pw-two")).toBe(true);
    expect(reopened.passwordOf(realm.owner.id)).toBeUndefined();
  });
});
