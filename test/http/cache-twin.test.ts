/**
 * The cached server against a cache-free twin: one store, two HTTP servers (one with
 * every cache on, one with message JSON, window and list caches off). Random actions
 * (through either server's API, or the engine where no endpoint exists yet) change the
 * store; after each, every probe (message windows of several users and narrows, single
 * messages, user and group lists, register sections) must answer the same on both.
 * A cache that misses an invalidation answers from before the change and fails here.
 *
 * Seeds: TWIN_SEEDS=1,2,3 and TWIN_ACTIONS=200 widen a run; a failure names the seed,
 * the action and the probe.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import type { Store, User } from "../../src/engine/index.js";
import { basicAuth, encodeParams, startServer, TEST_SCRYPT_COST, type TestServer } from "../support/http.js";

const SEEDS = (process.env["TWIN_SEEDS"] ?? "1,2").split(",").map(Number);
const ACTIONS = Number(process.env["TWIN_ACTIONS"] ?? 60);

/** mulberry32: small, seedable, good enough to pick actions. */
function randomFrom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function call(
  base: string,
  store: Store,
  user: User,
  method: string,
  path: string,
  params: Record<string, unknown> = {},
): Promise<Answer> {
  const form = encodeParams(params);
  const isQuery = method === "GET" || method === "DELETE";
  const url = `${base}/api/v1${path}${isQuery && form.size > 0 ? `?${form}` : ""}`;
  const current = store.findUser(user.id) ?? user;
  const response = await fetch(url, {
    method,
    headers: { Authorization: basicAuth(current) },
    body: isQuery ? undefined : form,
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
}

interface Twin {
  readonly cached: TestServer;
  readonly plain: ParleyServer;
  readonly plainBase: string;
}

let twin: Twin | null = null;
afterEach(() => {
  twin?.plain.close();
  twin?.cached.close();
  twin = null;
});

async function startTwin(): Promise<Twin> {
  // Probes as deactivated users fail authentication on purpose: no limit on that.
  const cached = await startServer({ authFailureLimit: false });
  const plain = createServer(cached.t.store, {
    rateLimit: false,
    authFailureLimit: false,
    logError: () => undefined,
    dataDir: cached.t.dir,
    passwordHashCost: TEST_SCRYPT_COST,
    messageCacheBytes: 0,
    windowCacheBytes: 0,
    listCaches: false,
  });
  const port = await plain.listen(0, "127.0.0.1");
  return { cached, plain, plainBase: `http://127.0.0.1:${port}` };
}

const EMOJI = ["smile", "heart", "octopus"];
const TOPICS = ["t1", "t2", "plans"];
const CHANNELS = ["general", "secret", "random", "ideas"];
const WORDS = ["hello", "planning", "ahead", "lunch", "ideas", "deploy"];

describe("cached server and cache-free twin", () => {
  for (const seed of SEEDS) {
    it(`answer every probe the same after every action (seed ${seed})`, async () => {
      twin = await startTwin();
      const { cached, plainBase } = twin;
      const store = cached.t.store;
      const { owner, alice, bob, guest, realm, general } = cached.seed;
      const carol = store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
      store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [carol.id, guest.id] });
      const people = [owner, alice, bob, guest, carol];
      /** Whose windows the probes read. */
      const viewers = [owner, alice, bob, guest];
      const random = randomFrom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const sent: number[] = [];
      const groups: number[] = [];
      const emoji: string[] = [];
      const bases = [cached.base, plainBase];
      const act = async (user: User, method: string, path: string, params: Record<string, unknown> = {}) => {
        return call(pick(bases), store, user, method, path, params);
      };
      const channelId = (name: string) =>
        store.getChannels(owner.id, {}).find((c) => c.name === name)?.id ?? general.id;
      const recent = () => (sent.length === 0 ? [] : [pick(sent.slice(-8))]);

      /** [weight, name, action]: sends and reactions come most often, as in a real realm. */
      const actions: [number, string, () => Promise<unknown>][] = [
        [
          6,
          "send to a channel",
          async () => {
            const r = await act(pick(people), "POST", "/messages", {
              type: "stream",
              to: random() < 0.5 ? "general" : pick(CHANNELS),
              topic: pick(TOPICS),
              content: `${pick(WORDS)} ${pick(WORDS)} @**Alice**`,
            });
            if (typeof r.body["id"] === "number") sent.push(r.body["id"]);
            return r.status;
          },
        ],
        [
          3,
          "send a direct message",
          async () => {
            const from = pick(people);
            const r = await act(from, "POST", "/messages", {
              type: "direct",
              to: [pick(people).id],
              content: pick(WORDS),
            });
            if (typeof r.body["id"] === "number") sent.push(r.body["id"]);
            return r.status;
          },
        ],
        [
          3,
          "react",
          async () =>
            (await act(pick(people), "POST", `/messages/${recent()[0] ?? 1}/reactions`, { emoji_name: pick(EMOJI) }))
              .status,
        ],
        [
          2,
          "unreact",
          async () => {
            // One of the user's own reactions when there is one, so that most removals change something.
            const user = pick(people);
            for (const id of sent.slice(-8).reverse()) {
              const mine = store.findMessageRecord(id)?.reactions.find((r) => r.userId === user.id);
              if (mine)
                return (await act(user, "DELETE", `/messages/${id}/reactions`, { emoji_name: mine.emojiName })).status;
            }
            return (await act(user, "DELETE", `/messages/${recent()[0] ?? 1}/reactions`, { emoji_name: pick(EMOJI) }))
              .status;
          },
        ],
        [
          4,
          "flag",
          async () => {
            // A probed user toggles a flag of a message they can read: the change is real.
            const user = pick(viewers);
            const flag = pick(["starred", "read"]);
            const id = recent()[0] ?? 1;
            let has = false;
            try {
              has = store.getMessage(user.id, id).flags.includes(flag as "read");
            } catch {
              // Not theirs to read: the request is refused alike by both servers.
            }
            return (await act(user, "POST", "/messages/flags", { messages: [id], op: has ? "remove" : "add", flag }))
              .status;
          },
        ],
        [
          1,
          "mark a topic read",
          async () =>
            (
              await act(pick(people), "POST", "/mark_topic_as_read", {
                stream_id: general.id,
                topic_name: pick(TOPICS),
              })
            ).status,
        ],
        [
          2,
          "subscribe",
          async () =>
            (
              await act(owner, "POST", "/users/me/subscriptions", {
                subscriptions: [{ name: pick(CHANNELS) }],
                principals: [pick(people).id],
              })
            ).status,
        ],
        [
          1,
          "unsubscribe",
          async () =>
            (await act(pick(people), "DELETE", "/users/me/subscriptions", { subscriptions: [pick(CHANNELS)] })).status,
        ],
        [
          2,
          "mute a channel",
          async () =>
            (
              await act(pick(viewers), "POST", "/users/me/subscriptions/properties", {
                subscription_data: [
                  { stream_id: channelId(pick(CHANNELS)), property: "is_muted", value: random() < 0.5 },
                ],
              })
            ).status,
        ],
        [
          3,
          "set a topic policy",
          async () => {
            // Toggles muting mostly (what in:home shows), following sometimes.
            const user = pick(viewers);
            const topic = pick(TOPICS);
            let current = 0;
            try {
              current =
                store.userTopics(user.id).find((u) => u.channelId === general.id && u.topic === topic)?.policy ?? 0;
            } catch {
              // A deactivated user: refused alike by both servers.
            }
            const policy = random() < 0.2 ? 3 : current === 1 ? 0 : 1;
            return (
              await act(user, "POST", "/user_topics", { stream_id: general.id, topic, visibility_policy: policy })
            ).status;
          },
        ],
        [
          2,
          "rename a user",
          async () =>
            (await act(owner, "PATCH", `/users/${pick(people).id}`, { full_name: `${pick(WORDS)} ${pick(WORDS)}` }))
              .status,
        ],
        [
          1,
          "rename oneself",
          async () => (await act(pick(people), "PATCH", "/settings", { full_name: `Self ${pick(WORDS)}` })).status,
        ],
        [
          1,
          "change a time zone",
          async () =>
            (await act(pick(people), "PATCH", "/settings", { timezone: pick(["Europe/Paris", "Asia/Tokyo", ""]) }))
              .status,
        ],
        [
          1,
          "change a setting",
          async () =>
            (await act(pick(people), "PATCH", "/settings", { starred_message_counts: random() < 0.5 })).status,
        ],
        [
          1,
          "change a role",
          async () =>
            (
              await act(owner, "PATCH", `/users/${pick([alice, bob, guest, carol]).id}`, {
                role: pick([200, 400, 600]),
              })
            ).status,
        ],
        [
          1,
          "deactivate or reactivate",
          async () => {
            const user = pick([alice, bob, guest, carol]);
            store.setUserActive(user.id, !(store.findUser(user.id)?.isActive ?? true));
            return "ok";
          },
        ],
        [
          2,
          "create a group",
          async () => {
            const r = await act(pick(people), "POST", "/user_groups/create", {
              name: `g${groups.length}-${seed}`,
              description: "d",
              members: [pick(people).id],
            });
            if (typeof r.body["group_id"] === "number") groups.push(r.body["group_id"]);
            return r.status;
          },
        ],
        [
          2,
          "change group members",
          async () => {
            if (groups.length === 0) return "none";
            const edit = random() < 0.5 ? { add: [pick(people).id] } : { delete: [pick(people).id] };
            return (await act(owner, "POST", `/user_groups/${pick(groups)}/members`, edit)).status;
          },
        ],
        [
          1,
          "rename a group",
          async () =>
            groups.length === 0
              ? "none"
              : (
                  await act(owner, "PATCH", `/user_groups/${pick(groups)}`, {
                    name: `renamed-${pick(WORDS)}-${groups.length}`,
                  })
                ).status,
        ],
        [
          1,
          "deactivate a group",
          async () =>
            groups.length === 0 ? "none" : (await act(owner, "POST", `/user_groups/${pick(groups)}/deactivate`)).status,
        ],
        [
          1,
          "add a custom emoji",
          async () => {
            const name = `emoji${emoji.length}`;
            store.addRealmEmoji(owner.id, {
              name,
              fileName: `${"0123456789abcdef".slice(0, 15)}${emoji.length % 10}.png`,
              isAnimated: false,
            });
            emoji.push(name);
            return "ok";
          },
        ],
        [
          1,
          "remove a custom emoji",
          async () =>
            emoji.length === 0 ? "none" : (await act(owner, "DELETE", `/realm/emoji/${pick(emoji)}`)).status,
        ],
        [
          1,
          "set the channel announcements channel",
          async () => {
            store.setNewChannelAnnouncementsChannel(realm.id, random() < 0.5 ? null : channelId(pick(CHANNELS)));
            return "ok";
          },
        ],
        [
          1,
          "regenerate an API key",
          async () => (await act(pick(people), "POST", "/users/me/api_key/regenerate")).status,
        ],
      ];

      const weighted = <T extends readonly [number, ...unknown[]]>(items: readonly T[]): T => {
        let left = random() * items.reduce((sum, item) => sum + item[0], 0);
        for (const item of items) if ((left -= item[0]) < 0) return item;
        return items[items.length - 1]!;
      };

      const narrows: unknown[] = [
        [],
        [{ operator: "channel", operand: "general" }],
        [
          { operator: "channel", operand: "general" },
          { operator: "topic", operand: "t1" },
        ],
        [{ operator: "channel", operand: "secret" }],
        // Muted channels and topics leave it.
        [{ operator: "in", operand: "home" }],
        [{ operator: "is", operand: "starred" }],
        [{ operator: "is", operand: "dm" }],
        [{ operator: "search", operand: "planning" }],
      ];
      type Probe = [string, (base: string) => Promise<Answer>];
      const probes = (): Probe[] => {
        const out: Probe[] = [];
        for (const viewer of viewers) {
          for (const narrow of narrows) {
            out.push([
              `GET /messages as ${viewer.fullName} narrow ${JSON.stringify(narrow)}`,
              (base) =>
                call(base, store, viewer, "GET", "/messages", {
                  anchor: "newest",
                  num_before: 12,
                  num_after: 0,
                  narrow,
                }),
            ]);
          }
        }
        out.push([
          `GET /messages first_unread as Alice`,
          (base) =>
            call(base, store, alice, "GET", "/messages", {
              anchor: "first_unread",
              num_before: 4,
              num_after: 4,
              narrow: [],
              client_gravatar: false,
            }),
        ]);
        out.push([
          `GET /messages raw Markdown as Bob`,
          (base) =>
            call(base, store, bob, "GET", "/messages", {
              anchor: "newest",
              num_before: 8,
              num_after: 0,
              apply_markdown: false,
            }),
        ]);
        for (const id of sent.slice(-2))
          out.push([`GET /messages/${id}`, (base) => call(base, store, alice, "GET", `/messages/${id}`)]);
        out.push(["GET /users", (base) => call(base, store, alice, "GET", "/users", { client_gravatar: false })]);
        out.push([
          "GET /users with profile data",
          (base) => call(base, store, bob, "GET", "/users", { include_custom_profile_fields: true }),
        ]);
        out.push([
          "GET /user_groups",
          (base) => call(base, store, bob, "GET", "/user_groups", { include_deactivated_groups: true }),
        ]);
        out.push([
          "register",
          async (base) => {
            const r = await call(base, store, carol, "POST", "/register", {
              fetch_event_types: ["realm_user", "realm_user_groups", "message", "update_message_flags"],
            });
            const { queue_id: queueId, last_event_id: _last, ...rest } = r.body;
            if (typeof queueId === "string") await call(base, store, carol, "DELETE", "/events", { queue_id: queueId });
            return { status: r.status, body: rest };
          },
        ]);
        return out;
      };

      const history: string[] = [];
      for (let i = 0; i < ACTIONS; i++) {
        const [, name, run] = weighted(actions);
        history.push(`${i}: ${name} -> ${String(await run())}`);
        // The twins in parallel; one server's probes one after another. The cached server
        // is asked twice: a window is kept on its second miss, so the next action meets
        // every probe in the cache (once kept, the first answer is the cache's too).
        const [first, second, reference] = await Promise.all(
          [cached.base, cached.base, plainBase].map(async (base, n) => {
            const answers: Answer[] = [];
            if (n === 1) await new Promise<void>((resolve) => setImmediate(resolve));
            for (const [, probe] of probes()) answers.push(await probe(base));
            return answers;
          }),
        );
        const labels = probes().map(([label]) => label);
        reference!.forEach((expected, k) => {
          const context = `seed ${seed}, after action ${history.slice(-4).join("; ")}: ${labels[k]}`;
          expect(first![k], context).toEqual(expected);
          expect(second![k], `${context} (asked again)`).toEqual(expected);
        });
      }
      // The run exercised the caches: repeated windows were answered from the window cache.
      expect(cached.server.windows.hits).toBeGreaterThan(0);
    });
  }
});
