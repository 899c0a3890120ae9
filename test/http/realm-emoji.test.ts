/**
 * Custom emoji over HTTP: upload (Zulip's checks, limits and 64×64 resize), list,
 * serving, use in messages and reactions, deactivation, events and register.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { User } from "../../src/engine/types.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let srv: TestServer;
beforeEach(async () => {
  srv = await startServer({
    config: { ...(await import("../../src/config/index.js")).DEFAULT_CONFIG, MAX_EMOJI_FILE_SIZE_MIB: 1 },
  });
});
afterEach(() => srv.close());

const png = (width = 100, height = 50) =>
  sharp({ create: { width, height, channels: 4, background: { r: 200, g: 10, b: 10, alpha: 1 } } })
    .png()
    .toBuffer();
async function animatedGif(): Promise<Buffer> {
  const frame = (r: number) =>
    sharp({ create: { width: 100, height: 50, channels: 4, background: { r, g: 0, b: 0, alpha: 1 } } })
      .png()
      .toBuffer();
  return sharp([await frame(255), await frame(0)], { join: { animated: true } })
    .gif({ delay: [100, 100] })
    .toBuffer();
}

function form(files: { data: Buffer | string; type: string; name?: string }[]): FormData {
  const body = new FormData();
  for (const [i, f] of files.entries())
    body.append(`file-${i}`, new Blob([f.data], { type: f.type }), f.name ?? `emoji-${i}.png`);
  return body;
}
const upload = (user: User, name: string, files: { data: Buffer | string; type: string; name?: string }[]) =>
  srv.call(user, "POST", `/realm/emoji/${encodeURIComponent(name)}`, {}, { body: form(files) });

const RealmEmojiWire = z
  .object({
    id: z.string(),
    name: z.string(),
    source_url: z.string(),
    still_url: z.string().nullable(),
    deactivated: z.boolean(),
    author_id: z.number().nullable(),
  })
  .strict();
async function listEmoji(user: User = srv.seed.alice): Promise<Record<string, z.infer<typeof RealmEmojiWire>>> {
  const r = await srv.call(user, "GET", "/realm/emoji");
  expect(r.status).toBe(200);
  return z.object({ emoji: z.record(z.string(), RealmEmojiWire) }).parse({ emoji: r.body["emoji"] }).emoji;
}
const uploadedFiles = (): string[] => {
  const dir = join(srv.t.dir, "uploads");
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
};

describe("POST /realm/emoji/{emoji_name}", () => {
  it("stores a 64×64 image served at Zulip's URL, listed with its author", async () => {
    const r = await upload(srv.seed.alice, "green tick", [{ data: await png(), type: "image/png" }]);
    expect(r.status).toBe(200);
    const all = await listEmoji();
    const [emoji] = Object.values(all);
    expect(emoji).toMatchObject({
      name: "green_tick",
      deactivated: false,
      author_id: srv.seed.alice.id,
      still_url: null,
    });
    expect(Object.keys(all)).toEqual([emoji!.id]);
    expect(emoji!.source_url).toMatch(
      new RegExp(`^/user_avatars/${srv.seed.realm.id}/emoji/images/[0-9a-f]{16}\\.png$`),
    );
    const image = await fetch(`${srv.base}${emoji!.source_url}`);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["png", 64, 64]);
    // Anything else under /user_avatars/ is not served.
    expect((await fetch(`${srv.base}${emoji!.source_url.replace(/[0-9a-f]{16}/, "0000000000000000")}`)).status).toBe(
      404,
    );
    expect((await fetch(`${srv.base}/user_avatars/${srv.seed.realm.id}/emoji/images/../../../data.mdb`)).status).toBe(
      404,
    );
  });

  it("keeps an animated GIF animated (64×64 frames) with a still PNG of its first frame", async () => {
    expect(
      (await upload(srv.seed.alice, "party", [{ data: await animatedGif(), type: "image/gif", name: "party.gif" }]))
        .status,
    ).toBe(200);
    const [emoji] = Object.values(await listEmoji());
    expect(emoji!.source_url).toMatch(/\.gif$/);
    const gif = Buffer.from(await (await fetch(`${srv.base}${emoji!.source_url}`)).arrayBuffer());
    const meta = await sharp(gif, { animated: true }).metadata();
    expect([meta.format, meta.pages, meta.width, meta.pageHeight]).toEqual(["gif", 2, 64, 64]);
    expect(emoji!.still_url).toMatch(/\/still\/[0-9a-f]{16}\.png$/);
    const still = await fetch(`${srv.base}${emoji!.still_url}`);
    expect(still.headers.get("content-type")).toBe("image/png");
    expect((await sharp(Buffer.from(await still.arrayBuffer())).metadata()).width).toBe(64);
  });

  it("refuses bad names, permissions and file counts with Zulip's errors, storing nothing", async () => {
    const { alice, bob, guest, owner } = srv.seed;
    const image = [{ data: await png(), type: "image/png" }];
    const refused = (user: User, name: string, files = image, msg: string) =>
      expectRejectedUnchanged(srv, () => upload(user, name, files), 400, "BAD_REQUEST", msg);
    await refused(
      alice,
      "Capital",
      image,
      "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
    );
    await refused(alice, "tick_", image, "Emoji names must end with either a letter or digit.");
    await refused(
      alice,
      "ünï",
      image,
      "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
    );
    await refused(alice, " ", image, "Emoji name is missing");
    await refused(guest, "tick", image, "Not allowed for guest users");
    await refused(alice, "octopus", image, "Only administrators can override default emoji.");
    await refused(alice, "tick", [], "You must upload exactly one file.");
    await refused(alice, "tick", [...image, ...image], "You must upload exactly one file.");
    expect((await upload(alice, "tick", image)).status).toBe(200);
    await refused(bob, "tick", image, "A custom emoji with this name already exists.");
    // Only administrators, now: a member is refused, an administrator is not.
    srv.t.store.setCanAddCustomEmojiGroup(
      owner.id,
      srv.t.store.systemGroupId(srv.seed.realm.id, "role:administrators"),
    );
    await refused(bob, "cross", image, "Insufficient permission");
    expect((await upload(owner, "octopus", image)).status).toBe(200);
    const names = Object.values(await listEmoji()).map((e) => e.name);
    expect(names).toEqual(["tick", "octopus"]);
    expect(uploadedFiles()).toHaveLength(2);
  });

  it("refuses wrong types, oversized files and bytes that are no image, leaving no file behind", async () => {
    const { alice } = srv.seed;
    const bad = (files: { data: Buffer | string; type: string; name?: string }[], code: string, msg: string) =>
      expectRejectedUnchanged(srv, () => upload(alice, "bad", files), 400, code, msg);
    await bad([{ data: "hello", type: "text/plain", name: "hello.txt" }], "BAD_IMAGE", "Invalid image format");
    await bad(
      [{ data: Buffer.alloc(1024 * 1024 + 1, 1), type: "image/png" }],
      "BAD_REQUEST",
      "Uploaded file is larger than the allowed limit of 1 MiB",
    );
    await bad(
      [{ data: "definitely not a png", type: "image/png" }],
      "BAD_IMAGE",
      "Could not decode image; did you upload an image file?",
    );
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
    await bad([{ data: svg, type: "image/png" }], "BAD_IMAGE", "Could not decode image; did you upload an image file?");
    const whole = await png(400, 400);
    await bad(
      [{ data: whole.subarray(0, Math.floor(whole.length / 2)), type: "image/png" }],
      "BAD_IMAGE",
      "Image is corrupted or truncated",
    );
    expect(uploadedFiles()).toEqual([]);
    expect(await listEmoji()).toEqual({});
  });
});

describe("custom emoji in messages and reactions", () => {
  async function setup(): Promise<{ id: string; source: string; messageId: number }> {
    expect((await upload(srv.seed.alice, "party_parrot", [{ data: await png(), type: "image/png" }])).status).toBe(200);
    const [emoji] = Object.values(await listEmoji());
    const sent = await srv.call(srv.seed.bob, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "emoji",
      content: "hi :party_parrot:",
    });
    return { id: emoji!.id, source: emoji!.source_url, messageId: z.object({ id: z.number() }).parse(sent.body).id };
  }
  const reactions = async (messageId: number) => {
    const { body } = await srv.call(srv.seed.bob, "GET", `/messages/${messageId}`);
    return z
      .object({
        message: z.object({
          content: z.string(),
          reactions: z.array(
            z.object({
              emoji_name: z.string(),
              emoji_code: z.string(),
              reaction_type: z.string(),
              user_id: z.number(),
            }),
          ),
        }),
      })
      .parse(body).message;
  };

  it("renders Zulip's <img> and takes reactions by name (code = the emoji's ID)", async () => {
    const { id, source, messageId } = await setup();
    expect((await reactions(messageId)).content).toBe(
      `<p>hi <img alt=":party_parrot:" class="emoji" src="${source}" title="party parrot"></p>`,
    );
    expect(
      (await srv.call(srv.seed.bob, "POST", `/messages/${messageId}/reactions`, { emoji_name: "party_parrot" })).status,
    ).toBe(200);
    expect(
      (
        await srv.call(srv.seed.alice, "POST", `/messages/${messageId}/reactions`, {
          emoji_name: "party_parrot",
          emoji_code: id,
          reaction_type: "realm_emoji",
        })
      ).status,
    ).toBe(200);
    expect((await reactions(messageId)).reactions).toEqual([
      { emoji_name: "party_parrot", emoji_code: id, reaction_type: "realm_emoji", user_id: srv.seed.bob.id },
      { emoji_name: "party_parrot", emoji_code: id, reaction_type: "realm_emoji", user_id: srv.seed.alice.id },
    ]);
    // On a message without that reaction yet, name and code are checked together.
    const other = await srv.call(srv.seed.owner, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "emoji",
      content: "x",
    });
    const otherId = z.object({ id: z.number() }).parse(other.body).id;
    await expectRejectedUnchanged(
      srv,
      () =>
        srv.call(srv.seed.owner, "POST", `/messages/${otherId}/reactions`, {
          emoji_name: "other",
          emoji_code: id,
          reaction_type: "realm_emoji",
        }),
      400,
      "BAD_REQUEST",
      "Invalid custom emoji name.",
    );
    for (const code of ["999", "0", "abc"]) {
      await expectRejectedUnchanged(
        srv,
        () =>
          srv.call(srv.seed.owner, "POST", `/messages/${otherId}/reactions`, {
            emoji_name: "party_parrot",
            emoji_code: code,
            reaction_type: "realm_emoji",
          }),
        400,
        "BAD_REQUEST",
        "Invalid custom emoji.",
      );
    }
  });

  it("DELETE deactivates: author or administrator only; old messages and reactions keep it, new reactions are refused", async () => {
    const { id, source, messageId } = await setup();
    expect(
      (await srv.call(srv.seed.bob, "POST", `/messages/${messageId}/reactions`, { emoji_name: "party_parrot" })).status,
    ).toBe(200);
    await expectRejectedUnchanged(
      srv,
      () => srv.call(srv.seed.bob, "DELETE", "/realm/emoji/party_parrot"),
      400,
      "BAD_REQUEST",
      "Must be an organization administrator or emoji author",
    );
    await expectRejectedUnchanged(
      srv,
      () => srv.call(srv.seed.bob, "DELETE", "/realm/emoji/nothing"),
      404,
      "BAD_REQUEST",
      "Emoji 'nothing' does not exist",
    );
    expect((await srv.call(srv.seed.alice, "DELETE", "/realm/emoji/party_parrot")).status).toBe(200);
    expect((await listEmoji())[id]).toMatchObject({ name: "party_parrot", deactivated: true });
    const message = await reactions(messageId);
    expect(message.content).toContain(`src="${source}"`);
    expect(message.reactions).toHaveLength(1);
    expect((await fetch(`${srv.base}${source}`)).status).toBe(200);
    // A vote for an existing reaction counts (Zulip skips the checks); a new one is refused.
    expect(
      (
        await srv.call(srv.seed.alice, "POST", `/messages/${messageId}/reactions`, {
          emoji_name: "party_parrot",
          emoji_code: id,
          reaction_type: "realm_emoji",
        })
      ).status,
    ).toBe(200);
    const fresh = z.object({ id: z.number() }).parse(
      (
        await srv.call(srv.seed.owner, "POST", "/messages", {
          type: "stream",
          to: "general",
          topic: "emoji",
          content: "y",
        })
      ).body,
    ).id;
    await expectRejectedUnchanged(
      srv,
      () =>
        srv.call(srv.seed.owner, "POST", `/messages/${fresh}/reactions`, {
          emoji_name: "party_parrot",
          emoji_code: id,
          reaction_type: "realm_emoji",
        }),
      400,
      "BAD_REQUEST",
      "This custom emoji has been deactivated.",
    );
    // By name, :party_parrot: names no emoji now: it is not an emoji now.
    await expectRejectedUnchanged(
      srv,
      () => srv.call(srv.seed.owner, "POST", `/messages/${fresh}/reactions`, { emoji_name: "party_parrot" }),
      400,
      "BAD_REQUEST",
      "Emoji 'party_parrot' does not exist",
    );
    await expectRejectedUnchanged(
      srv,
      () => srv.call(srv.seed.owner, "DELETE", "/realm/emoji/party_parrot"),
      404,
      "BAD_REQUEST",
      "Emoji 'party_parrot' does not exist",
    );
    // The name is free again, for the administrator too.
    expect((await upload(srv.seed.owner, "party_parrot", [{ data: await png(), type: "image/png" }])).status).toBe(200);
    expect(Object.values(await listEmoji()).map((e) => [e.name, e.deactivated])).toEqual([
      ["party_parrot", true],
      ["party_parrot", false],
    ]);
  });
});

describe("realm_emoji in register and events", () => {
  type Ev = Record<string, unknown>;
  async function register(
    user: User,
    caps: Record<string, boolean> = {},
  ): Promise<{ queueId: string; body: Record<string, unknown> }> {
    const r = await srv.call(user, "POST", "/register", {
      event_types: ["realm_emoji", "realm"],
      client_capabilities: caps,
    });
    expect(r.status).toBe(200);
    return { queueId: String(r.body["queue_id"]), body: r.body };
  }
  async function events(user: User, queueId: string): Promise<Ev[]> {
    const r = await srv.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
    return (r.body["events"] as Ev[]).filter((e) => e["type"] === "realm_emoji");
  }

  it("register reports the emoji and can_add_custom_emoji_group; events follow both formats", async () => {
    const { bob, alice, owner } = srv.seed;
    const legacy = await register(bob);
    expect(legacy.body["realm_emoji"]).toEqual({});
    expect(legacy.body["realm_can_add_custom_emoji_group"]).toBe(
      srv.t.store.systemGroupId(srv.seed.realm.id, "role:members"),
    );
    const modern = await register(owner, { individual_emoji_changes: true });
    expect((await upload(alice, "tick", [{ data: await png(), type: "image/png" }])).status).toBe(200);
    expect((await srv.call(alice, "DELETE", "/realm/emoji/tick")).status).toBe(200);
    const all = await listEmoji();
    const [id] = Object.keys(all);
    const added = { ...all[id!], deactivated: false };
    expect((await events(bob, legacy.queueId)).map((e) => [e["op"], e["realm_emoji"]])).toEqual([
      ["update", { [id!]: added }],
      ["update", all],
    ]);
    expect((await events(owner, modern.queueId)).map(({ id: _id, ...e }) => e)).toEqual([
      { type: "realm_emoji", op: "add", emoji: added },
      { type: "realm_emoji", op: "update_one", emoji_id: id, data: { deactivated: true } },
    ]);
    expect((await register(bob)).body["realm_emoji"]).toEqual(all);
  });
});
