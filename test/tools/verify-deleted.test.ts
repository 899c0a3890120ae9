/**
 * verify after deletions: a deleted message may leave no trace, so every index, every
 * user-state bitmap and every record naming a message must name a stored one. Corrupted
 * on purpose here, then found by Store.verify and by `parley verify` (exit 1, each
 * finding named). Needs `npm run build` (the CLI runs from dist).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../src/engine/internal.js";
import { key } from "../../src/engine/index/keys.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

const CLI = fileURLToPath(new URL("../../dist/tools/parley.js", import.meta.url));

let t: TempStore;
afterEach(() => t?.cleanup());

describe("verify finds traces of deleted messages", () => {
  it("is clean after a deletion, and reports each reference to a message without a record", async () => {
    t = tempStore();
    const { realm, owner, alice } = seedRealm(t.store);
    const send = (content: string) =>
      t.store.sendMessage({ senderId: alice.id, to: { type: "channel", channel: "general", topic: "t" }, content }).id;
    const pathId = `${realm.id}/cd/${"y".repeat(24)}/a.txt`;
    const upload = t.store.createAttachment(
      { ownerId: alice.id, pathId, name: "a.txt", size: 1, contentType: "text/plain", image: null },
      null,
    );
    const first = send("first");
    const gone = send(`gone [a](/user_uploads/${pathId})`);
    const kept = send("kept");
    t.store.updateFlags(owner.id, [gone, kept], "starred", "add");
    await t.store.deleteMessage(owner.id, gone);
    expect(t.store.verify()).toMatchObject({ messages: 2, differences: [], problems: [] });

    const state = internals(t.store);
    const general = state.channels.get(state.channelByName.get(`${realm.id}:GENERAL`)!)!;
    state.write((ctx) => {
      state.bitmaps.add(key.userFlag(owner.id, "starred"), gone);
      state.bitmaps.add(key.userFlag(alice.id, "read"), 999);
      state.bitmaps.add(key.channelTopic(general.id, "t"), gone);
      state.tables.messageMeta.putSync(gone, [general.id, "t"]);
      state.tables.attachments.putSync(upload.id, { ...upload, messageIds: [gone] });
      state.tables.channels.putSync(general.id, { ...general, firstMessageId: gone });
      ctx.changed({ kind: "message", id: gone, realmId: realm.id, fields: ["deleted"] });
      ctx.changed({ kind: "attachment", id: upload.id });
      ctx.changed({ kind: "channel", id: general.id });
      ctx.afterCommit(() => {
        state.indexAttachment({ ...upload, messageIds: [gone] });
        state.indexChannel({ ...general, firstMessageId: gone });
      });
    });
    const report = t.store.verify();
    expect(report.differences.map((d) => [d.key, d.extra])).toEqual(
      expect.arrayContaining([
        [key.userFlag(owner.id, "starred"), [gone]],
        [key.userFlag(alice.id, "read"), [999]],
        [key.channelTopic(general.id, "t"), [gone]],
      ]),
    );
    expect(report.problems).toEqual(
      expect.arrayContaining([
        `message_meta has message ${gone}, which has no record`,
        `attachment ${upload.id} is claimed by message ${gone}, which has no record`,
        `channel ${general.id} names message ${gone} as its first, which has no record`,
      ]),
    );
    expect(first).toBeLessThan(kept);

    t.store.close();
    const cli = spawnSync(process.execPath, [CLI, "verify", "--data", t.dir], { encoding: "utf8", timeout: 60_000 });
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain("DIFFERENCES FOUND");
    expect(cli.stdout).toContain(`${key.userFlag(owner.id, "starred")}: 0 missing (e.g. ), 1 extra (e.g. ${gone})`);
    expect(cli.stdout).toContain(`attachment ${upload.id} is claimed by message ${gone}, which has no record`);
    t.reopen();
  });
});
