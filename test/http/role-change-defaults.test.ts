/**
 * A role change across the guest line changes what register says of the realm's default
 * channels and default channel groups (guests get neither): the user's own queues hear
 * it as default_streams and default_stream_groups events, so that a client's state equals
 * a fresh register. (Found by the events oracle, seed 513674787: a guest promoted to
 * administrator kept an empty realm_default_streams.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLE, type User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
  const { owner, general } = s.seed;
  s.t.store.subscribe(owner.id, { channels: [{ name: "extras" }], principals: [owner.id] });
  s.t.store.createDefaultChannelGroup(owner.id, { name: "starters", description: "", channelNames: ["extras"] });
  s.t.store.setDefaultChannel(owner.id, general.id, true);
});
afterAll(() => s.close());

const TYPES = ["default_streams", "default_stream_groups"];

async function state(user: User) {
  const r = await s.call(user, "POST", "/register", { fetch_event_types: TYPES });
  return { streams: r.body["realm_default_streams"], groups: r.body["realm_default_stream_groups"] };
}

async function roleChangeEvents(user: User, role: number) {
  const reg = await s.call(user, "POST", "/register", { event_types: TYPES });
  expect((await s.call(s.seed.owner, "PATCH", `/users/${user.id}`, { role })).status).toBe(200);
  const r = await s.call(user, "GET", "/events", {
    queue_id: reg.body["queue_id"],
    last_event_id: reg.body["last_event_id"],
    dont_block: true,
  });
  const events = r.body["events"] as Record<string, unknown>[];
  return {
    streams: events.findLast((e) => e["type"] === "default_streams")?.["default_streams"],
    groups: events.findLast((e) => e["type"] === "default_stream_groups")?.["default_stream_groups"],
  };
}

describe("role changes across the guest line", () => {
  it("a guest made administrator hears the default channels and groups; made guest again, hears them gone", async () => {
    const { guest, general } = s.seed;
    expect(await state(guest)).toEqual({ streams: [], groups: [] });
    const promoted = await roleChangeEvents(guest, ROLE.ADMINISTRATOR);
    expect(promoted.streams).toEqual([general.id]);
    expect(promoted).toEqual(await state(guest));
    const demoted = await roleChangeEvents(guest, ROLE.GUEST);
    expect(demoted).toEqual({ streams: [], groups: [] });
    expect(demoted).toEqual(await state(guest));
  });

  it("a change between other roles sends neither", async () => {
    const { alice } = s.seed;
    expect(await roleChangeEvents(alice, ROLE.MODERATOR)).toEqual({ streams: undefined, groups: undefined });
  });
});
