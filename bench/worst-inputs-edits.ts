/**
 * @module bench/worst-inputs-edits
 * The worst inputs of issue #28's routes: PATCH /messages/{id} (a 10,000-character
 * Markdown edit and a wildcard mention added in the 10,000-subscriber channel, the
 * channel's biggest topic moved to a private channel with change_all, and resolved, and a
 * 5,000-message topic moved there, bench:peer's move row),
 * DELETE /messages/{id} (a message of that channel), GET /users/me/{id}/topics (its
 * first listing, once) and POST /streams/{id}/delete_topic (its biggest topic, once:
 * each request deletes what it can and the later runs finish the rest), plus the
 * refused inputs generated from each route's parameters. Inputs are added only for
 * routes the server has. Run last of the case lists: the topic deletion cannot be undone.
 */
import type { Manifest } from "../tools/generate/manifest.js";
import { ENDPOINTS } from "../src/http/endpoints/index.js";
import { generatedWorstInputs } from "../src/http/worst-inputs.js";
import type { AddCase, Captured, Step } from "./worst-inputs-case.js";

const form = (params: Record<string, unknown>) => {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) out.set(k, typeof v === "string" ? v : JSON.stringify(v));
  return Buffer.from(out.toString());
};
const none = Buffer.alloc(0);
const PRIVATE_TARGET = "bench private move target";
const BIG_MOVE_TOPIC = "bench 5000 to move";
const BIG_MOVE_MESSAGES = 5000;

function id(ctx: Captured, key: string): number {
  const value = ctx[key];
  if (typeof value !== "number") throw new Error(`bench:worst: nothing captured as ${key}`);
  return value;
}

