/**
 * POST and DELETE /users/me/avatar: an uploaded avatar replaces the Gravatar in every
 * avatar_url (also for client_gravatar callers), is served as a 100×100 PNG at
 * /user_avatars/{realm}/{file}.png without credentials, reaches others as one
 * realm_user update; avatar_changes_disabled binds all but administrators; Zulip's
 * refusals change nothing; deleting goes back to Gravatar and removes the file.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/types.js";
import { startServer, type TestServer } from "../support/http.js";
import { filesOnDisk } from "./uploads/support.js";

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv?.close());

const image = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    .png()
    .toBuffer();

function post(user: User, files: readonly { data: Buffer | string; type?: string; name?: string }[]) {
  const form = new FormData();
  files.forEach((f, i) =>
    form.append(`file${i}`, new Blob([f.data], f.type === undefined ? {} : { type: f.type }), f.name ?? "me.png"),
  );
  return srv.call(user, "POST", "/users/me/avatar", {}, { body: form });
}

const avatarOf = async (caller: User, id: number, clientGravatar: boolean) =>
  (await srv.call(caller, "GET", `/users/${id}`, { client_gravatar: clientGravatar })).body["user"] as {
    avatar_url: string | null;
    avatar_version: number;
  };
const avatarFiles = () => filesOnDisk(srv).filter((f) => /^avatars\/\d+\/[0-9a-f]{16}\.png$/u.test(f));

describe("avatars", () => {
  it("uploads an avatar, serves it, shows it in avatar_url and events, and deletes it back to Gravatar", async () => {
    const { alice, bob } = srv.seed;
    const queue = await srv.call(bob, "POST", "/register", { event_types: ["realm_user"], client_gravatar: true });
    const before = await avatarOf(bob, alice.id, false);
    expect(before.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\//u);

    const up = await post(alice, [{ data: await image(300, 200), type: "image/png" }]);
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const url = String(up.body["avatar_url"]);
    expect(url).toMatch(new RegExp(`^/user_avatars/${srv.seed.realm.id}/[0-9a-f]{16}\\.png\\?version=\\d+$`, "u"));
    // Served without credentials, as Zulip serves /user_avatars/: a 100×100 PNG.
    const served = await fetch(`${srv.base}${url}`);
    expect([served.status, served.headers.get("content-type")]).toEqual([200, "image/png"]);
    const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([100, 100]);
    // The same URL wherever the avatar is named, client_gravatar or not.
    for (const clientGravatar of [false, true])
      expect((await avatarOf(bob, alice.id, clientGravatar)).avatar_url).toBe(url);
    const me = await srv.call(alice, "POST", "/register", { fetch_event_types: ["realm_user"] });
    expect([me.body["avatar_source"], me.body["avatar_url"]]).toEqual(["U", url]);
    const events = await srv.call(bob, "GET", "/events", {
      queue_id: queue.body["queue_id"],
      last_event_id: -1,
      dont_block: true,
    });
    const updates = (events.body["events"] as { type: string; person?: Record<string, unknown> }[]).filter(
      (e) => e.type === "realm_user",
    );
    expect(updates.map((e) => [e.person?.["user_id"], e.person?.["avatar_source"], e.person?.["avatar_url"]])).toEqual([
      [alice.id, "U", url],
    ]);

    // A second upload replaces the first file.
    const again = await post(alice, [{ data: await image(80, 120), type: "image/png" }]);
    expect(again.status).toBe(200);
    expect(avatarFiles()).toHaveLength(1);
    expect((await fetch(`${srv.base}${url}`)).status).toBe(404);

    const gone = await srv.call(alice, "DELETE", "/users/me/avatar");
    expect(gone.status).toBe(200);
    expect(String(gone.body["avatar_url"])).toMatch(/^https:\/\/secure\.gravatar\.com\//u);
    expect((await avatarOf(bob, alice.id, true)).avatar_url).toBeNull();
    expect(avatarFiles()).toEqual([]);
  });

  it("refuses what Zulip refuses, changing nothing; avatar_changes_disabled binds members, not administrators", async () => {
    const { bob, owner } = srv.seed;
    const version = (await avatarOf(bob, bob.id, false)).avatar_version;
    const png = await image(50, 50);
    const refusals: [Promise<{ status: number; body: Record<string, unknown> }>, string][] = [
      [post(bob, []), "You must upload exactly one avatar."],
      [
        post(bob, [
          { data: png, type: "image/png" },
          { data: png, type: "image/png" },
        ]),
        "You must upload exactly one avatar.",
      ],
      [
        post(bob, [{ data: "not an image", type: "image/png" }]),
        "Could not decode image; did you upload an image file?",
      ],
      [post(bob, [{ data: "%PDF-1.4", type: "application/pdf", name: "me.pdf" }]), "Invalid image format"],
    ];
    for (const [answer, msg] of refusals) {
      const r = await answer;
      expect([r.status, r.body["msg"]]).toEqual([400, msg]);
    }
    expect((await avatarOf(bob, bob.id, false)).avatar_version).toBe(version);
    expect(avatarFiles()).toEqual([]);

    expect((await srv.call(owner, "PATCH", "/realm", { avatar_changes_disabled: true })).status).toBe(200);
    try {
      for (const r of [
        await post(bob, [{ data: png, type: "image/png" }]),
        await srv.call(bob, "DELETE", "/users/me/avatar"),
      ])
        expect([r.status, r.body["msg"]]).toEqual([400, "Avatar changes are disabled in this organization."]);
      expect(avatarFiles()).toEqual([]);
      const admin = await post(owner, [{ data: png, type: "image/png" }]);
      expect(admin.status).toBe(200);
      expect((await srv.call(owner, "DELETE", "/users/me/avatar")).status).toBe(200);
    } finally {
      await srv.call(owner, "PATCH", "/realm", { avatar_changes_disabled: false });
    }
  });
});
