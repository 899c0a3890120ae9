/**
 * The realm's message editing, moving and deletion rules: Zulip's defaults until an
 * administrator changes them, validated, kept across a reopen, and announced to the
 * realm with the event open clients follow.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BadRequestError, PermissionDeniedError, type EventBatch } from "../../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t?.cleanup());

describe("realm message policy", () => {
  it("starts at Zulip's defaults, resolved to the realm's system groups", () => {
    t = tempStore();
    const { realm } = seedRealm(t.store);
    const policy = t.store.realmMessagePolicy(realm.id);
    expect(policy.allowMessageEditing).toBe(true);
    expect(policy.messageContentEditLimitSeconds).toBe(600);
    expect(policy.messageContentDeleteLimitSeconds).toBe(600);
    expect(policy.moveMessagesWithinStreamLimitSeconds).toBe(604800);
    expect(policy.messageEditHistoryVisibilityPolicy).toBe("all");
    expect(policy.canDeleteAnyMessageGroup).toBe(t.store.systemGroupId(realm.id, "role:administrators"));
    expect(policy.canMoveMessagesBetweenChannelsGroup).toBe(t.store.systemGroupId(realm.id, "role:members"));
    expect(policy.canResolveTopicsGroup).toBe(t.store.systemGroupId(realm.id, "role:everyone"));
  });

  it("lets an administrator change it, announces it and keeps it; refuses members and bad values", () => {
    t = tempStore();
    const { realm, owner, alice } = seedRealm(t.store);
    const seen: EventBatch[] = [];
    t.store.onEvents((batch) => seen.push(batch));
    const moderators = t.store.systemGroupId(realm.id, "role:moderators");
    t.store.setRealmMessagePolicy(owner.id, {
      allowMessageEditing: false,
      messageContentEditLimitSeconds: null,
      canDeleteOwnMessageGroup: moderators,
      canResolveTopicsGroup: { directMembers: [alice.id], directSubgroups: [] },
    });
    const event = seen.flatMap((b) => b.deliveries.map((d) => d.event)).find((e) => e.type === "realm");
    expect(event).toMatchObject({
      op: "update_message_policy",
      settings: [
        "allowMessageEditing",
        "messageContentEditLimitSeconds",
        "canDeleteOwnMessageGroup",
        "canResolveTopicsGroup",
      ],
    });

    expect(() => t.store.setRealmMessagePolicy(alice.id, { allowMessageEditing: true })).toThrow(PermissionDeniedError);
    expect(() => t.store.setRealmMessagePolicy(owner.id, { messageContentDeleteLimitSeconds: -5 })).toThrow(
      BadRequestError,
    );
    expect(() => t.store.setRealmMessagePolicy(owner.id, { canDeleteAnyMessageGroup: 99999 })).toThrow(BadRequestError);

    const store = t.reopen();
    const policy = store.realmMessagePolicy(realm.id);
    expect(policy.allowMessageEditing).toBe(false);
    expect(policy.messageContentEditLimitSeconds).toBeNull();
    expect(policy.messageContentDeleteLimitSeconds).toBe(600);
    expect(policy.canDeleteOwnMessageGroup).toBe(moderators);
    expect(policy.canResolveTopicsGroup).toEqual({ directMembers: [alice.id], directSubgroups: [] });
    expect(policy.canDeleteAnyMessageGroup).toBe(store.systemGroupId(realm.id, "role:administrators"));
  });
});