export function editCases(add: AddCase, m: Manifest, auth: { main: string; owner: string }): void {
  const have = new Set(ENDPOINTS.map((e) => `${e.method} ${e.path}`));
  const general = m.generalChannelId;
  const owner = { auth: auth.owner };
  /** A fresh message in the 10,000-subscriber channel, its ID kept under `key`. */
  const sendStep = (key: string, who: string, content = "a message to edit"): Step => ({
    method: "POST",
    path: "/messages",
    auth: who,
    body: form({ type: "stream", to: general, topic: "bench edits", content }),
    capture: (reply, ctx) => (ctx[key] = reply["id"]),
  });
  const generated = (route: string) => {
    const endpoint = ENDPOINTS.find((e) => `${e.method} ${e.path}` === route)!;
    for (const input of generatedWorstInputs(endpoint))
      add(route, `generated: ${input.label}`, input.path, Buffer.from(new URLSearchParams(input.params).toString()));
  };

  const patch = "PATCH /messages/:message_id";
  if (have.has(patch)) {
    generated(patch);
    const path = (key: string) => (ctx: Captured) => `/messages/${id(ctx, key)}`;
    add(
      patch,
      "10,000 chars of markdown in the 10,000-subscriber channel (accepted)",
      path("edit"),
      form({ content: "**b** _i_ ".repeat(1000) }),
      {
        prepare: [sendStep("edit", auth.main)],
        undo: { method: "PATCH", path: path("edit"), body: form({ content: "a message to edit" }) },
      },
    );
    add(
      patch,
      "@**all** added in the 10,000-subscriber channel (accepted)",
      path("wildcard"),
      form({ content: "@**all** look at this" }),
      {
        ...owner,
        prepare: [sendStep("wildcard", auth.owner)],
        undo: { method: "PATCH", path: path("wildcard"), body: form({ content: "look at this" }) },
      },
    );
    // A message of the channel's biggest topic, for the whole-topic moves.
    const bigTopicMessage: Step = {
      method: "GET",
      path: "/messages",
      body: form({
        anchor: "newest",
        num_before: 1,
        num_after: 0,
        narrow: [
          { operator: "channel", operand: general },
          { operator: "topic", operand: m.bigTopic },
        ],
      }),
      capture: (reply, ctx) => (ctx["bigTopicMessage"] = (reply["messages"] as { id: number }[])[0]!.id),
      unless: "bigTopicMessage",
    };
    const privateTarget: Step[] = [
      {
        method: "POST",
        path: "/users/me/subscriptions",
        body: form({
          subscriptions: [{ name: PRIVATE_TARGET }],
          invite_only: true,
          history_public_to_subscribers: false,
        }),
        unless: "privateTarget",
      },
      {
        method: "GET",
        path: "/users/me/subscriptions",
        body: none,
        capture: (reply, ctx) =>
          (ctx["privateTarget"] = (reply["subscriptions"] as { name: string; stream_id: number }[]).find(
            (sub) => sub.name === PRIVATE_TARGET,
          )?.stream_id),
        unless: "privateTarget",
      },
    ];
    const big = path("bigTopicMessage");
    add(
      patch,
      "the biggest topic of the 10,000-subscriber channel to a private channel, change_all (accepted)",
      big,
      (ctx) => form({ stream_id: id(ctx, "privateTarget"), propagate_mode: "change_all" }),
      {
        ...owner,
        prepare: [bigTopicMessage, ...privateTarget],
        undo: { method: "PATCH", path: big, body: form({ stream_id: general, propagate_mode: "change_all" }) },
      },
    );
    // bench:peer's move row: 5,000 messages (more than the channel's biggest topic at 100k), staged over several turns
    // before the one write that holds the loop longest (actions/move-staging).
    const fresh = Array.from({ length: BIG_MOVE_MESSAGES }, (_, i): Step => ({
      method: "POST",
      path: "/messages",
      auth: auth.main,
      body: form({ type: "stream", to: general, topic: BIG_MOVE_TOPIC, content: `message ${i} of the topic to move` }),
      // Sent once: every step is skipped once the last one captured its message.
      unless: "bigMoveMessage",
      ...(i === BIG_MOVE_MESSAGES - 1
        ? { capture: (reply: Record<string, unknown>, ctx: Captured) => (ctx["bigMoveMessage"] = reply["id"]) }
        : {}),
    }));
    const bigMove = path("bigMoveMessage");
    add(
      patch,
      "a 5,000-message topic of the 10,000-subscriber channel to a private channel, change_all (accepted)",
      bigMove,
      (ctx) => form({ stream_id: id(ctx, "privateTarget"), propagate_mode: "change_all" }),
      {
        ...owner,
        prepare: [...fresh, ...privateTarget],
        undo: { method: "PATCH", path: bigMove, body: form({ stream_id: general, propagate_mode: "change_all" }) },
      },
    );
    add(
      patch,
      "resolve the biggest topic of the 10,000-subscriber channel (accepted)",
      big,
      form({ topic: `✔ ${m.bigTopic}`, propagate_mode: "change_all" }),
      {
        ...owner,
        prepare: [bigTopicMessage],
        undo: { method: "PATCH", path: big, body: form({ topic: m.bigTopic, propagate_mode: "change_all" }) },
      },
    );
  }

  const del = "DELETE /messages/:message_id";
  if (have.has(del)) {
    generated(del);
    add(del, "a message of the 10,000-subscriber channel (accepted)", (ctx) => `/messages/${id(ctx, "doomed")}`, none, {
      ...owner,
      prepare: [sendStep("doomed", auth.owner)],
      undo: sendStep("doomed", auth.owner),
    });
  }

  const topics = "GET /users/me/:stream_id/topics";
  if (have.has(topics)) {
    generated(topics);
    // Sent once, measured: the first listing builds the channel's list (later ones are cached).
    add(
      topics,
      "every topic of the 10,000-subscriber channel, not cached yet (accepted)",
      `/users/me/${general}/topics`,
      form({ allow_empty_topic_name: true }),
      { once: true },
    );
  }

  const deleteTopic = "POST /streams/:stream_id/delete_topic";
  if (have.has(deleteTopic)) {
    generated(deleteTopic);
    // The move cases above took this topic to the private channel and back, so its messages
    // were moved in from another channel: the deletion looks at every member's rows
    // (actions/delete-messages clearMovedReaderBits), its costliest path.
    add(
      deleteTopic,
      "the biggest topic of the 10,000-subscriber channel (accepted; later runs finish it)",
      `/streams/${general}/delete_topic`,
      form({ topic_name: m.bigTopic }),
      { ...owner, once: true },
    );
  }
}
