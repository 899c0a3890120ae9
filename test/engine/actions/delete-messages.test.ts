/**
 * Deleting messages and topics: Zulip's permissions and time limit (on a fake clock),
 * no trace left in any narrow, search, unread count, flag bitmap, attachment claim or
 * notification, the delete_message audience, channel first messages, and topic
 * deletion in atomic batches; verify stays clean and a reopen agrees.
 */
import { stat } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { internals, receivedSetsOf } from "../../../src/engine/internal.js";
import { key, type StoredFlag } from "../../../src/engine/index/keys.js";
import { getMessageRecord } from "../../../src/engine/storage/message-records.js";
import {
  DELETE_TOPIC_BATCH_SIZE,
  DELETE_TOPIC_BATCH_TARGET_MS,
  DELETE_TOPIC_MAX_BATCH_SIZE,
  continueReadPurge,
  deleteMessage,
  deleteTopicBatch,
  nextTopicBatchSize,
  pendingReadPurges,
  readKeysPerWrite,
  warmTopicBatch,
} from "../../../src/engine/actions/delete-messages.js";
import type { EngineEvent, EventBatch, Store, User } from "../../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t?.cleanup());

const START = 1_700_000_000;
let clock = START;

function setup() {
  clock = START;
  t = tempStore({ now: () => clock });
  return seedRealm(t.store);
}

const ALL_FLAGS: readonly StoredFlag[] = [
  "read",
  "starred",
  "collapsed",
  "mentioned",
  "group_mentioned",
  "topic_wildcard_mentioned",
  "has_alert_word",
  "historical",
  "dm",
  "active_mobile_push_notification",
];

/** "user:flag" for every per-user bitmap of `users` holding `id`. */
function traces(store: Store, users: readonly User[], id: number): string[] {
  const bitmaps = internals(store).bitmaps;
  return users.flatMap((u) =>
    ALL_FLAGS.filter((f) => bitmaps.get(key.userFlag(u.id, f)).has(id)).map((f) => `${u.fullName}:${f}`),
  );
}

function send(store: Store, sender: User, channel: string, topic: string, content: string): number {
  return store.sendMessage({ senderId: sender.id, to: { type: "channel", channel, topic }, content }).id;
}

function ids(store: Store, user: User, narrow: unknown = []): number[] {
  return store.getMessageWindow(user.id, { narrow, anchor: "newest", numBefore: 1000, numAfter: 0 }).ids.slice();
}

function events(batches: readonly EventBatch[], type: EngineEvent["type"]) {
  return batches.flatMap((b) =>
    b.deliveries.filter((d) => d.event.type === type).map((d) => ({ event: d.event, to: [...d.audience].sort() })),
  );
}

function expectClean(store: Store): void {
  const report = store.verify();
  expect(report.differences).toEqual([]);
  expect(report.problems).toEqual([]);
}

