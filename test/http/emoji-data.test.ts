import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startServer, type TestServer } from "../support/http.js";

/** What zulip-flutter's ServerEmojiData decodes (lib/api/route/realm.dart). */
const ServerEmojiData = z.object({ code_to_names: z.record(z.string(), z.array(z.string()).min(1)) });

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.close());

async function emojiDataUrl(): Promise<string> {
  const { body } = await srv.call(srv.seed.alice, "POST", "/register", { fetch_event_types: ["realm"] });
  return z.object({ server_emoji_data_url: z.string() }).parse(body).server_emoji_data_url;
}

describe("server emoji data", () => {
  it("register points at a hashed file that serves Zulip's code_to_names, cacheable forever", async () => {
    const url = await emojiDataUrl();
    expect(url).toMatch(/\/static\/generated\/emoji\/emoji_api\.[0-9a-f]{16}\.json$/);
    const path = new URL(url).pathname;
    const response = await fetch(`${srv.base}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const etag = response.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const data = ServerEmojiData.parse(await response.json());
    expect(Object.keys(data.code_to_names)).toHaveLength(1883);
    expect(data.code_to_names["1f604"]?.[0]).toBe("smile");
    expect(data.code_to_names["1f44d"]).toEqual(["+1", "thumbs_up", "like"]);

    const again = await fetch(`${srv.base}${path}`, { headers: { "If-None-Match": etag ?? "" } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  it("needs no login, and another hash or method is not it", async () => {
    const path = new URL(await emojiDataUrl()).pathname;
    expect((await fetch(`${srv.base}${path.replace(/\.[0-9a-f]{16}\./, ".0000000000000000.")}`)).status).toBe(404);
    expect((await fetch(`${srv.base}/static/generated/emoji/emoji_api.json`)).status).toBe(404);
    expect((await fetch(`${srv.base}${path}`, { method: "POST" })).status).toBe(404);
  });

  it("reactions over HTTP take Zulip's names and codes from the full table", async () => {
    const { body } = await srv.call(srv.seed.alice, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "emoji",
      content: ":working_on_it: :octopus:",
    });
    const id = z.object({ id: z.number() }).parse(body).id;
    const react = (params: Record<string, unknown>) =>
      srv.call(srv.seed.bob, "POST", `/messages/${id}/reactions`, params);
    expect((await react({ emoji_name: "working_on_it" })).status).toBe(200);
    expect((await react({ emoji_name: "+1", emoji_code: "1f44d", reaction_type: "unicode_emoji" })).status).toBe(200);
    expect((await react({ emoji_name: "melting_face" })).status).toBe(200);
    expect((await react({ emoji_name: "smile", emoji_code: "1f642" })).body).toMatchObject({
      result: "error",
      msg: "Invalid emoji name.",
    });
    expect((await react({ emoji_name: "heart", emoji_code: "2764-fe0f" })).body).toMatchObject({
      result: "error",
      msg: "Invalid emoji code.",
    });
    const { body: got } = await srv.call(srv.seed.bob, "GET", `/messages/${id}`);
    const message = z
      .object({
        message: z.object({
          content: z.string(),
          reactions: z.array(z.object({ emoji_name: z.string(), emoji_code: z.string() })),
        }),
      })
      .parse(got).message;
    expect(message.reactions.map((r) => [r.emoji_name, r.emoji_code])).toEqual([
      ["working_on_it", "1f6e0"],
      ["+1", "1f44d"],
      ["melting_face", "1fae0"],
    ]);
    expect(message.content).toContain(
      'class="emoji emoji-1f6e0" role="img" title="working on it">:working_on_it:</span>',
    );
  });
});
