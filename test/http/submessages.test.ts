/**
 * Widgets over HTTP (Zulip's /poll and /todo, POST /submessage): the widget submessage a
 * message's content starts, byte for byte as Zulip's json.dumps writes it; `submessages`
 * in every message object, kept current in the ready-JSON cache; POST /submessage with
 * Zulip's checks in its order (each refusal changes nothing); `submessage` events to the
 * users with a row for the message, decoded by zulip-flutter's decoders; widget content
 * cannot be edited, a move keeps the submessages and a deletion drops them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { decodeSubmessage, decodeSubmessageEvent, decodeWidgetData } from "../support/flutter-decoders.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

type Json = Record<string, unknown>;
type Ev = Json & { type: string };

const send = async (user: User, content: string, to = "general") => {
  const res = await server.call(user, "POST", "/messages", { type: "stream", to, topic: "plans", content });
  expect(res.body["msg"]).toBe("");
  return res.body["id"] as number;
};
const sendDirect = async (user: User, to: User, content: string) => {
  const res = await server.call(user, "POST", "/messages", { type: "direct", to: JSON.stringify([to.id]), content });
  expect(res.status).toBe(200);
  return res.body["id"] as number;
};
const submessages = async (user: User, id: number) => {
  const res = await server.call(user, "GET", `/messages/${id}`);
  expect(res.status).toBe(200);
  return (res.body["message"] as Json)["submessages"] as Json[];
};
const fetched = async (user: User, id: number) => {
  const res = await server.call(user, "GET", "/messages", {
    anchor: id,
    num_before: 0,
    num_after: 0,
    narrow: JSON.stringify([{ operator: "channel", operand: "general" }]),
  });
  return ((res.body["messages"] as Json[])[0]?.["submessages"] ?? null) as Json[] | null;
};
const post = (user: User, messageId: number | string, content: string, msgType = "widget") =>
  server.call(user, "POST", "/submessage", { message_id: messageId, msg_type: msgType, content });
const queue = async (user: User) =>
  (await server.call(user, "POST", "/register", { event_types: ["submessage", "message"] })).body["queue_id"] as string;
const events = async (user: User, q: string) =>
  (await server.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
    "events"
  ] as Ev[];

describe("/poll and /todo messages", () => {
  it("store the widget as Zulip writes it: first line the question or title, list markers dropped", async () => {
    const { alice } = server.seed;
    const poll = await send(alice, "/poll Lunch — où?\n- Pizza\n* Sushi 🍣\n\n   --dash\n  *  \nplain");
    const [widget, ...rest] = await submessages(alice, poll);
    expect(rest).toEqual([]);
    expect(widget).toEqual({
      msg_type: "widget",
      content:
        '{"widget_type": "poll", "extra_data": {"question": "Lunch \\u2014 o\\u00f9?", ' +
        '"options": ["Pizza", "Sushi \\ud83c\\udf63", "-dash", "plain"]}}',
      message_id: poll,
      sender_id: alice.id,
      id: expect.any(Number),
    });
    expect(decodeWidgetData(String(widget!["content"]))).toEqual({
      widgetType: "poll",
      question: "Lunch — où?",
      options: ["Pizza", "Sushi 🍣", "-dash", "plain"],
    });
    decodeSubmessage(widget);

    const todo = await send(alice, '/todo Release\n- Tag: v1: "final"\nShip it\n* : no task');
    expect((await submessages(alice, todo))[0]!["content"]).toBe(
      '{"widget_type": "todo", "extra_data": {"task_list_title": "Release", "tasks": [' +
        '{"task": "Tag", "desc": "v1: \\"final\\""}, {"task": "Ship it", "desc": ""}, {"task": "", "desc": "no task"}]}}',
    );
  });

  it("take no title from an empty first line, and need the command as the whole first word", async () => {
    const { alice } = server.seed;
    const untitled = await send(alice, "/poll\nYes\nNo");
    expect(JSON.parse(String((await submessages(alice, untitled))[0]!["content"]))).toEqual({
      widget_type: "poll",
      extra_data: { question: "", options: ["Yes", "No"] },
    });
    const bare = await send(alice, "/todo");
    expect(JSON.parse(String((await submessages(alice, bare))[0]!["content"]))).toEqual({
      widget_type: "todo",
      extra_data: { task_list_title: "", tasks: [] },
    });
    for (const plain of ["/polls are fun", "Not a /poll", "/Poll Upper", "poll"])
      expect(await submessages(alice, await send(alice, plain))).toEqual([]);
  });

  it("is a widget in direct messages too, with submessages in the message event", async () => {
    const { alice, bob } = server.seed;
    const q = await queue(bob);
    const id = await sendDirect(alice, bob, "/poll Tea?");
    const message = (await events(bob, q)).find((e) => e.type === "message")!["message"] as Json;
    expect(message["id"]).toBe(id);
    expect((message["submessages"] as Json[]).map((s) => decodeSubmessage(s).msgType)).toEqual(["widget"]);
  });
});

describe("POST /submessage", () => {
  it("adds a vote every reader sees in GET /messages and GET /messages/{id}, cached or not", async () => {
    const { alice, bob, owner } = server.seed;
    const poll = await send(alice, "/poll Lunch?\nPizza\nSushi");
    // Fill the ready-JSON cache first: the vote must drop the cached message.
    expect(await fetched(bob, poll)).toHaveLength(1);
    const vote = '{"type":"vote","key":"canned,0","vote":1}';
    expect((await post(bob, poll, vote)).body).toEqual({ result: "success", msg: "" });
    const widget = (await submessages(owner, poll))[0]!;
    const expected = [
      widget,
      { msg_type: "widget", content: vote, message_id: poll, sender_id: bob.id, id: expect.any(Number) },
    ];
    expect(await fetched(bob, poll)).toEqual(expected);
    expect(await submessages(owner, poll)).toEqual(expected);
    const ids = (await submessages(owner, poll)).map((s) => s["id"] as number);
    expect(ids[1]).toBeGreaterThan(ids[0]!);
  });

  it("sends the submessage event to the users with a row for the message, as zulip-flutter decodes it", async () => {
    const { realm, alice, bob, owner, guest } = server.seed;
    const carol = server.t.store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
    const poll = await send(alice, "/poll Lunch?\nPizza");
    const queues = new Map([alice, bob, owner, guest, carol].map((u) => [u, ""]));
    for (const user of queues.keys()) queues.set(user, await queue(user));
    // Carol reads the public channel without being subscribed: she may vote, but holds no row for it.
    const content = '{"type":"new_option","option":"Tacos","idx":1}';
    expect((await post(carol, poll, content)).status).toBe(200);
    for (const [user, q] of queues) {
      const got = (await events(user, q)).filter((e) => e.type === "submessage");
      if (user === guest || user === carol) {
        expect(got).toEqual([]);
        continue;
      }
      expect(got).toHaveLength(1);
      const decoded = decodeSubmessageEvent(got[0]!);
      expect(decoded).toEqual({
        msgType: "widget",
        content,
        messageId: poll,
        senderId: carol.id,
        submessageId: (await submessages(alice, poll))[1]!["id"],
      });
    }
  });

  it("lets the sender attach the first submessage to any message of theirs, any msg_type; others not", async () => {
    const { alice, bob } = server.seed;
    const plain = await send(alice, "hello");
    await expectRejectedUnchanged(
      server,
      () => post(bob, plain, "{}"),
      400,
      "BAD_REQUEST",
      "You cannot attach a submessage to this message.",
    );
    // Without a widget the content need only be JSON.
    expect((await post(alice, plain, "[1, 2]", "zform")).status).toBe(200);
    expect((await post(bob, plain, '"anything"', "whatever")).status).toBe(200);
    expect((await submessages(bob, plain)).map((s) => [s["msg_type"], s["sender_id"]])).toEqual([
      ["zform", alice.id],
      ["whatever", bob.id],
    ]);
  });

  it("refuses messages the user may not change, before anything else", async () => {
    const { alice, bob, guest, owner } = server.seed;
    const secret = await send(owner, "/poll Secret?", "secret");
    const general = await send(alice, "/poll Open?");
    const direct = await sendDirect(alice, owner, "/poll Us?");
    for (const [user, id] of [
      [bob, secret],
      [guest, general],
      [bob, direct],
      [bob, 999_999],
    ] as const)
      await expectRejectedUnchanged(server, () => post(user, id, "not json"), 400, "BAD_REQUEST", "Invalid message(s)");
    await expectRejectedUnchanged(
      server,
      () => post(bob, "x", "{}"),
      400,
      "BAD_REQUEST",
      "message_id is not an integer",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "POST", "/submessage", { message_id: general, msg_type: "widget" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'content' argument",
    );
    // Channel archived: nobody may change its messages.
    expect((await server.call(owner, "DELETE", `/streams/${server.seed.general.id}`)).status).toBe(200);
    await expectRejectedUnchanged(server, () => post(alice, general, "{}"), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  it("checks poll and todo events as Zulip's validators do, in their order", async () => {
    const { alice, bob } = server.seed;
    const poll = await send(alice, "/poll Lunch?\nPizza");
    const todo = await send(alice, "/todo Chores\nDishes");
    const cases: [number, User, string, string][] = [
      [poll, bob, "{", "Invalid json for submessage"],
      [poll, bob, "", "Invalid json for submessage"],
      [poll, bob, "[1]", "poll data is not a dict"],
      [poll, bob, "1.5", "poll data is not a dict"],
      [poll, bob, '{"key":"x"}', "type key is missing from poll data"],
      [poll, bob, '{"type":3}', 'poll data["type"] is not a string'],
      [poll, bob, '{"type":"close"}', "Unknown type for poll data: close"],
      [poll, bob, '{"type":"vote","vote":1}', "key key is missing from poll data"],
      [poll, bob, '{"type":"vote","key":7,"vote":1}', 'poll data["key"] is not a string'],
      [poll, bob, '{"type":"vote","key":"canned,0"}', "vote key is missing from poll data"],
      [poll, bob, '{"type":"vote","key":"canned,0","vote":2}', 'Invalid poll data["vote"]'],
      [poll, bob, '{"type":"vote","key":"canned,0","vote":1.0}', 'poll data["vote"] is not an integer'],
      [poll, bob, '{"type":"vote","key":"canned,0","vote":"1"}', 'poll data["vote"] is not an integer'],
      [poll, bob, '{"type":"vote","key":"canned,0","vote":1,"x":0}', "Unexpected arguments: x"],
      [poll, bob, '{"type":"question","question":"Hi"}', "You can't edit a question unless you are the author."],
      [poll, alice, '{"type":"question","question":5}', 'poll data["question"] is not a string'],
      [poll, bob, '{"type":"new_option","option":"x","idx":-1}', 'poll data["idx"] is too small'],
      [poll, bob, '{"type":"new_option","option":"x","idx":1001}', 'poll data["idx"] is too large'],
      [poll, bob, '{"type":"new_option","option":"x","idx":1e2}', 'poll data["idx"] is not an integer'],
      [todo, bob, "null", "todo data is not a dict"],
      [todo, bob, '{"type":"vote"}', "Unknown type for todo data: vote"],
      [todo, bob, '{"type":"new_task","key":1,"task":"t","desc":"d"}', "completed key is missing from todo data"],
      [
        todo,
        bob,
        '{"type":"new_task","key":1,"task":"t","desc":"d","completed":0}',
        'todo data["completed"] is not a boolean',
      ],
      [
        todo,
        bob,
        '{"type":"new_task","key":1001,"task":"t","desc":"d","completed":false}',
        'todo data["key"] is too large',
      ],
      [todo, bob, '{"type":"strike","key":0}', 'todo data["key"] is not a string'],
      [
        todo,
        bob,
        '{"type":"new_task_list_title","title":"T"}',
        "You can't edit the task list title unless you are the author.",
      ],
    ];
    for (const [id, user, content, msg] of cases)
      await expectRejectedUnchanged(server, () => post(user, id, content), 400, "BAD_REQUEST", msg);
    // Accepted, including Python's readings: a bool is an int, and extra spacing is the client's.
    for (const [id, user, content] of [
      [poll, bob, '{"type":"vote","key":"canned,0","vote":-1}'],
      [poll, bob, '{"type":"vote","key":"x","vote":true}'],
      [poll, bob, '{"type":"new_option","option":"Tacos","idx":1000}'],
      [poll, alice, '{"type":"question","question":"Dinner?"}'],
      [todo, bob, '{"type":"new_task","key":0,"task":"Bins","desc":"","completed":false}'],
      [todo, bob, '{"type":"strike","key":"0,canned"}'],
      [todo, alice, '{ "type": "new_task_list_title", "title": "Weekend" }'],
    ] as const)
      expect((await post(user, id, content)).body["msg"]).toBe("");
    expect(await submessages(bob, poll)).toHaveLength(5);
    expect((await submessages(bob, todo)).map((s) => s["content"])).toContain(
      '{ "type": "new_task_list_title", "title": "Weekend" }',
    );
  });
});

describe("widget messages after sending", () => {
  it("refuse content edits, keep their submessages when moved, and lose them when deleted", async () => {
    const { alice, bob, owner } = server.seed;
    const poll = await send(alice, "/poll Lunch?\nPizza");
    expect((await post(bob, poll, '{"type":"vote","key":"canned,0","vote":1}')).status).toBe(200);
    const before = await submessages(alice, poll);
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "PATCH", `/messages/${poll}`, { content: "/todo Something else" }),
      400,
      "BAD_REQUEST",
      "Widgets cannot be edited.",
    );
    // Any submessage counts (Zulip's is_widget_message), not only a /poll's.
    const plain = await send(alice, "plain");
    expect((await post(alice, plain, "{}")).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "PATCH", `/messages/${plain}`, { content: "edited" }),
      400,
      "BAD_REQUEST",
      "Widgets cannot be edited.",
    );
    // An edit that does not touch the content is allowed, and a move keeps everything.
    expect((await server.call(alice, "PATCH", `/messages/${poll}`, { topic: "moved" })).body["msg"]).toBe("");
    expect(await submessages(alice, poll)).toEqual(before);
    expect((await server.call(owner, "DELETE", `/messages/${poll}`)).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      () => post(bob, poll, '{"type":"vote","key":"canned,0","vote":-1}'),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
  });
});