describe("DELETE /messages/{id}: who may delete", () => {
  it("lets the sender delete within message_content_delete_limit_seconds, admins any time, others never", async () => {
    const { owner, alice, bob } = setup();
    const a = send(t.store, alice, "general", "t", "one");
    const b = send(t.store, alice, "general", "t", "two");
    await expect(t.store.deleteMessage(bob.id, a)).rejects.toThrow("You don't have permission to delete this message");
    clock += 600;
    await t.store.deleteMessage(alice.id, a);
    clock += 1;
    await expect(t.store.deleteMessage(alice.id, b)).rejects.toThrow(
      "The time limit for deleting this message has passed",
    );
    expect(getMessageRecord(internals(t.store).tables, b)).toBeDefined();
    clock += 86_400 * 365;
    await t.store.deleteMessage(owner.id, b);
    expect(ids(t.store, owner, [{ operator: "channel", operand: "general" }])).toEqual([]);
    // Gone: a second delete, like any ID no message has, is "Invalid message(s)".
    for (const id of [a, 0, -1, 2 ** 40, 1.5])
      await expect(t.store.deleteMessage(owner.id, id)).rejects.toThrow("Invalid message(s)");
    expectClean(t.store);
  });

  it("follows the realm's and the channel's group settings, bots' owners, guests and the unlimited setting", async () => {
    const { realm, owner, alice, bob, guest } = setup();
    const group = (name: string) => t.store.systemGroupId(realm.id, name);
    t.store.setRealmMessagePolicy(owner.id, {
      canDeleteOwnMessageGroup: group("role:administrators"),
      messageContentDeleteLimitSeconds: null,
    });
    const own = send(t.store, alice, "general", "t", "mine");
    await expect(t.store.deleteMessage(alice.id, own)).rejects.toThrow(
      "You don't have permission to delete this message",
    );
    // The channel's own setting lets members delete their messages there (not in DMs).
    t.store.subscribe(owner.id, {
      channels: [{ name: "lenient" }],
      principals: [owner.id, alice.id, bob.id, guest.id],
      newChannel: { permissions: { canDeleteOwnMessageGroup: group("role:members") } },
    });
    const there = send(t.store, alice, "lenient", "t", "mine");
    clock += 86_400 * 30;
    await t.store.deleteMessage(alice.id, there);
    const dm = t.store.sendMessage({ senderId: alice.id, to: { type: "direct", users: [bob.id] }, content: "dm" }).id;
    await expect(t.store.deleteMessage(alice.id, dm)).rejects.toThrow(
      "You don't have permission to delete this message",
    );

    // Realm "delete any": guests never, even as direct members; a channel's may include them.
    t.store.setRealmMessagePolicy(owner.id, {
      canDeleteAnyMessageGroup: { directMembers: [bob.id, guest.id], directSubgroups: [] },
    });
    const other = send(t.store, owner, "general", "t", "owner's");
    await t.store.deleteMessage(bob.id, other);
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [guest.id] });
    const another = send(t.store, owner, "general", "t", "owner's again");
    await expect(t.store.deleteMessage(guest.id, another)).rejects.toThrow(
      "You don't have permission to delete this message",
    );
    t.store.subscribe(owner.id, {
      channels: [{ name: "guestmods" }],
      principals: [owner.id, guest.id],
      newChannel: { permissions: { canDeleteAnyMessageGroup: { directMembers: [guest.id], directSubgroups: [] } } },
    });
    const inGuestmods = send(t.store, owner, "guestmods", "t", "owner's");
    await t.store.deleteMessage(guest.id, inGuestmods);

    // A bot's owner deletes its messages as their own.
    const bot = t.store.createUser({
      realmId: realm.id,
      email: "bot@test.dev",
      fullName: "Alice's Bot",
      bot: { type: 1, ownerId: alice.id },
    });
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [bot.id] });
    t.store.setRealmMessagePolicy(owner.id, {
      canDeleteOwnMessageGroup: group("role:everyone"),
      canDeleteAnyMessageGroup: group("role:administrators"),
      messageContentDeleteLimitSeconds: 60,
    });
    const fromBot = send(t.store, bot, "general", "t", "beep");
    await expect(t.store.deleteMessage(bob.id, fromBot)).rejects.toThrow(
      "You don't have permission to delete this message",
    );
    clock += 61;
    await expect(t.store.deleteMessage(alice.id, fromBot)).rejects.toThrow(
      "The time limit for deleting this message has passed",
    );
    clock -= 61;
    await t.store.deleteMessage(alice.id, fromBot);
    expectClean(t.store);
  });

  it("refuses messages the actor may not change: archived channels, protected history left, others' DMs", async () => {
    const { owner, alice, bob } = setup();
    const secret = send(t.store, alice, "secret", "t", "protected");
    t.store.unsubscribe(owner.id, ["secret"]);
    // An administrator who left a channel with protected history cannot delete there.
    await expect(t.store.deleteMessage(owner.id, secret)).rejects.toThrow("Invalid message(s)");
    const dm = t.store.sendMessage({ senderId: alice.id, to: { type: "direct", users: [bob.id] }, content: "x" }).id;
    await expect(t.store.deleteMessage(owner.id, dm)).rejects.toThrow("Invalid message(s)");
    const state = internals(t.store);
    const general = state.channels.get(state.channelByName.get(`${owner.realmId}:GENERAL`)!)!;
    const inGeneral = send(t.store, alice, "general", "t", "x");
    // parley has no channel archiving yet: the record as Zulip's do_deactivate_stream leaves it.
    state.write((ctx) => {
      state.tables.channels.putSync(general.id, { ...general, isArchived: true });
      ctx.changed({ kind: "channel", id: general.id, fields: ["isArchived"] });
      ctx.afterCommit(() => state.indexChannel({ ...general, isArchived: true }));
    });
    await expect(t.store.deleteMessage(owner.id, inGeneral)).rejects.toThrow("Invalid message(s)");
    t.store.setUserActive(alice.id, false);
    await expect(t.store.deleteMessage(alice.id, secret)).rejects.toThrow();
    expect([secret, dm, inGeneral].every((id) => getMessageRecord(state.tables, id) !== undefined)).toBe(true);
  });
});

