/**
 * Embedding parley's engine without its HTTP server: open a store, create an
 * organization and people, send, read a narrow, mark messages read, and follow what
 * each write changed. Run it with `node dist/examples/embed-engine.js [DIR]` after
 * `npm run build`; test/examples/embed-engine.test.ts runs it in `npm test`, and the
 * README shows this file as it is.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/index.js";

export interface ExampleResult {
  readonly lines: readonly string[];
  /** Every event type the engine released to listeners, in order. */
  readonly eventTypes: readonly string[];
}

export function runExample(dir: string): ExampleResult {
  const lines: string[] = [];
  const eventTypes: string[] = [];
  // noSync: acknowledged writes may be lost on power failure; fine for an example.
  const store = openStore(dir, { noSync: true });
  // Every committed write is released to listeners twice: as a typed change set (what
  // changed, by kind and ID: what a cache or read model of yours drops) and as Zulip's
  // client events with their audiences (who must hear of it).
  const stopChanges = store.onChanges((changes) => {
    for (const [id, { fields }] of changes.message) lines.push(`change: message ${id} ${[...fields].join(",")}`);
    for (const [userId, ids] of changes.flags) lines.push(`change: flags of user ${userId} on ${ids.join(",")}`);
  });
  const stopEvents = store.onEvents((batch) => {
    for (const { event, audience } of batch.deliveries) {
      eventTypes.push(event.type);
      if (event.type === "message") lines.push(`event: message ${event.message.id} for ${audience.size} user(s)`);
    }
  });
  try {
    const { realm, owner } = store.createRealm({
      subdomain: "",
      name: "Acme",
      owner: { email: "olive@acme.test", fullName: "Olive" },
    });
    const ann = store.createUser({ realmId: realm.id, email: "ann@acme.test", fullName: "Ann" });
    store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [owner.id, ann.id] });

    const hello = store.sendMessage({
      senderId: owner.id,
      to: { type: "channel", channel: "general", topic: "plans" },
      content: "Planning the **launch** with @**Ann**",
    });
    const dm = store.sendMessage({
      senderId: owner.id,
      to: { type: "direct", users: [ann.id] },
      content: "Can you review it?",
    });

    // A narrow, as GET /messages takes it: full-text search in one channel.
    const found = store.getMessages(ann.id, {
      anchor: "newest",
      numBefore: 10,
      numAfter: 0,
      narrow: [
        { operator: "channel", operand: "general" },
        { operator: "search", operand: "plan" },
      ],
    });
    for (const { message, flags } of found.messages)
      lines.push(`ann sees ${message.id} in ${message.topic}: ${message.renderedContent} [${flags.join(",")}]`);

    // The same narrow asked of one message at a time (what event queues use).
    const matches = store.compileNarrow(ann.id, [{ operator: "search", operand: "launches" }]);
    lines.push(`"launches" matches message ${hello.id}: ${matches?.(hello.id) ?? true}`);

    lines.push(`ann's unread before: ${store.unreadSummary(ann.id).count}`);
    store.updateFlags(ann.id, [hello.id, dm.id], "read", "add");
    lines.push(`ann's unread after: ${store.unreadSummary(ann.id).count}`);
  } finally {
    stopChanges();
    stopEvents();
    store.close();
  }
  return { lines, eventTypes };
}

// Run directly: a fresh directory unless one is given.
if (process.argv[1]?.endsWith("embed-engine.js")) {
  const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), "parley-example-"));
  const { lines } = runExample(dir);
  for (const line of lines) console.log(line);
  if (process.argv[2] === undefined) rmSync(dir, { recursive: true, force: true });
}
