/**
 * The official zulip-js client lives on register + long-poll: its queues.register and
 * events.retrieve receive a message another user sends, a star, a reaction, a
 * subscription change and typing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/http.js";
import { zulipClient, type ZulipClient } from "../support/zulip-js.js";

let s: TestServer;
let alice: ZulipClient;
let bob: ZulipClient;
beforeAll(async () => {
  s = await startServer();
  alice = await zulipClient(s, s.seed.alice);
  bob = await zulipClient(s, s.seed.bob);
});
afterAll(() => s.close());

describe("zulip-js events", () => {
  it("receives messages, stars, reactions, subscriptions and typing through register + long-poll", async () => {
    const reg = await alice.queues.register({
      event_types: ["message", "update_message_flags", "reaction", "subscription", "typing"],
    });
    expect(reg.result).toBe("success");
    const queueId = reg["queue_id"] as string;
    let last = reg["last_event_id"] as number;
    const seen: Record<string, unknown>[] = [];
    // One long-poll in flight, woken by bob's message.
    const poll = alice.events.retrieve({ queue_id: queueId, last_event_id: last });
    await new Promise((r) => setTimeout(r, 30));
    const sent = await bob.messages.send({ to: "general", type: "stream", topic: "events", content: "hello from bob" });
    expect(sent.result).toBe("success");
    const first = await poll;
    expect(first.result).toBe("success");
    seen.push(...(first["events"] as Record<string, unknown>[]));

    const id = sent["id"] as number;
    expect((await alice.messages.flags.add({ flag: "starred", messages: [id] })).result).toBe("success");
    expect((await bob.reactions.add({ message_id: id, emoji_name: "smile" })).result).toBe("success");
    expect(
      (
        await bob.users.me.subscriptions.add({
          subscriptions: JSON.stringify([{ name: "new place" }]),
          principals: JSON.stringify([s.seed.alice.id, s.seed.bob.id]),
        })
      ).result,
    ).toBe("success");
    expect((await bob.typing.send({ to: [s.seed.alice.id], op: "start" })).result).toBe("success");

    for (;;) {
      last = Math.max(last, ...seen.map((e) => e["id"] as number));
      const r = await alice.events.retrieve({ queue_id: queueId, last_event_id: last, dont_block: true });
      const got = r["events"] as Record<string, unknown>[];
      if (got.length === 0) break;
      seen.push(...got);
    }
    const kinds = seen.map((e) => `${String(e["type"])}${e["op"] ? `:${String(e["op"])}` : ""}`);
    expect(kinds).toEqual([
      "message",
      "update_message_flags:add",
      "reaction:add",
      "subscription:add",
      "message",
      "typing:start",
    ]);
    expect((seen[0]!["message"] as { content: string }).content).toBe("hello from bob");
    expect(seen[1]).toMatchObject({ flag: "starred", messages: [id] });
    // The new channel's first message, from the Notification Bot.
    expect((seen[4]!["message"] as { display_recipient: string }).display_recipient).toBe("new place");
    expect((await alice.queues.deregister({ queue_id: queueId })).result).toBe("success");
  });
});