describe("DELETE /messages/{id}: no trace left", () => {
  it("clears every reader's bits, drops it from narrows, search, unread, starred and first_unread", async () => {
    const { realm, owner, alice, bob, guest } = setup();
    const carol = t.store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
    t.store.createGroup(owner.id, { name: "crew", members: [owner.id] });
    const device = t.store.registerClientDevice(bob.id);
    t.store.registerPushDevice(
      bob.id,
      {
        deviceId: device,
        pushKey: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 7)]).toString("base64"),
        pushKeyId: 5,
        tokenKind: "fcm",
        tokenId: Buffer.alloc(8, 3).toString("base64"),
        bouncerPublicKey: "a2V5",
        encryptedPushRegistration: "cmVn",
      },
      true,
    );
    const earlier = send(t.store, bob, "general", "plans", "first");
    const doomed = send(t.store, alice, "general", "plans", "zebracorn @**Bob** @*crew* @**topic**");
    const kept = send(t.store, alice, "general", "plans", "later @**Bob**");
    t.store.updateFlags(alice.id, [doomed], "read", "add");
    t.store.updateFlags(bob.id, [earlier], "read", "add");
    t.store.updateFlags(bob.id, [doomed], "starred", "add");
    t.store.updateFlags(bob.id, [doomed], "collapsed", "add");
    t.store.addReaction(bob.id, doomed, { emojiName: "octopus" });
    // A reader who never received it: a historical row.
    t.store.updateFlags(carol.id, [doomed], "starred", "add");
    const state = internals(t.store);
    state.write(() => state.bitmaps.add(key.userFlag(bob.id, "has_alert_word"), doomed));
    const everyone = [owner, alice, bob, guest, carol];
    expect(traces(t.store, everyone, doomed).sort()).toEqual(
      [
        "Alice:read",
        "Alice:topic_wildcard_mentioned",
        "Bob:active_mobile_push_notification",
        "Bob:collapsed",
        "Bob:has_alert_word",
        "Bob:mentioned",
        "Bob:starred",
        "Bob:topic_wildcard_mentioned",
        "Carol:historical",
        "Carol:read",
        "Carol:starred",
        "Olive Owner:group_mentioned",
      ].sort(),
    );
    // Warm every cached read model first: the deletion must reach them, not just disk.
    expect(ids(t.store, bob)).toEqual([earlier, doomed, kept]);
    expect(t.store.unreadSummary(bob.id).count).toBe(2);
    expect(t.store.starredMessageIds(bob.id)).toEqual([doomed]);
    expect(t.store.starredMessageIds(carol.id)).toEqual([doomed]);
    const firstUnread = () =>
      t.store.getMessageWindow(bob.id, { narrow: [], anchor: "first_unread", numBefore: 0, numAfter: 0 }).anchor;
    expect(firstUnread()).toBe(doomed);
    const outboxBefore = t.store.pushOutboxItems().length;

    await t.store.deleteMessage(alice.id, doomed);

    expect(traces(t.store, everyone, doomed)).toEqual([]);
    expect(ids(t.store, bob)).toEqual([earlier, kept]);
    expect(ids(t.store, carol)).toEqual([]);
    expect(ids(t.store, bob, [{ operator: "search", operand: "zebracorn" }])).toEqual([]);
    expect(ids(t.store, bob, [{ operator: "has", operand: "reaction" }])).toEqual([]);
    expect(ids(t.store, bob, [{ operator: "is", operand: "mentioned" }])).toEqual([kept]);
    expect(ids(t.store, owner, [{ operator: "is", operand: "starred" }])).toEqual([]);
    expect(t.store.unreadSummary(bob.id)).toMatchObject({ count: 1, mentions: [kept] });
    expect(t.store.starredMessageIds(bob.id)).toEqual([]);
    expect(t.store.starredMessageIds(carol.id)).toEqual([]);
    expect(firstUnread()).toBe(kept);
    expect(() => t.store.getMessage(bob.id, doomed)).toThrow("Invalid message(s)");
    // The notification showing it is withdrawn.
    expect(t.store.pushOutboxItems().slice(outboxBefore)).toMatchObject([
      { kind: "remove", userId: bob.id, messageIds: [doomed] },
    ]);
    expectClean(t.store);

    const store = t.reopen();
    expect(ids(store, bob)).toEqual([earlier, kept]);
    expect(traces(store, everyone, doomed)).toEqual([]);
    expectClean(store);
  });

  it("detaches the uploads it claimed without deleting them, and keeps them as long as Zulip's archive", async () => {
    const { realm, owner, alice } = setup();
    const pathId = `${realm.id}/ab/${"x".repeat(24)}/notes.txt`;
    const upload = t.store.createAttachment(
      { ownerId: alice.id, pathId, name: "notes.txt", size: 10, contentType: "text/plain", image: null },
      null,
    );
    const id = send(t.store, alice, "general", "files", `[notes](/user_uploads/${pathId})`);
    expect(internals(t.store).attachments.get(upload.id)?.messageIds).toEqual([id]);
    clock += 7 * 86_400 * 6;
    await t.store.deleteMessage(owner.id, id);
    expect(internals(t.store).attachments.get(upload.id)).toMatchObject({ messageIds: [], claimDeletedAt: clock });
    expect(t.store.attachmentForDownload(alice.id, realm.id, pathId)?.id).toBe(upload.id);
    // Unclaimed and older than the cleanup's window, but its deleted message's archive keeps it.
    expect(t.store.removeOldUnclaimedAttachments(clock)).toEqual([]);
    clock += 31 * 86_400;
    expect(t.store.removeOldUnclaimedAttachments(clock).map((a) => a.id)).toEqual([upload.id]);
    expectClean(t.store);
  });

  it("detaches exactly the claims of a topic's messages, in batches, whatever the uploads' other claims", async () => {
    const { realm, owner, alice } = setup();
    const state = internals(t.store);
    const channelId = state.channelByName.get(`${realm.id}:GENERAL`)!;
    const upload = (owner: User, name: string) => {
      const pathId = `${realm.id}/ab/${name.padEnd(24, "x")}/${name}.txt`;
      const made = t.store.createAttachment(
        { ownerId: owner.id, pathId, name: `${name}.txt`, size: 10, contentType: "text/plain", image: null },
        null,
      );
      return { id: made.id, link: `[${name}](/user_uploads/${pathId})` };
    };
    const [shared, doomedOnly, keptOnly] = [upload(alice, "shared"), upload(alice, "doomed"), upload(alice, "kept")];
    const kept = send(t.store, alice, "general", "kept", `${shared.link} ${keptOnly.link}`);
    const doomed = [1, 2, 3, 4, 5].map((n) =>
      send(t.store, alice, "general", "doomed", n % 2 === 0 ? `${shared.link} ${doomedOnly.link}` : shared.link),
    );
    // An edit drops one message's claim first: the deletion must not find it there.
    t.store.updateMessage(alice.id, doomed[1]!, { content: "no files now" });
    expect(state.attachments.get(doomedOnly.id)?.messageIds).toEqual([doomed[3]!]);
    expect(state.attachmentsByMessage.get(doomed[1]!)).toBeUndefined();
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));
    clock += 60;
    expect(await t.store.deleteTopic(owner.id, channelId, "doomed", { batchSize: 2 })).toEqual({ complete: true });
    expect(state.attachments.get(shared.id)).toMatchObject({ messageIds: [kept], claimDeletedAt: clock });
    expect(state.attachments.get(doomedOnly.id)).toMatchObject({ messageIds: [], claimDeletedAt: clock });
    expect(state.attachments.get(keptOnly.id)?.messageIds).toEqual([kept]);
    expect(state.attachments.get(keptOnly.id)?.claimDeletedAt ?? null).toBeNull();
    // Each batch tells the owners of the uploads it detached, in upload order.
    expect(events(seen, "attachment").map((e) => (e.event.type === "attachment" ? e.event.attachment.id : 0))).toEqual([
      shared.id,
      doomedOnly.id,
      shared.id,
      shared.id,
    ]);
    for (const id of doomed) expect(state.attachmentsByMessage.get(id)).toBeUndefined();
    expect([...(state.attachmentsByMessage.get(kept) ?? [])].sort()).toEqual([shared.id, keptOnly.id].sort());
    expectClean(t.store);
    expect([...(internals(t.reopen()).attachmentsByMessage.get(kept) ?? [])].sort()).toEqual(
      [shared.id, keptOnly.id].sort(),
    );
  });

  it("moves a channel's first message on, to null when its last goes, and leaves scheduled messages alone", async () => {
    const { owner, alice } = setup();
    const state = internals(t.store);
    const channelId = state.channelByName.get(`${owner.realmId}:GENERAL`)!;
    const first = send(t.store, alice, "general", "a", "1");
    const second = send(t.store, alice, "general", "b", "2");
    const scheduled = t.store.scheduleMessage(alice.id, {
      to: { type: "channel", channelId, topic: "later" },
      content: "tomorrow",
      deliverAt: clock + 86_400,
      client: "test",
    });
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));
    await t.store.deleteMessage(alice.id, first);
    expect(state.channels.get(channelId)?.firstMessageId).toBe(second);
    const [update] = events(seen, "stream");
    expect(update?.event).toMatchObject({ op: "update", property: "first_message_id", value: second });
    await t.store.deleteMessage(alice.id, second);
    expect(state.channels.get(channelId)?.firstMessageId).toBeNull();
    // The deleted message's topic is gone: nothing left to list under it.
    expect(state.bitmaps.isEmpty(key.channelTopic(channelId, "b"))).toBe(true);
    expect(state.scheduledMessages.get(scheduled.id)).toMatchObject({ delivered: false, failed: false });
    expectClean(t.store);
  });

  it("clears read bits over several writes when there are many, finishing after a crash at the next open", async () => {
    const { realm, owner, alice, bob, guest } = setup();
    const state = internals(t.store);
    const everyone = [owner, alice, bob, guest];
    const a = send(t.store, alice, "general", "t", "a");
    const b = send(t.store, alice, "general", "t", "b");
    // Read by all, as the data generator marks whole ranges (guest never received them).
    state.write(() => {
      for (const u of everyone) state.bitmaps.addRange(key.userFlag(u.id, "read"), a, b + 1);
    });
    // One read bitmap per write: the deletion's write, then three more before it resolves.
    await t.store.deleteMessage(owner.id, a, { readBitsPerWrite: 1 });
    expect(traces(t.store, everyone, a)).toEqual([]);
    expect(pendingReadPurges(state)).toEqual([]);

    // Cut short after the deletion's write (as by a crash): verify allows what is pending,
    // and the next open finishes it.
    deleteMessage(state, owner.id, b, 1);
    expect(pendingReadPurges(state)).toEqual([{ realmId: realm.id, messageIds: [b], afterUserId: owner.id }]);
    expect(traces(t.store, everyone, b).sort()).toEqual(["Alice:read", "Bob:read", "Gus Guest:read"]);
    expectClean(t.store);
    const store = t.reopen();
    expect(traces(store, everyone, b)).toEqual([]);
    expect(pendingReadPurges(internals(store))).toEqual([]);
    expectClean(store);
  });

  it("runs read purges one write a turn, one loop at a time, never in the turn of the write that left them", async () => {
    const { owner, alice, bob, guest } = setup();
    const state = internals(t.store);
    const everyone = [owner, alice, bob, guest];
    const a = send(t.store, alice, "general", "t", "a");
    const b = send(t.store, alice, "general", "t", "b");
    const c = send(t.store, alice, "general", "u", "c");
    state.write(() => {
      for (const u of everyone) state.bitmaps.addRange(key.userFlag(u.id, "read"), a, b + 1);
    });
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const writeTurns: number[] = [];
    const write = state.write.bind(state);
    state.write = (fn) => {
      writeTurns.push(turn);
      return write(fn);
    };
    // Two deletions, each leaving three readers' bits to its purge: each used to start a loop of its own.
    const first = t.store.deleteMessage(owner.id, a, { readBitsPerWrite: 1 });
    const second = t.store.deleteMessage(owner.id, b, { readBitsPerWrite: 1 });
    await Promise.all([first, second]);
    expect(traces(t.store, everyone, a)).toEqual([]);
    expect(traces(t.store, everyone, b)).toEqual([]);
    // The two deletions' own writes share the caller's turn; no purge write shares a turn with another.
    const purgeTurns = writeTurns.slice(2);
    expect(purgeTurns.length).toBeGreaterThanOrEqual(3);
    expect(new Set([...writeTurns.slice(0, 1), ...purgeTurns]).size).toBe(purgeTurns.length + 1);

    // A purge left pending (as by a crash) is finished after a move, in a later turn than the move's write.
    state.write(() => state.bitmaps.addRange(key.userFlag(bob.id, "read"), c, c + 1));
    deleteMessage(state, owner.id, c, 0);
    expect(pendingReadPurges(state)).not.toEqual([]);
    t.store.updateMessage(owner.id, send(t.store, alice, "general", "v", "d"), {
      topic: "w",
      propagateMode: "change_all",
    });
    expect(pendingReadPurges(state)).not.toEqual([]);
    while (pendingReadPurges(state).length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(traces(t.store, everyone, c)).toEqual([]);
    ticking = false;
    expectClean(t.store);
  });

  it("leaves nothing of a message moved from another channel: granted and withdrawn rows, bits of lost rows", async () => {
    const { realm, owner, alice, bob, guest, secret } = setup();
    const everyone = [owner, alice, bob, guest];
    // Alice joins the protected channel after the message: the move grants her a row.
    t.store.unsubscribe(owner.id, ["secret"], [alice.id]);
    const id = send(t.store, bob, "general", "t", "hi @**Alice**");
    t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [alice.id] });
    t.store.updateFlags(bob.id, [id], "starred", "add");
    t.store.updateMessage(owner.id, id, { channelId: secret.id, sendNotificationToNewThread: false });
    const state = internals(t.store);
    // Bob lost his row (his star stays, invisible); Alice's row was granted.
    expect(state.bitmaps.get(key.userFlag(alice.id, "granted")).has(id)).toBe(true);
    expect(traces(t.store, everyone, id)).toContain("Bob:starred");
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));
    await t.store.deleteMessage(owner.id, id);
    const bits = (u: User) =>
      (["granted", "withdrawn"] as const).filter((f) => state.bitmaps.get(key.userFlag(u.id, f)).has(id));
    expect(everyone.flatMap(bits)).toEqual([]);
    expect(traces(t.store, everyone, id)).toEqual([]);
    // Protected history: its subscribers with a row (Alice's granted one, the owner's own).
    expect(events(seen, "delete_message")[0]?.to).toEqual([owner.id, alice.id].sort());
    expect(realm.id).toBeGreaterThan(0);
    expectClean(t.store);
  });

  it("does not tell a user of moved messages whose derived rows the move withdrew", async () => {
    const { realm, owner, alice, general } = setup();
    const carol = t.store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
    t.store.subscribe(owner.id, { channels: [{ name: "source" }], principals: [owner.id, alice.id] });
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [carol.id] });
    // The first sent while Carol was in general (her interval there covers it), both moved there
    // after she left: Zulip gives her no row, so the interval's row is withdrawn (from one of the
    // two: not every one), and she hears nothing of the deletion.
    const first = send(t.store, alice, "source", "t", "one");
    t.store.unsubscribe(owner.id, ["general"], [carol.id]);
    send(t.store, alice, "source", "t", "two");
    t.store.updateMessage(owner.id, first, {
      channelId: general.id,
      propagateMode: "change_all",
      sendNotificationToNewThread: false,
    });
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));
    expect(await t.store.deleteTopic(owner.id, general.id, "t")).toEqual({ complete: true });
    const to = events(seen, "delete_message")[0]?.to;
    expect(to).toContain(alice.id);
    expect(to).not.toContain(carol.id);
    expectClean(t.store);
  });

  it("tells a user who kept a row for one of a moved batch whose other rows their interval lost", async () => {
    const { realm, owner, alice, general } = setup();
    const carol = t.store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
    t.store.subscribe(owner.id, { channels: [{ name: "source" }], principals: [owner.id, alice.id] });
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [carol.id] });
    // Carol's interval in general covers all three; she received the first, the two sent
    // elsewhere are withdrawn from her when they move in after she left. Her one row makes
    // her a row holder: a non-guest one of a public channel, so she hears of the deletion.
    send(t.store, alice, "general", "t", "one");
    const moved = [send(t.store, alice, "source", "t", "two"), send(t.store, alice, "source", "t", "three")];
    t.store.unsubscribe(owner.id, ["general"], [carol.id]);
    t.store.updateMessage(owner.id, moved[0]!, {
      channelId: general.id,
      propagateMode: "change_all",
      sendNotificationToNewThread: false,
    });
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));
    expect(await t.store.deleteTopic(owner.id, general.id, "t")).toEqual({ complete: true });
    expect(events(seen, "delete_message")[0]?.to).toContain(carol.id);
    expectClean(t.store);
  });

  it("changes nothing when its write fails", async () => {
    let fail = false;
    clock = START;
    t = tempStore({
      now: () => clock,
      commitHook: () => {
        if (fail) throw new Error("disk gone");
      },
    });
    const { alice, bob } = seedRealm(t.store);
    const id = send(t.store, alice, "general", "t", "keep me @**Bob**");
    t.store.updateFlags(bob.id, [id], "starred", "add");
    expect(ids(t.store, bob)).toEqual([id]);
    fail = true;
    await expect(t.store.deleteMessage(alice.id, id)).rejects.toThrow();
    fail = false;
    expect(ids(t.store, bob)).toEqual([id]);
    expect(traces(t.store, [bob], id).sort()).toEqual(["Bob:mentioned", "Bob:starred"]);
    expectClean(t.store);
  });
});

