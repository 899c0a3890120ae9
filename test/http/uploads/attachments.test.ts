/**
 * Attachments over HTTP: a message that links an upload claims it (and only one the
 * sender may see); has:attachment and has:image follow; GET /attachments lists the
 * caller's own with the messages linking them and the upload space used; DELETE
 * removes record and bytes; attachment add/update/remove events reach the owner only;
 * the periodic cleanup removes old unclaimed uploads; images get a thumbnail off the
 * request path and Zulip's preview markup in the rendered message.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";
import { filesOnDisk, raw, upload } from "./support.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

async function uploaded(
  user: User,
  name: string,
  data: Buffer | string,
  type?: string,
): Promise<{ url: string; pathId: string }> {
  const r = await upload(s, user, [{ name, data, ...(type === undefined ? {} : { type }) }]);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const url = r.body["url"] as string;
  return { url, pathId: url.slice("/user_uploads/".length) };
}

async function sendVia(user: User, params: Record<string, unknown>): Promise<number> {
  const r = await s.call(user, "POST", "/messages", params);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body["id"] as number;
}

async function queue(user: User): Promise<string> {
  const r = await s.call(user, "POST", "/register", { event_types: JSON.stringify(["attachment", "message"]) });
  return r.body["queue_id"] as string;
}

async function events(user: User, queueId: string): Promise<Record<string, unknown>[]> {
  const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
  return (r.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] === "attachment");
}

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 90 } } })
    .png()
    .toBuffer();

describe("claiming", () => {
  it("claims the uploads a message links, tells the owner, and lists them with their messages", async () => {
    const { alice, bob } = s.seed;
    const qAlice = await queue(alice);
    const qBob = await queue(bob);
    const file = await uploaded(alice, "notes.txt", "some notes");
    const added = await events(alice, qAlice);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      op: "add",
      attachment: { name: "notes.txt", path_id: file.pathId, size: 10, message_ids: [] },
    });
    const id = await sendVia(alice, {
      type: "stream",
      to: "general",
      topic: "files",
      content: `see [notes.txt](${file.url})`,
    });
    const all = await events(alice, qAlice);
    expect(all[1]).toMatchObject({
      type: "attachment",
      op: "update",
      attachment: { path_id: file.pathId, message_ids: [id] },
    });
    expect(typeof all[1]!["upload_space_used"]).toBe("number");
    // Only the owner hears about their files.
    expect(await events(bob, qBob)).toEqual([]);
    const list = await s.call(alice, "GET", "/attachments");
    expect(list.status).toBe(200);
    const mine = (list.body["attachments"] as Record<string, unknown>[]).find((a) => a["path_id"] === file.pathId)!;
    expect(mine).toMatchObject({ name: "notes.txt", size: 10, message_ids: [id] });
    expect(typeof mine["id"]).toBe("number");
    expect(mine["create_time"]).toBe(
      s.t.store.attachments(alice.id).find((a) => a.pathId === file.pathId)!.createTime * 1000,
    );
    expect(list.body["upload_space_used"]).toBe(s.t.store.uploadSpaceUsed(s.seed.realm.id));
    expect(
      ((await s.call(bob, "GET", "/attachments")).body["attachments"] as unknown[]).some(
        (a) => (a as { path_id: string }).path_id === file.pathId,
      ),
    ).toBe(false);
  });

  it("has:attachment matches messages that claimed an upload, not links to missing or foreign files", async () => {
    const { alice, bob } = s.seed;
    const file = await uploaded(alice, "a.txt", "a");
    const secretOfBob = await uploaded(bob, "bobs.txt", "b");
    const claimed = await sendVia(alice, { type: "stream", to: "general", topic: "has", content: `[a](${file.url})` });
    const missing = await sendVia(alice, {
      type: "stream",
      to: "general",
      topic: "has",
      content: `[gone](/user_uploads/${s.seed.realm.id}/ab/AAAAAAAAAAAAAAAAAAAAAAAA/gone.txt)`,
    });
    // alice may not see bob's unshared upload: her message links it but claims nothing.
    const foreign = await sendVia(alice, {
      type: "stream",
      to: "general",
      topic: "has",
      content: `[b](${secretOfBob.url})`,
    });
    const narrow = JSON.stringify([
      { operator: "topic", operand: "has" },
      { operator: "has", operand: "attachment" },
    ]);
    const r = await s.call(alice, "GET", "/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow });
    const ids = (r.body["messages"] as { id: number }[]).map((m) => m.id);
    expect(ids).toContain(claimed);
    expect(ids).not.toContain(missing);
    expect(ids).not.toContain(foreign);
    // And bob's file stays his: the link did not share it.
    expect((await raw(s, "GET", secretOfBob.url, { user: alice })).status).toBe(404);
  });

  it("previews an uploaded image with Zulip's markup, thumbnail made off the request path, and has:image follows", async () => {
    const { alice, bob } = s.seed;
    const image = await uploaded(alice, "chart.png", await png(1600, 900), "image/png");
    const id = await sendVia(alice, {
      type: "stream",
      to: "general",
      topic: "img",
      content: `[chart.png](${image.url})`,
    });
    const got = await s.call(bob, "GET", `/messages/${id}`);
    const html = (got.body["message"] as { content: string }).content;
    expect(html).toContain(
      `<div class="message_inline_image"><a href="${image.url}" title="chart.png"><img data-original-content-type="image/png" data-original-dimensions="1600x900" src="/user_uploads/thumbnail/${image.pathId}/840x560.webp"></a></div>`,
    );
    const narrow = JSON.stringify([{ operator: "has", operand: "image" }]);
    const images = await s.call(bob, "GET", "/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow });
    expect((images.body["messages"] as { id: number }[]).map((m) => m.id)).toContain(id);
    // The thumbnail: a WebP within 840x560, served to whoever may see the original.
    await s.server.uploads.thumbnails.idle();
    const thumb = await raw(s, "GET", `/user_uploads/thumbnail/${image.pathId}/840x560.webp`, { user: bob });
    expect(thumb.status).toBe(200);
    expect(thumb.headers["content-type"]).toBe("image/webp");
    const meta = await sharp(thumb.body).metadata();
    expect(meta).toMatchObject({ format: "webp", width: 840, height: 473 });
    expect(
      (await raw(s, "GET", `/user_uploads/thumbnail/${image.pathId}/840x560.webp`, { user: s.seed.guest })).status,
    ).toBe(404);
    expect((await raw(s, "GET", `/user_uploads/thumbnail/${image.pathId}/100x100.png`, { user: bob })).status).toBe(
      404,
    );
  });

  it("renders a thumbnail on demand when asked before the queue got to it", async () => {
    const { alice } = s.seed;
    const image = await uploaded(alice, "fresh.png", await png(64, 48), "image/png");
    const thumb = await raw(s, "GET", `/user_uploads/thumbnail/${image.pathId}/840x560.webp`, { user: alice });
    expect(thumb.status).toBe(200);
    // Never enlarged.
    expect(await sharp(thumb.body).metadata()).toMatchObject({ width: 64, height: 48 });
  });
});

describe("deleting and cleanup", () => {
  it("deletes the owner's own upload (record, bytes, event), and answers Invalid attachment to anyone else", async () => {
    const { alice, bob } = s.seed;
    const file = await uploaded(alice, "delete-me.txt", "bye");
    const id = s.t.store.attachments(alice.id).find((a) => a.pathId === file.pathId)!.id;
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "DELETE", `/attachments/${id}`),
      400,
      "BAD_REQUEST",
      "Invalid attachment",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", "/attachments/999999"),
      400,
      "BAD_REQUEST",
      "Invalid attachment",
    );
    const q = await queue(alice);
    const before = filesOnDisk(s).length;
    const r = await s.call(alice, "DELETE", `/attachments/${id}`);
    expect(r.status).toBe(200);
    expect(filesOnDisk(s).length).toBe(before - 1);
    expect((await raw(s, "GET", file.url, { user: alice })).status).toBe(404);
    expect(await events(alice, q)).toEqual([expect.objectContaining({ op: "remove", attachment: { id } })]);
  });

  it("removes uploads no message claimed once they are older than the window, keeping claimed ones and those of scheduled messages", async () => {
    const { alice } = s.seed;
    const old = await uploaded(alice, "old.txt", "old");
    const kept = await uploaded(alice, "kept.txt", "kept");
    const scheduled = await uploaded(alice, "later.txt", "later");
    await sendVia(alice, { type: "direct", to: JSON.stringify([alice.id]), content: `[k](${kept.url})` });
    s.t.store.scheduleMessage(alice.id, {
      to: { type: "direct", userIds: [alice.id] },
      content: `[l](${scheduled.url})`,
      deliverAt: Math.floor(Date.now() / 1000) + 86_400 * 365,
      client: "test",
    });
    // Nothing is old enough yet.
    expect(await s.server.uploads.removeOldUnclaimed(s.t.store)).toBe(0);
    // A window of -1 weeks makes every unclaimed upload "old".
    const removed = await s.server.uploads.removeOldUnclaimed(s.t.store, -1);
    expect(removed).toBeGreaterThan(0);
    const left = s.t.store.attachments(alice.id).map((a) => a.pathId);
    expect(left).not.toContain(old.pathId);
    expect(left).toContain(kept.pathId);
    expect(left).toContain(scheduled.pathId);
    expect((await raw(s, "GET", old.url, { user: alice })).status).toBe(404);
    expect((await raw(s, "GET", kept.url, { user: alice })).status).toBe(200);
  });
});
