/**
 * @module bench/worst-inputs-sends
 * The accepted sends whose cost grows with the users they reach, not with their text:
 * POST /messages to the 10,000-subscriber channel with @**all** (every subscriber a
 * missed-message email candidate), with @**topic** in its biggest topic (every earlier
 * message's sender a participant), and mentioning a group of 10,000 members. The
 * generated dataset has no user groups, so the input creates its group (unmeasured, once).
 * The owner sends them: a wildcard mention in a channel of more than 15 subscribers needs
 * can_mention_many_users_group. Each run is a new message; nothing is undone (a real
 * server meets the second @**all** with every away subscriber's email batch already open).
 */
import type { Manifest } from "../tools/generate/manifest.js";
import type { AddCase, Step } from "./worst-inputs-case.js";

const form = (params: Record<string, unknown>) => {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) out.set(k, typeof v === "string" ? v : JSON.stringify(v));
  return Buffer.from(out.toString());
};
const MENTION_GROUP = "bench mention group";
const MENTION_GROUP_MEMBERS = 10_000;

export function sendCases(add: AddCase, m: Manifest, auth: { owner: string }): void {
  const route = "POST /messages";
  const general = m.generalChannelId;
  const owner = { auth: auth.owner };
  const to = (topic: string, content: string) => form({ type: "stream", to: general, topic, content });
  add(
    route,
    "@**all** in the 10,000-subscriber channel (accepted)",
    "/messages",
    to("bench send all", "@**all** look at this"),
    owner,
  );
  add(
    route,
    "@**topic** in the biggest topic of the 10,000-subscriber channel (accepted)",
    "/messages",
    to(m.bigTopic, "@**topic** look at this"),
    owner,
  );
  const group: Step = {
    method: "POST",
    path: "/user_groups/create",
    body: form({
      name: MENTION_GROUP,
      description: "mentioned by bench:worst",
      members: Array.from({ length: Math.min(MENTION_GROUP_MEMBERS, m.scale.users) }, (_, i) => 1 + i),
    }),
    capture: (_reply, ctx) => (ctx["mentionGroup"] = true),
    unless: "mentionGroup",
  };
  add(
    route,
    `@*${MENTION_GROUP}* (${MENTION_GROUP_MEMBERS.toLocaleString("en")} members) in the 10,000-subscriber channel (accepted)`,
    "/messages",
    to("bench send group", `@*${MENTION_GROUP}* look at this`),
    { ...owner, prepare: [group] },
  );
}
