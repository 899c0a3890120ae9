/**
 * Edits, moves, resolves and deletions across kill -9: `parley serve` (from dist/) is
 * driven over HTTP by four concurrent loops, each changing only its own messages and
 * topics, one request at a time, and SIGKILLed mid-burst; three rounds. After each
 * kill the store must hold, for every loop, exactly the state its acknowledged
 * requests produced, or that state plus the one request it had in flight (each
 * request is one transaction: all of it or none). Every index then verifies clean,
 * through the store and through `parley verify`.
 *
 * Right before each kill an edit adds @**all** to a message in a channel of CROWD away
 * users, with one user per later write (PARLEY_EDIT_EMAIL_CHUNK_USERS=1): the kill most
 * likely lands among those writes, and the reopened store must still put the message in
 * every one of those users' email batches.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Store, User } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";
import { editEmailsWritten } from "../../src/engine/actions/missed-message-emails.js";
import { basicAuth, encodeParams } from "../support/http.js";
import { CLI, killStartedProcesses, serveProcess, stopProcess } from "../support/serve-process.js";

const dir = mkdtempSync(join(tmpdir(), "parley-changes-crash-"));
afterAll(() => {
  killStartedProcesses();
  rmSync(dir, { recursive: true, force: true });
});

const LOOPS = 4;
/** Away subscribers of the channel whose message each round's last edit adds @**all** to. */
const CROWD = 40;
const MESSAGES_PER_LOOP = 20;
const CHANNELS = ["general", "secret"] as const;
type ChannelName = (typeof CHANNELS)[number];

/** A loop's message as it should be stored. */
interface Tracked {
  content: string;
  channel: ChannelName;
  topic: string;
}
type LoopState = Map<number, Tracked>;

type Change =
  | { kind: "edit"; id: number; content: string }
  | {
      kind: "move";
      id: number;
      topic?: string;
      channel?: ChannelName;
      mode: "change_one" | "change_later" | "change_all";
    }
  | { kind: "delete"; id: number }
  | { kind: "delete_topic"; channel: ChannelName; topic: string };

const RESOLVED = "✔ ";

/** The loop's next change, a function of its position and state (the parent replays it). */
function nextChange(loop: number, step: number, state: LoopState): Change | null {
  const live = [...state.keys()].sort((a, b) => a - b);
  if (live.length === 0) return null;
  const id = live[(step * 7 + loop) % live.length]!;
  const at = state.get(id)!;
  const topics = [`loop${loop}`, `loop${loop}-a`, `loop${loop}-b`];
  const otherTopic = topics.filter((t) => t !== at.topic.replace(RESOLVED, ""))[step % 2]!;
  switch (step % 8) {
    case 0:
    case 4:
      return { kind: "edit", id, content: `l${loop} m${id} v${step}` };
    case 1:
      return { kind: "move", id, topic: otherTopic, mode: "change_one" };
    case 2:
      return { kind: "move", id, topic: otherTopic, mode: "change_all" };
    case 3:
      return { kind: "move", id, channel: at.channel === "general" ? "secret" : "general", mode: "change_later" };
    case 5: {
      const topic = at.topic.startsWith(RESOLVED) ? at.topic.slice(RESOLVED.length) : `${RESOLVED}${at.topic}`;
      return { kind: "move", id, topic, mode: "change_all" };
    }
    case 6:
      return { kind: "delete", id };
    default:
      return step % 24 === 7 ? { kind: "delete_topic", channel: at.channel, topic: at.topic } : null;
  }
}

/** The state after `change` (what Zulip does to the loop's own messages). */
function applied(state: LoopState, change: Change | null): LoopState {
  const next: LoopState = new Map([...state].map(([id, t]) => [id, { ...t }]));
  if (change === null) return next;
  switch (change.kind) {
    case "edit":
      next.get(change.id)!.content = change.content;
      return next;
    case "delete":
      next.delete(change.id);
      return next;
    case "delete_topic":
      for (const [id, t] of state) if (t.channel === change.channel && t.topic === change.topic) next.delete(id);
      return next;
    case "move": {
      const target = state.get(change.id)!;
      for (const [id, t] of next) {
        const sameTopic = state.get(id)!.channel === target.channel && state.get(id)!.topic === target.topic;
        const moves =
          id === change.id ||
          (sameTopic && (change.mode === "change_all" || (change.mode === "change_later" && id > change.id)));
        if (!moves) continue;
        if (change.topic !== undefined) t.topic = change.topic;
        if (change.channel !== undefined) t.channel = change.channel;
      }
      return next;
    }
  }
}

