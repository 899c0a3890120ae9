/**
 * Widgets in the engine: the widget content a message starts, against what Zulip's
 * get_widget_data and json.dumps produced for the same texts (run once with CPython,
 * outputs pasted below), Python's float/int reading of submessage JSON, and
 * addSubmessage: stored durably in the message record (a reopened store still has it),
 * the change set naming the message's submessages, and the write refused whole when a
 * check fails.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CHANGE_KINDS, type ChangeSet } from "../../src/engine/index.js";
import { checkWidgetEvent, parseSubmessageJson, widgetContentFor } from "../../src/engine/widgets.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

/** Texts and the content Zulip stores for them (null: no widget). */
const ZULIP_CASES: [string, string | null][] = [
  [
    "/poll\u00a0Q\u2028A\u000bB\u001cC\u001fD\u0085E\r\nF\rG",
    '{"widget_type": "poll", "extra_data": {"question": "Q", "options": ["A", "B", "C\\u001fD", "E", "F", "G"]}}',
  ],
  [
    "/todo\u3000T\n\u2003-\u2003x:\u2003y\u3000",
    '{"widget_type": "todo", "extra_data": {"task_list_title": "T", "tasks": [{"task": "x:\\u2003y", "desc": ""}]}}',
  ],
  ["/poll\n\n", '{"widget_type": "poll", "extra_data": {"question": "", "options": []}}'],
  ["/poll\u001fX\nA", '{"widget_type": "poll", "extra_data": {"question": "X", "options": ["A"]}}'],
  ["/poll\ufeffX\nA", null],
  [
    "/poll x\n\ufeffA\ufeff",
    '{"widget_type": "poll", "extra_data": {"question": "x", "options": ["\\ufeffA\\ufeff"]}}',
  ],
  [
    "/todo\n\u00a0\n a:b: c ",
    '{"widget_type": "todo", "extra_data": {"task_list_title": "", "tasks": [{"task": "a:b", "desc": "c"}]}}',
  ],
  [
    "/poll\t\tQ\t\n\t-\t-\tA\n*\n-\n**B",
    '{"widget_type": "poll", "extra_data": {"question": "Q", "options": ["-\\tA", "*B"]}}',
  ],
];

describe("widgetContentFor", () => {
  it.each(ZULIP_CASES)("reads %j as Zulip does", (text, expected) => {
    expect(widgetContentFor(text)).toBe(expected);
  });
});

describe("submessage JSON", () => {
  it("reads number literals with a fraction or exponent as floats, wherever they are", () => {
    const floatVote = parseSubmessageJson('{"type":"vote","key":"a.b","vote":1.0}')!.value;
    expect(() => checkWidgetEvent("poll", floatVote, false)).toThrow('poll data["vote"] is not an integer');
    const intVote = parseSubmessageJson('{"type":"vote","key":"1e5 \\" 2.0","vote":-1}')!.value;
    expect(() => checkWidgetEvent("poll", intVote, false)).not.toThrow();
    expect(parseSubmessageJson('[1, 2.5, {"x": [3e2, "4.0"]}, -0, true]')!.value).toEqual([
      1,
      expect.any(Symbol),
      { x: [expect.any(Symbol), "4.0"] },
      -0,
      true,
    ]);
    expect(parseSubmessageJson("1".repeat(500) + ".5")!.value).toEqual(expect.any(Symbol));
    expect(parseSubmessageJson("{")).toBeUndefined();
  });

  it("leaves events of other widgets, or of none, unchecked", () => {
    expect(() => checkWidgetEvent(undefined, 1, false)).not.toThrow();
    expect(() => checkWidgetEvent("zform", [], false)).not.toThrow();
  });
});

describe("sending", () => {
  it("makes no widget for a replayed send (imports: Zulip's export holds no submessages)", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const to = { type: "channel", channel: "general", topic: "t" } as const;
    const live = t.store.sendMessage({ senderId: w.alice.id, to, content: "/todo Chores" });
    const replayed = t.store.sendMessage({ senderId: w.alice.id, to, content: "/todo Chores", widgets: false });
    expect(t.store.findMessageRecord(live.id)!.submessages).toHaveLength(1);
    expect(t.store.findMessageRecord(replayed.id)!.submessages).toBeUndefined();
  });
});

describe("addSubmessage", () => {
  it("stores the submessage durably and names the message's submessages in the change set", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const seen: ChangeSet[] = [];
    t.store.onChanges((set) => seen.push(set));
    const { id } = t.store.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "/poll Lunch?\nPizza",
    });
    const widget = t.store.findMessageRecord(id)!.submessages![0]!;
    expect(widget).toMatchObject({ senderId: w.alice.id, msgType: "widget" });
    const vote = t.store.addSubmessage(w.bob.id, {
      messageId: id,
      msgType: "widget",
      content: '{"type":"vote","key":"canned,0","vote":1}',
    });
    expect(vote.id).toBe(widget.id + 1);
    const last = seen[seen.length - 1]!;
    expect(last.message.get(id)).toEqual({ realmId: w.realm.id, fields: new Set(["submessages"]) });
    for (const kind of CHANGE_KINDS) if (kind !== "message" && kind !== "userTopic") expect(last[kind].size).toBe(0);

    expect(() =>
      t!.store.addSubmessage(w.bob.id, { messageId: id, msgType: "widget", content: '{"type":"question"}' }),
    ).toThrow("You can't edit a question unless you are the author.");
    const store = t.reopen();
    expect(store.findMessageRecord(id)!.submessages).toEqual([
      widget,
      { id: vote.id, senderId: w.bob.id, msgType: "widget", content: '{"type":"vote","key":"canned,0","vote":1}' },
    ]);
    // IDs keep counting after a reopen.
    expect(
      store.addSubmessage(w.bob.id, {
        messageId: id,
        msgType: "widget",
        content: '{"type":"vote","key":"canned,0","vote":-1}',
      }).id,
    ).toBe(vote.id + 1);
  });
});
