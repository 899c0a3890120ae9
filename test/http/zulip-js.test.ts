/**
 * Drives the server with the official zulip-js client (multipart bodies, its own
 * URL building), proving it works unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/http.js";
import { zulipClient, type Result, type ZulipClient } from "../support/zulip-js.js";

let s: TestServer;
let alice: ZulipClient;
let bob: ZulipClient;
beforeAll(async () => {
  s = await startServer();
  alice = await zulipClient(s, s.seed.alice);
  bob = await zulipClient(s, s.seed.bob);
});
afterAll(() => s.close());

describe("zulip-js client", () => {
  it("subscribes, sends, fetches with narrows and anchors, and updates flags", async () => {
    const sub = await alice.users.me.subscriptions.add({
      subscriptions: JSON.stringify([{ name: "zulip-js land" }]),
      principals: JSON.stringify([s.seed.alice.id, s.seed.bob.id]),
    });
    expect(sub.result).toBe("success");
    expect(sub["subscribed"]).toEqual({
      [String(s.seed.alice.id)]: ["zulip-js land"],
      [String(s.seed.bob.id)]: ["zulip-js land"],
    });

    const sent: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await alice.messages.send({
        to: "zulip-js land",
        type: "stream",
        topic: "client test",
        content: `message ${i} from zulip-js`,
      });
      expect(r.result).toBe("success");
      sent.push(r["id"] as number);
    }
    const dm = await alice.messages.send({ to: [s.seed.bob.id], type: "direct", content: "a direct hello" });
    expect(dm.result).toBe("success");

    const channel = await bob.messages.retrieve({
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: [
        { operator: "channel", operand: "zulip-js land" },
        { operator: "topic", operand: "client test" },
      ],
    });
    expect(channel.result).toBe("success");
    expect((channel["messages"] as { id: number }[]).map((m) => m.id)).toEqual(sent);
    expect(channel["found_newest"]).toBe(true);

    // The channel itself opens with the notification bot's "channel events" message (unread for bob).
    const firstUnread = await bob.messages.retrieve({
      anchor: "first_unread",
      num_before: 0,
      num_after: 1,
      narrow: [
        { operator: "channel", operand: "zulip-js land" },
        { operator: "topic", operand: "client test" },
      ],
    });
    expect(firstUnread["anchor"]).toBe(sent[0]);
    expect((firstUnread["messages"] as { id: number }[]).map((m) => m.id)).toEqual([sent[0], sent[1]]);

    const dms = await bob.messages.retrieve({
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: "dm", operand: [s.seed.alice.id] }],
    });
    expect((dms["messages"] as { id: number; content: string }[]).map((m) => [m.id, m.content])).toEqual([
      [dm["id"], "<p>a direct hello</p>"],
    ]);

    const read = await bob.messages.flags.add({ flag: "read", messages: sent });
    expect(read.result).toBe("success");
    const star = await bob.messages.flags.add({ flag: "starred", messages: [sent[1]] });
    expect(star.result).toBe("success");
    const unread = await bob.messages.retrieve({
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: [
        { operator: "channel", operand: "zulip-js land" },
        { operator: "topic", operand: "client test" },
        { operator: "is", operand: "unread" },
      ],
    });
    expect(unread["messages"]).toEqual([]);
    const starred = await bob.messages.retrieve({
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: "is", operand: "starred" }],
    });
    expect((starred["messages"] as { id: number; flags: string[] }[]).map((m) => [m.id, m.flags])).toEqual([
      [sent[1], ["read", "starred"]],
    ]);
    const unstar = await bob.messages.flags.remove({ flag: "starred", messages: [sent[1]] });
    expect(unstar.result).toBe("success");
  });

  it("edits a message and reads its history", async () => {
    const sent = await alice.messages.send({
      to: "general",
      type: "stream",
      topic: "zulip-js edits",
      content: "draft",
    });
    const id = sent["id"] as number;
    const edit = await alice.messages.update({ message_id: id, content: "final, @**Bob**" });
    expect(edit.result).toBe("success");
    expect(edit["detached_uploads"]).toEqual([]);
    const got = await bob.messages.getById({ message_id: id });
    expect(got["raw_content"]).toBe("final, @**Bob**");
    expect((got["message"] as { flags: string[] }).flags).toEqual(["mentioned"]);
    const history = await bob.messages.getHistoryById({ message_id: id });
    expect((history["message_history"] as { content: string }[]).map((h) => h.content)).toEqual([
      "draft",
      "final, @**Bob**",
    ]);
    const refused = await bob.messages.update({ message_id: id, content: "not mine" });
    expect([refused.result, refused["msg"]]).toEqual(["error", "You don't have permission to edit this message"]);
  });

  it("edits, moves and deletes messages (messages.update, messages.deleteById)", async () => {
    const sub = await alice.users.me.subscriptions.add({
      subscriptions: JSON.stringify([{ name: "zulip-js edits" }, { name: "zulip-js archive" }]),
      principals: JSON.stringify([s.seed.alice.id, s.seed.bob.id]),
    });
    expect(sub.result).toBe("success");
    const ids: number[] = [];
    for (const content of ["first draft", "second", "third"]) {
      const r = await alice.messages.send({ to: "zulip-js edits", type: "stream", topic: "drafts", content });
      expect(r.result).toBe("success");
      ids.push(r["id"] as number);
    }
    const [first, second, third] = ids as [number, number, number];
    const bobSees = async (narrow: { operator: string; operand: string }[]) => {
      const r = await bob.messages.retrieve({ anchor: "newest", num_before: 20, num_after: 0, narrow });
      expect(r.result).toBe("success");
      return (r["messages"] as { id: number; content: string; subject: string }[]).map((m) => ({
        id: m.id,
        content: m.content,
        topic: m.subject,
      }));
    };

    // An edit: the sender changes the content; readers get the new rendering.
    const edited = await alice.messages.update({ message_id: first, content: "final **text**" });
    expect(edited.result).toBe("success");
    const one = await bob.messages.getById({ message_id: first });
    expect((one["message"] as { content: string }).content).toBe("<p>final <strong>text</strong></p>");

    // A topic move of the later messages, then the whole topic to another channel.
    const moved = await alice.messages.update({
      message_id: second,
      topic: "published",
      propagate_mode: "change_later",
      send_notification_to_new_thread: false,
    });
    expect(moved.result).toBe("success");
    expect(
      await bobSees([
        { operator: "channel", operand: "zulip-js edits" },
        { operator: "topic", operand: "drafts" },
      ]),
    ).toEqual([{ id: first, content: "<p>final <strong>text</strong></p>", topic: "drafts" }]);
    const topicList = (await bob.streams.topics.retrieve({ stream_id: channelIdOf("zulip-js edits") })) as Result;
    expect(topicList.result).toBe("success");
    // Newest first; the channel's creation notice has its own topic, older than these.
    const topics = (topicList["topics"] as { name: string; max_id: number }[]).map((t) => [t.name, t.max_id]);
    expect(topics.filter(([name]) => name !== "channel events")).toEqual([
      ["published", third],
      ["drafts", first],
    ]);
    const toChannel = await alice.messages.update({
      message_id: second,
      stream_id: channelIdOf("zulip-js archive"),
      propagate_mode: "change_all",
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: false,
    });
    expect(toChannel.result).toBe("success");
    const archived = [
      { operator: "channel", operand: "zulip-js archive" },
      { operator: "topic", operand: "published" },
    ];
    expect((await bobSees(archived)).map((m) => [m.id, m.topic])).toEqual([
      [second, "published"],
      [third, "published"],
    ]);
    expect(
      await bobSees([
        { operator: "channel", operand: "zulip-js edits" },
        { operator: "topic", operand: "published" },
      ]),
    ).toEqual([]);

    // A deletion: gone from every narrow, and a second one is refused.
    const deleted = await alice.messages.deleteById({ message_id: third });
    expect(deleted.result).toBe("success");
    expect((await bobSees(archived)).map((m) => m.id)).toEqual([second]);
    const again = await alice.messages.deleteById({ message_id: third });
    expect(again.result).toBe("error");
  });
});

function channelIdOf(name: string): number {
  const channel = s.t.store.getChannels(s.seed.owner.id, {}).find((c) => c.name === name);
  if (!channel) throw new Error(`no channel ${name}`);
  return channel.id;
}
