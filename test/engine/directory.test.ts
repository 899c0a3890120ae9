/**
 * The narrow read interfaces (src/engine/directory.ts): lookups by key answer as the
 * entity indexes do, and the permission rules run on an AccessReader that holds only
 * those directories (no StoreState), answering as they do on the store.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canAccessChannelContent, canSeeChannel, canSendToChannel, isAllowedBy } from "../../src/engine/access.js";
import type { AccessReader } from "../../src/engine/directory.js";
import { internals } from "../../src/engine/internal.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore;
let w: ReturnType<typeof seedRealm>;

beforeEach(() => {
  t = tempStore();
  w = seedRealm(t.store);
});
afterEach(() => t.cleanup());

describe("directories", () => {
  it("find users by either email, case-insensitively, and channels by folded name, within one realm", () => {
    const st = internals(t.store);
    expect(st.userDirectory.byEmail(w.realm.id, " ALICE@Test.dev ")?.id).toBe(w.alice.id);
    expect(st.userDirectory.byEmail(w.realm.id + 1, "alice@test.dev")).toBeUndefined();
    expect([...st.userDirectory.ofRealm(w.realm.id)].sort()).toEqual(
      [w.owner.id, w.alice.id, w.bob.id, w.guest.id].sort(),
    );
    expect(st.channelDirectory.byName(w.realm.id, "GeNeRaL")?.id).toBe(w.general.id);
    expect(st.channelDirectory.isSubscribed(w.bob.id, w.general.id)).toBe(true);
    expect(st.channelDirectory.isSubscribed(w.bob.id, w.secret.id)).toBe(false);
    t.store.unsubscribe(w.bob.id, ["general"]);
    expect(st.channelDirectory.isSubscribed(w.bob.id, w.general.id)).toBe(false);
    expect(st.channelDirectory.subscription(w.bob.id, w.general.id)?.active).toBe(false);
  });

  it("permission rules answer the same on a reader holding only the directories", () => {
    const st = internals(t.store);
    const reader: AccessReader = {
      userDirectory: st.userDirectory,
      channelDirectory: st.channelDirectory,
      groupDirectory: st.groupDirectory,
      realmDirectory: st.realmDirectory,
      conversations: st.conversations,
      bitmaps: st.bitmaps,
      messageRecord: (id) => st.messageRecord(id),
    };
    const members = t.store.systemGroupId(w.realm.id, "role:members")!;
    for (const user of [w.owner, w.alice, w.bob, w.guest]) {
      for (const channel of [w.general, w.secret]) {
        expect(canSeeChannel(reader, user, channel)).toBe(canSeeChannel(st, user, channel));
        expect(canAccessChannelContent(reader, user, channel)).toBe(canAccessChannelContent(st, user, channel));
        expect(canSendToChannel(reader, user, channel)).toBe(canSendToChannel(st, user, channel));
      }
      expect(isAllowedBy(reader, members, user)).toBe(user.role <= 400);
    }
    expect(canSeeChannel(reader, w.bob, w.secret)).toBe(false);
    expect(canSeeChannel(reader, w.alice, w.secret)).toBe(true);
  });
});