interface Server {
  readonly url: string;
  readonly owner: User;
  readonly channelIds: Record<ChannelName, number>;
}

function request(server: Server, change: Change): { method: string; path: string; params: Record<string, unknown> } {
  switch (change.kind) {
    case "edit":
      return { method: "PATCH", path: `/messages/${change.id}`, params: { content: change.content } };
    case "delete":
      return { method: "DELETE", path: `/messages/${change.id}`, params: {} };
    case "delete_topic":
      return {
        method: "POST",
        path: `/streams/${server.channelIds[change.channel]}/delete_topic`,
        params: { topic_name: change.topic },
      };
    case "move":
      return {
        method: "PATCH",
        path: `/messages/${change.id}`,
        params: {
          ...(change.topic !== undefined ? { topic: change.topic } : {}),
          ...(change.channel !== undefined ? { stream_id: server.channelIds[change.channel] } : {}),
          propagate_mode: change.mode,
          send_notification_to_old_thread: true,
          send_notification_to_new_thread: true,
        },
      };
  }
}

interface LoopRun {
  /** State after the acknowledged changes. */
  state: LoopState;
  step: number;
  /** The change sent when the server died, if its answer never came. */
  inFlight: Change | null;
}

/** Runs a loop until the server dies; every answer must be a success. */
async function runLoop(server: Server, loop: number, run: LoopRun, acked: { n: number }): Promise<void> {
  for (;;) {
    const change = nextChange(loop, run.step, run.state);
    if (change === null) {
      run.step++;
      if (run.state.size === 0) return;
      continue;
    }
    const { method, path, params } = request(server, change);
    run.inFlight = change;
    let response: Response;
    try {
      response = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { Authorization: basicAuth(server.owner) },
        body: encodeParams(params),
      });
    } catch {
      return; // the server is gone; the change may or may not have been stored
    }
    const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    if (response.status !== 200)
      throw new Error(
        `loop ${loop} step ${run.step}: ${JSON.stringify(change)} -> ${response.status} ${JSON.stringify(body)}`,
      );
    run.state = applied(run.state, change);
    run.inFlight = null;
    run.step++;
    acked.n++;
  }
}

/** The loop's messages as stored (IDs the loop ever owned). */
function stored(store: Store, ids: readonly number[], channelNames: Map<number, ChannelName>): LoopState {
  const out: LoopState = new Map();
  for (const id of ids) {
    const m = store.findMessageRecord(id);
    if (!m) continue;
    if (m.recipient.type !== "channel") throw new Error(`message ${id} is no longer a channel message`);
    out.set(id, { content: m.content, channel: channelNames.get(m.recipient.channelId)!, topic: m.topic });
  }
  return out;
}

const same = (a: LoopState, b: LoopState) =>
  JSON.stringify([...a].sort(([x], [y]) => x - y)) === JSON.stringify([...b].sort(([x], [y]) => x - y));

