/**
 * POST /messages/render over HTTP (compose preview): the HTML a send of the same content stores, with the caller's
 * view of mentions and channel links, storing nothing; Zulip's answers for empty and missing content.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { fingerprint } from "../../support/snapshot.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
  const queen = s.t.store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen Bee" },
  }).owner;
  s.t.store.subscribe(queen.id, { channels: [{ name: "hive" }], principals: [queen.id] });
});
afterAll(() => s.close());

async function render(user: User, content: string): Promise<string> {
  const r = await s.call(user, "POST", "/messages/render", { content });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success", msg: "" });
  return r.body["rendered"] as string;
}

async function sentHtml(user: User, content: string): Promise<string> {
  const sent = await s.call(user, "POST", "/messages", { type: "stream", to: "general", topic: "t", content });
  expect(sent.status).toBe(200);
  const fetched = await s.call(user, "GET", `/messages/${sent.body["id"] as number}`);
  return (fetched.body["message"] as Record<string, unknown>)["content"] as string;
}

describe("POST /messages/render", () => {
  it("renders as a send renders, mentions and channel links included, and stores nothing", async () => {
    const { alice } = s.seed;
    const content = "**bold** @**Bob** #**general** :octopus: [x](https://example.com)";
    const before = fingerprint(s.t.store);
    const rendered = await render(alice, content);
    expect(fingerprint(s.t.store)).toBe(before);
    expect(rendered).toContain("<strong>bold</strong>");
    expect(rendered).toContain(`data-user-id="${s.seed.bob.id}"`);
    expect(rendered).toContain(`data-stream-id="${s.seed.general.id}"`);
    expect(rendered).toBe(await sentHtml(alice, content));
  });

  it("links only what the caller may see: a private channel, and nothing of another realm", async () => {
    const { alice, bob } = s.seed;
    expect(await render(alice, "#**secret**")).toContain(`data-stream-id="${s.seed.secret.id}"`);
    expect(await render(bob, "#**secret**")).not.toContain("data-stream-id");
    const foreign = await render(alice, "@**Queen Bee** #**hive**");
    expect(foreign).not.toContain("data-user-id");
    expect(foreign).not.toContain("data-stream-id");
  });

  it("cuts over-long content as a send does", async () => {
    const rendered = await render(s.seed.alice, "a".repeat(200_000));
    expect(rendered).toContain("[message truncated]");
    expect(rendered.length).toBeLessThan(10_100);
  });

  it("renders an empty draft to nothing, and refuses a missing one", async () => {
    expect(await render(s.seed.alice, "")).toBe("");
    expect(await render(s.seed.alice, " \n ")).toBe("");
    const missing = await expectRejectedUnchanged(
      s,
      () => s.call(s.seed.alice, "POST", "/messages/render", {}),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'content' argument",
    );
    expect(missing["var_name"]).toBe("content");
  });

  it("needs credentials, and is POST alone at its path (not GET /messages/{message_id})", async () => {
    expect((await s.call(null, "POST", "/messages/render", { content: "x" })).status).toBe(401);
    const get = await s.call(s.seed.alice, "GET", "/messages/render");
    expect(get.status).toBe(405);
    expect(get.body["allowed_methods"]).toEqual(["POST"]);
  });
});
