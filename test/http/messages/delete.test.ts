/**
 * DELETE /messages/{message_id} and POST /streams/{stream_id}/delete_topic over HTTP:
 * Zulip's answers and refusals (nothing changed by a refusal), and the delete_message
 * events a queue gets in both of Zulip's forms (bulk_message_deletion or not).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";

let s: TestServer;
afterEach(() => s?.close());

async function send(user: User, to: string, topic: string, content = "x"): Promise<number> {
  const r = await s.call(user, "POST", "/messages", { type: "stream", to, topic, content });
  expect(r.status).toBe(200);
  return r.body["id"] as number;
}

async function register(user: User, capabilities: Record<string, boolean>): Promise<string> {
  const r = await s.call(user, "POST", "/register", {
    event_types: ["delete_message"],
    client_capabilities: capabilities,
  });
  expect(r.status).toBe(200);
  return r.body["queue_id"] as string;
}

async function events(user: User, queueId: string): Promise<Record<string, unknown>[]> {
  const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
  expect(r.status).toBe(200);
  return (r.body["events"] as Record<string, unknown>[]).map(({ id: _id, ...event }) => event);
}

describe("DELETE /messages/{message_id}", () => {
  it("deletes for the sender, refuses others with Zulip's errors, and is gone after", async () => {
    s = await startServer();
    const { alice, bob } = s.seed;
    const id = await send(alice, "general", "t");
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "DELETE", `/messages/${id}`),
      400,
      "BAD_REQUEST",
      "You don't have permission to delete this message",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "DELETE", "/messages/abc"),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
    const ok = await s.call(alice, "DELETE", `/messages/${id}`);
    expect(ok).toMatchObject({ status: 200, body: { result: "success", msg: "" } });
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", `/messages/${id}`),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
    const fetched = await s.call(alice, "GET", `/messages/${id}`);
    expect(fetched.body).toMatchObject({ result: "error", msg: "Invalid message(s)" });
  });

  it("sends delete_message with message_ids to bulk_message_deletion queues, one per message to others", async () => {
    s = await startServer();
    const { owner, alice, bob } = s.seed;
    const bulk = await register(bob, { bulk_message_deletion: true });
    const single = await register(bob, {});
    const [a, b] = [await send(alice, "general", "Old Plans"), await send(alice, "general", "old plans")];
    const { general } = s.seed;
    const r = await s.call(owner, "POST", `/streams/${general.id}/delete_topic`, { topic_name: "old plans" });
    expect(r.body).toEqual({ result: "success", msg: "", complete: true });
    const where = { message_type: "stream", stream_id: general.id, topic: "old plans" };
    expect(await events(bob, bulk)).toEqual([{ type: "delete_message", message_ids: [a, b], ...where }]);
    expect(await events(bob, single)).toEqual([
      { type: "delete_message", message_id: a, ...where },
      { type: "delete_message", message_id: b, ...where },
    ]);

    const dm = (await s.call(alice, "POST", "/messages", { type: "direct", to: [bob.id], content: "psst" })).body[
      "id"
    ] as number;
    expect((await s.call(alice, "DELETE", `/messages/${dm}`)).status).toBe(200);
    expect((await events(bob, bulk)).at(-1)).toEqual({
      type: "delete_message",
      message_ids: [dm],
      message_type: "private",
    });
    expect((await events(bob, single)).at(-1)).toEqual({
      type: "delete_message",
      message_id: dm,
      message_type: "private",
    });
  });
});

describe("POST /streams/{stream_id}/delete_topic", () => {
  it("is for organization administrators and refuses unknown channels and missing topics", async () => {
    s = await startServer();
    const { owner, alice } = s.seed;
    await send(alice, "general", "t");
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "POST", "/streams/1/delete_topic", { topic_name: "t" }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(owner, "POST", "/streams/99999/delete_topic", { topic_name: "t" }),
      400,
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(owner, "POST", "/streams/1/delete_topic", {}),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'topic_name' argument",
    );
  });
});