describe("delete_message events", () => {
  it("go to Zulip's audience: subscribers and non-guest row holders, protected history's holders, DM members", async () => {
    const { realm, owner, alice, bob, guest } = setup();
    const carol = t.store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));
    const sorted = (...users: User[]) => users.map((u) => u.id).sort();

    // Public: active subscribers, plus Carol through her historical row; not the guest.
    const pub = send(t.store, alice, "general", "Mixed Case", "x");
    t.store.updateFlags(carol.id, [pub], "starred", "add");
    await t.store.deleteMessage(owner.id, pub);
    expect(events(seen, "delete_message").at(-1)).toEqual({
      event: {
        type: "delete_message",
        realmId: realm.id,
        messageIds: [pub],
        channel: { channelId: expect.any(Number), topic: "mixed case" },
      },
      to: sorted(owner, alice, bob, carol),
    });

    // Protected history: subscribers who received it (not one who joined later), and the actor.
    const prot = send(t.store, alice, "secret", "t", "x");
    t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [bob.id] });
    await t.store.deleteMessage(alice.id, prot);
    expect(events(seen, "delete_message").at(-1)?.to).toEqual(sorted(owner, alice));

    // Private with shared history: every subscriber.
    t.store.subscribe(owner.id, {
      channels: [{ name: "shared" }],
      principals: [owner.id, alice.id],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
    });
    const shared = send(t.store, alice, "shared", "t", "x");
    t.store.subscribe(owner.id, { channels: [{ name: "shared" }], principals: [guest.id] });
    await t.store.deleteMessage(alice.id, shared);
    expect(events(seen, "delete_message").at(-1)?.to).toEqual(sorted(owner, alice, guest));

    // Direct messages: the participants.
    const dm = t.store.sendMessage({ senderId: alice.id, to: { type: "direct", users: [bob.id] }, content: "x" }).id;
    expect(t.store.recentConversations(bob.id)).toEqual([{ maxMessageId: dm, userIds: [alice.id] }]);
    await t.store.deleteMessage(alice.id, dm);
    expect(t.store.recentConversations(bob.id)).toEqual([]);
    expect(events(seen, "delete_message").at(-1)).toEqual({
      event: { type: "delete_message", realmId: realm.id, messageIds: [dm], channel: null },
      to: sorted(alice, bob),
    });
  });
});