describe("message changes across kill -9", () => {
  it("every acknowledged edit, move and deletion survives, and the indexes verify clean", async () => {
    const setup = openStore(dir, { noSync: true });
    const { owner } = setup.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
    setup.subscribe(owner.id, { channels: [{ name: "general" }] });
    setup.subscribe(owner.id, {
      channels: [{ name: "secret" }],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
    });
    const channels = setup.getChannels(owner.id, {});
    const channelIds = Object.fromEntries(
      CHANNELS.map((name) => [name, channels.find((c) => c.name === name)!.id]),
    ) as Record<ChannelName, number>;
    const channelNames = new Map(CHANNELS.map((name) => [channelIds[name], name]));
    // Away all along, and batched for longer than the test runs: each keeps every item until the end.
    const crowd = setup.batch(() =>
      Array.from({ length: CROWD }, (_, i) => {
        const user = setup.createUser({ realmId: owner.realmId, email: `c${i}@r.dev`, fullName: `Crowd ${i}` });
        setup.updateSettings(user.id, { settings: { email_notifications_batching_period_seconds: 86_400 } });
        return user.id;
      }),
    );
    setup.subscribe(owner.id, { channels: [{ name: "crowd" }], principals: crowd });
    const crowdMessages = [0, 1, 2].map(
      (round) =>
        setup.sendMessage({
          senderId: owner.id,
          to: { type: "channel", channel: "crowd", topic: "news" },
          content: `round ${round}`,
        }).id,
    );
    const runs: LoopRun[] = [];
    const owned: number[][] = [];
    for (let loop = 0; loop < LOOPS; loop++) {
      const state: LoopState = new Map();
      for (let i = 0; i < MESSAGES_PER_LOOP; i++) {
        const content = `l${loop} m${i} original`;
        const { id } = setup.sendMessage({
          senderId: owner.id,
          to: { type: "channel", channel: channelIds.general, topic: `loop${loop}` },
          content,
        });
        state.set(id, { content, channel: "general", topic: `loop${loop}` });
      }
      owned.push([...state.keys()]);
      runs.push({ state, step: 0, inFlight: null });
    }
    setup.close();

    let totalAcked = 0;
    /** Changes in flight at a kill, by whether the store had them (printed: the kill lands at random). */
    const inFlight = { stored: 0, lost: 0 };
    /** Email chunks the kills left stored, each round's. */
    const chunksLeft: number[] = [];
    for (const [round, target] of [30, 45, 60].entries()) {
      const { child, url } = await serveProcess(dir, [], { PARLEY_EDIT_EMAIL_CHUNK_USERS: "1" });
      const server: Server = { url, owner, channelIds };
      const acked = { n: 0 };
      const loops = runs.map((run, loop) => runLoop(server, loop, run, acked));
      while (acked.n < target && runs.some((r) => r.state.size > 0)) await new Promise((r) => setTimeout(r, 2));
      const wildcard = await fetch(`${url}/api/v1/messages/${crowdMessages[round]}`, {
        method: "PATCH",
        headers: { Authorization: basicAuth(owner) },
        body: encodeParams({ content: `@**all** round ${round}` }),
      });
      expect(wildcard.status).toBe(200);
      await stopProcess(child, "SIGKILL");
      await Promise.all(loops);
      totalAcked += acked.n;

      const store = openStore(dir, { noSync: true });
      try {
        runs.forEach((run, loop) => {
          const found = stored(store, owned[loop]!, channelNames);
          const withInFlight = run.inFlight ? applied(run.state, run.inFlight) : null;
          if (withInFlight && same(found, withInFlight)) {
            run.state = withInFlight;
            run.step++;
            inFlight.stored++;
          } else {
            if (withInFlight) inFlight.lost++;
            expect(Object.fromEntries(found), `loop ${loop}: the acknowledged state`).toEqual(
              Object.fromEntries(run.state),
            );
          }
          run.inFlight = null;
          // The narrows agree with the records: each topic lists the loop's messages in it.
          for (const [id, t] of run.state) {
            const page = store.getMessages(owner.id, {
              anchor: id,
              numBefore: 0,
              numAfter: 0,
              narrow: [
                ["channel", t.channel],
                ["topic", t.topic],
              ],
            });
            expect(
              page.messages.map((m) => m.message.id),
              `message ${id} in ${t.channel} > ${t.topic}`,
            ).toEqual([id]);
          }
        });
        chunksLeft.push([...internals(store).tables.editEmailChunks.getKeys()].length);
        // With the chunks the kill left (the writer resumes them once this turn ends).
        const report = store.verify();
        expect(report.differences).toEqual([]);
        expect(report.problems).toEqual([]);
        await editEmailsWritten(internals(store));
        // Every edited crowd message in every crowd user's batch: what one write would have given.
        const batches = new Map(store.missedEmailBatches().map((b) => [b.userId, b.items.map((i) => i.messageId)]));
        const missing = crowd.filter((userId) =>
          crowdMessages.slice(0, round + 1).some((id) => !(batches.get(userId) ?? []).includes(id)),
        );
        expect(missing, `crowd users without an edited message's email (round ${round})`).toEqual([]);
      } finally {
        store.close();
      }
    }
    console.log(
      `acknowledged changes: ${totalAcked}; in flight at a kill: ${JSON.stringify(inFlight)}; ` +
        `email chunks left by each kill (of ${CROWD - 1}): ${chunksLeft.join(", ")}`,
    );
    expect(totalAcked).toBeGreaterThanOrEqual(80);
    const verify = spawnSync(process.execPath, [CLI, "verify", "--data", dir], { encoding: "utf8" });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
  }, 120_000);
});