describe("POST /streams/{id}/delete_topic", () => {
  it("deletes newest first in atomic batches, answering complete only when nothing is left", async () => {
    const { owner, alice, bob } = setup();
    const state = internals(t.store);
    const channelId = state.channelByName.get(`${owner.realmId}:GENERAL`)!;
    const topic = [1, 2, 3, 4, 5].map((n) => send(t.store, alice, "general", "Doomed", `m${n}`));
    const other = send(t.store, alice, "general", "other", "stays");
    t.store.setTopicPolicy(bob.id, channelId, "doomed", 3);
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));

    expect(await t.store.deleteTopic(owner.id, channelId, "doomed", { batchSize: 2, timeBudgetMs: 0 })).toEqual({
      complete: false,
    });
    expect(ids(t.store, owner)).toEqual([...topic.slice(0, 3), other]);
    expect(await t.store.deleteTopic(owner.id, channelId, "DOOMED", { batchSize: 2, timeBudgetMs: 0 })).toEqual({
      complete: false,
    });
    expect(state.userTopics.policyOf(alice.id, channelId, "doomed")).toBe(3);
    // The last batch empties the topic: its policies (Bob's, and Alice's automatic
    // follow when she started it) go with it, in that write.
    expect(await t.store.deleteTopic(owner.id, channelId, "doomed", { batchSize: 2, timeBudgetMs: 0 })).toEqual({
      complete: true,
    });
    expect(
      events(seen, "delete_message").map((e) => (e.event.type === "delete_message" ? e.event.messageIds : [])),
    ).toEqual([topic.slice(3), topic.slice(1, 3), topic.slice(0, 1)]);
    expect(state.userTopics.policyOf(bob.id, channelId, "doomed")).toBe(0);
    expect(state.userTopics.policyOf(alice.id, channelId, "doomed")).toBe(0);
    expect(events(seen, "user_topic").map((e) => e.to)).toEqual([[alice.id], [bob.id]]);
    expect(ids(t.store, owner)).toEqual([other]);
    // With a budget, one call does it all.
    const again = [1, 2, 3].map((n) => send(t.store, alice, "general", "again", `a${n}`));
    expect(await t.store.deleteTopic(owner.id, channelId, "again", { batchSize: 1 })).toEqual({ complete: true });
    expect(ids(t.store, owner)).toEqual([other]);
    expect(again).toHaveLength(3);
    expectClean(t.store);
  });

  it("sizes batches from Zulip's 100 toward the loop budget, growing at most twofold, capped", () => {
    expect(DELETE_TOPIC_BATCH_SIZE).toBe(100);
    expect(DELETE_TOPIC_BATCH_TARGET_MS).toBe(12);
    // 100 in 2 ms: 600 would fit 12 ms, but one quick batch is not much of a measure
    // (its cost per message varies with the GC pause that falls in it).
    expect(nextTopicBatchSize(100, 100, 2)).toBe(200);
    expect(nextTopicBatchSize(400, 400, 12)).toBe(400);
    expect(nextTopicBatchSize(400, 400, 16)).toBe(300);
    expect(nextTopicBatchSize(400, 400, 1)).toBe(800);
    expect(nextTopicBatchSize(800, 800, 1)).toBe(DELETE_TOPIC_MAX_BATCH_SIZE);
    // Never below Zulip's 100, however slow; an empty batch says nothing.
    expect(nextTopicBatchSize(400, 400, 500)).toBe(100);
    expect(nextTopicBatchSize(300, 0, 0)).toBe(300);
    expect(nextTopicBatchSize(100, 100, 0)).toBe(200);
    // Read bitmaps one write clears (the rest in further writes): ~10 ms of CPU either way.
    expect(readKeysPerWrite(1)).toBe(1000);
    expect(readKeysPerWrite(1000)).toBe(500);
  });

  it("deletes a topic past one batch in contiguous atomic batches, read bits and all, in no extra write", async () => {
    const { owner, alice, bob } = setup();
    const state = internals(t.store);
    const channelId = state.channelByName.get(`${owner.realmId}:GENERAL`)!;
    const kept = send(t.store, alice, "general", "kept", "before zebracorn");
    const topic = t.store.batch(() =>
      Array.from({ length: 260 }, (_, i) => send(t.store, alice, "general", "big", `zebracorn ${i}`)),
    );
    const after = send(t.store, bob, "general", "kept", "after zebracorn");
    // Read by everyone, as the data generator marks whole ranges (the guest received none).
    const everyone = [owner, alice, bob];
    state.write(() => {
      for (const u of everyone) state.bitmaps.addRange(key.userFlag(u.id, "read"), kept, after + 1);
    });
    t.store.updateFlags(bob.id, [topic[7]!, topic[250]!], "starred", "add");
    const seen: EventBatch[] = [];
    t.store.onEvents((b) => seen.push(b));
    let writes = 0;
    const write = state.write.bind(state);
    state.write = ((fn: Parameters<typeof write>[0]) => {
      writes++;
      return write(fn);
    }) as typeof state.write;

    expect(await t.store.deleteTopic(owner.id, channelId, "big")).toEqual({ complete: true });
    const batches = events(seen, "delete_message").map((e) =>
      e.event.type === "delete_message" ? e.event.messageIds : [],
    );
    // Newest first, Zulip's 100 before any measure, each batch one write and one event.
    expect(batches[0]).toEqual(topic.slice(-DELETE_TOPIC_BATCH_SIZE));
    expect(batches.flatMap((b) => b).sort((a, b) => a - b)).toEqual(topic);
    for (let i = 1; i < batches.length; i++)
      expect(batches[i]![batches[i]!.length - 1]! < batches[i - 1]![0]!).toBe(true);
    // The read purge's first share rides on the last batch's write.
    expect(writes).toBe(batches.length);
    expect(pendingReadPurges(state)).toEqual([]);
    for (const id of [topic[0]!, topic[7]!, topic[250]!]) expect(traces(t.store, [owner, alice, bob], id)).toEqual([]);
    expect(ids(t.store, bob)).toEqual([kept, after]);
    expect(ids(t.store, bob, [{ operator: "search", operand: "zebracorn" }])).toEqual([kept, after]);
    expectClean(t.store);
    expectClean(t.reopen());
  });

  it("leaves read bits past the last batch's share to further writes, and finishes them before answering", async () => {
    const { owner, alice, bob } = setup();
    const state = internals(t.store);
    const channelId = state.channelByName.get(`${owner.realmId}:GENERAL`)!;
    const topic = [1, 2, 3].map((n) => send(t.store, alice, "general", "read", `m${n}`));
    const readers = [owner, alice, bob];
    state.write(() => {
      for (const u of readers) state.bitmaps.addRange(key.userFlag(u.id, "read"), topic[0]!, topic[2]! + 1);
    });
    let writes = 0;
    const write = state.write.bind(state);
    state.write = ((fn: Parameters<typeof write>[0]) => {
      writes++;
      return write(fn);
    }) as typeof state.write;
    // One read bitmap a write: the batch's write clears one, two more writes the rest.
    expect(await t.store.deleteTopic(owner.id, channelId, "read", { readBitsPerWrite: 1 })).toEqual({
      complete: true,
    });
    expect(writes).toBe(3);
    expect(pendingReadPurges(state)).toEqual([]);
    for (const id of topic) expect(traces(t.store, readers, id)).toEqual([]);
    expectClean(t.store);
  });

  it("gives each of its writes, the read purge's too, a turn of the event loop of its own", async () => {
    const { owner, alice, bob } = setup();
    const state = internals(t.store);
    const channelId = state.channelByName.get(`${owner.realmId}:GENERAL`)!;
    const topic = [1, 2, 3].map((n) => send(t.store, alice, "general", "turns", `m${n}`));
    state.write(() => {
      for (const u of [owner, alice, bob]) state.bitmaps.addRange(key.userFlag(u.id, "read"), topic[0]!, topic[2]! + 1);
    });
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    const turns: number[] = [];
    const write = state.write.bind(state);
    state.write = ((fn: Parameters<typeof write>[0]) => {
      turns.push(turn);
      return write(fn);
    }) as typeof state.write;
    // Batches of one, one read bitmap a write: three batches, then two purge writes. Begun
    // in the loop's poll phase, as a request's handler is: from there, one setImmediate
    // runs the next batch in the same loop iteration, before any other I/O.
    const { deletion } = await new Promise<{ deletion: Promise<unknown> }>((resolve) =>
      stat(import.meta.filename, () => {
        const deletion = t.store.deleteTopic(owner.id, channelId, "turns", { batchSize: 1, readBitsPerWrite: 1 });
        setImmediate(tick);
        resolve({ deletion });
      }),
    );
    await deletion;
    ticking = false;
    expect(turns.length).toBe(5);
    for (let i = 1; i < turns.length; i++) expect(turns[i]).toBeGreaterThan(turns[i - 1]!);
    expect(pendingReadPurges(state)).toEqual([]);
    expectClean(t.store);
  });

  it("takes turns with a read purge already running: no write of either shares a turn with another", async () => {
    const { realm, owner, alice, bob } = setup();
    const state = internals(t.store);
    const channelId = state.channelByName.get(`${owner.realmId}:GENERAL`)!;
    const readers = [owner, alice, bob];
    for (let i = 0; i < 4; i++)
      readers.push(t.store.createUser({ realmId: realm.id, email: `r${i}@test.dev`, fullName: `Reader ${i}` }));
    const doomed = send(t.store, alice, "general", "one", "read by all");
    const topic = [1, 2, 3, 4].map((n) => send(t.store, alice, "general", "turns", `m${n}`));
    state.write(() => {
      for (const u of readers) state.bitmaps.add(key.userFlag(u.id, "read"), doomed);
    });
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    const turns: number[] = [];
    const write = state.write.bind(state);
    state.write = ((fn: Parameters<typeof write>[0]) => {
      turns.push(turn);
      return write(fn);
    }) as typeof state.write;
    // From the poll phase, as requests are: the message's deletion leaves a purge of a
    // reader a write; the topic's deletion starts in the same turn, a message a batch.
    const { done } = await new Promise<{ done: Promise<unknown> }>((resolve) =>
      stat(import.meta.filename, () => {
        const purged = t.store.deleteMessage(owner.id, doomed, { readBitsPerWrite: 1 });
        const deleted = t.store.deleteTopic(owner.id, channelId, "turns", { batchSize: 1, readBitsPerWrite: 0 });
        setImmediate(tick);
        resolve({ done: Promise.all([purged, deleted]) });
      }),
    );
    await done;
    ticking = false;
    // The two requests' own writes share their turn; every later one has a turn of its own.
    expect(turns[0]).toBe(turns[1]);
    const later = turns.slice(2);
    expect(later.length).toBeGreaterThanOrEqual(readers.length - 1 + topic.length - 1);
    for (let i = 1; i < later.length; i++) expect(later[i]).toBeGreaterThan(later[i - 1]!);
    for (const id of [doomed, ...topic]) expect(traces(t.store, readers, id)).toEqual([]);
    expectClean(t.store);
  });

  it("reads a batch's bitmaps ahead of its write (warmTopicBatch), moved-in topics' readers' too", async () => {
    const { owner, alice, bob, general } = setup();
    const state = internals(t.store);
    t.store.subscribe(owner.id, { channels: [{ name: "source" }], principals: [owner.id, alice.id, bob.id] });
    const topic = [1, 2, 3, 4, 5].map((n) => send(t.store, alice, "source", "warm", `zebracorn ${n} @**Bob**`));
    t.store.updateFlags(bob.id, [topic[1]!, topic[4]!], "starred", "add");
    t.store.updateFlags(owner.id, [topic[3]!], "collapsed", "add");
    t.store.updateMessage(owner.id, topic[0]!, {
      channelId: general.id,
      propagateMode: "change_all",
      sendNotificationToNewThread: false,
    });
    const ctx = { state, received: receivedSetsOf(t.store), user: owner };
    // Cold, as after a restart: the batch's write reads chunks from disk; warmed first, none.
    const chunkReads = () => {
      const chunks = state.tables.bitmapChunks;
      let reads = 0;
      const wrap = <K extends "getRange" | "getKeys" | "doesExist" | "get" | "getBinary">(name: K) => {
        const original = chunks[name].bind(chunks) as (...a: unknown[]) => unknown;
        (chunks as unknown as Record<K, (...a: unknown[]) => unknown>)[name] = (...a: unknown[]) => {
          reads++;
          return original(...a);
        };
        return () => void ((chunks as unknown as Record<K, unknown>)[name] = original);
      };
      const restore = (["getRange", "getKeys", "doesExist", "get", "getBinary"] as const).map(wrap);
      return () => {
        restore.forEach((r) => r());
        return reads;
      };
    };
    const coldBatch = (warm: boolean): number => {
      state.bitmaps.clearCache();
      if (warm) for (const _ of warmTopicBatch(ctx, general.id, "warm", 2));
      const stop = chunkReads();
      const step = deleteTopicBatch(ctx, general.id, "warm", 2, 0);
      const reads = stop();
      expect(step).toEqual({ deleted: 2, complete: false });
      return reads;
    };
    expect(coldBatch(false)).toBeGreaterThan(0);
    expect(coldBatch(true)).toBe(0);
    expect(await t.store.deleteTopic(owner.id, general.id, "warm")).toEqual({ complete: true });
    for (const id of topic) expect(traces(t.store, [owner, alice, bob], id)).toEqual([]);
    expectClean(t.store);
  });

  it("stops a read purge's write once its time is up, unless told a number of keys", () => {
    const { owner, alice, bob } = setup();
    const state = internals(t.store);
    const id = send(t.store, alice, "general", "t", "read by all");
    const readers = [owner, alice, bob];
    state.write(() => {
      for (const u of readers) state.bitmaps.add(key.userFlag(u.id, "read"), id);
    });
    deleteMessage(state, owner.id, id, 0);
    expect(pendingReadPurges(state)).toHaveLength(1);
    // A clock that says each key took a second: one key a write.
    let now = 0;
    const slow = () => (now += 1000);
    let writes = 0;
    do writes++;
    while (continueReadPurge(state, null, slow));
    expect(writes).toBe(readers.length);
    for (const u of readers) expect(state.bitmaps.get(key.userFlag(u.id, "read")).has(id)).toBe(false);
    expectClean(t.store);
  });

  it("is for administrators, in channels they can read, and deletes only what they may see", async () => {
    const { owner, alice, bob } = setup();
    const state = internals(t.store);
    const secretId = state.channelByName.get(`${owner.realmId}:SECRET`)!;
    const generalId = state.channelByName.get(`${owner.realmId}:GENERAL`)!;
    send(t.store, alice, "general", "t", "x");
    await expect(t.store.deleteTopic(alice.id, generalId, "t")).rejects.toThrow(
      "Must be an organization administrator",
    );
    await expect(t.store.deleteTopic(owner.id, 99_999, "t")).rejects.toThrow("Invalid channel ID");
    // A name longer than any topic names none (and is no key LMDB could hold).
    expect(await t.store.deleteTopic(owner.id, generalId, "x".repeat(5000))).toEqual({ complete: true });

    // Protected history: the owner sees only what they received; the rest, and Alice's
    // policy for it, stay.
    t.store.unsubscribe(owner.id, ["secret"]);
    const hidden = send(t.store, alice, "secret", "plans", "before the owner came back");
    await expect(t.store.deleteTopic(owner.id, secretId, "plans")).rejects.toThrow("Invalid channel ID");
    // A subscriber brings them back (one without the channel's content cannot rejoin it, as in Zulip).
    t.store.subscribe(alice.id, { channels: [{ name: "secret" }], principals: [owner.id, bob.id] });
    const seenByOwner = send(t.store, alice, "secret", "plans", "after");
    t.store.setTopicPolicy(alice.id, secretId, "plans", 1);
    t.store.setTopicPolicy(bob.id, secretId, "plans", 1);
    expect(await t.store.deleteTopic(owner.id, secretId, "plans")).toEqual({ complete: true });
    expect(ids(t.store, alice, [{ operator: "channel", operand: "secret" }])).toEqual([hidden]);
    expect(getMessageRecord(state.tables, seenByOwner)).toBeUndefined();
    expect(state.userTopics.policyOf(alice.id, secretId, "plans")).toBe(1);
    expect(state.userTopics.policyOf(bob.id, secretId, "plans")).toBe(0);
    expectClean(t.store);
  });
});
