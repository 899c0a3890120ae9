/**
 * Incoming webhooks over HTTP (/api/v1/external/{integration}): each integration fed
 * the services' own sample payloads (test/fixtures/webhooks, from Zulip's fixtures)
 * must store Zulip's topic and content exactly (expected texts from Zulip's tests,
 * or derived from its templates where a fixture is trimmed); the api_key refusals;
 * `stream` / `topic`; a direct message to the owner without a channel; the owner's
 * notices for a missing channel, a body that is not JSON and a missing event header.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, rawRequest, startServer, type TestServer } from "../support/http.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/webhooks");
const fixture = (path: string) => readFileSync(join(FIXTURES, path), "utf8");

let s: TestServer;
let hookBot: User;
let genericBot: User;
let foreignBot: User;
let notificationSeen = 0;

beforeAll(async () => {
  s = await startServer();
  const { store } = s.t;
  const realmId = s.seed.realm.id;
  hookBot = store.createUser({
    realmId,
    email: "hook-bot@test.dev",
    fullName: "Hook Bot",
    bot: { type: 2, ownerId: s.seed.bob.id },
  });
  genericBot = store.createUser({
    realmId,
    email: "generic-bot@test.dev",
    fullName: "Generic Bot",
    bot: { type: 1, ownerId: s.seed.bob.id },
  });
  const bee = store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen" },
  });
  foreignBot = store.createUser({
    realmId: bee.realm.id,
    email: "drone-bot@bee.test",
    fullName: "Drone",
    bot: { type: 2, ownerId: bee.owner.id },
  });
});
afterAll(() => s.close());

type Reply = { status: number; body: Record<string, unknown> };
type Json = Record<string, unknown>;

interface HookOptions {
  readonly query?: Record<string, string>;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
  readonly as?: User | null;
}

function hook(integration: string, body: string, options: HookOptions = {}): Promise<Reply> {
  const as = options.as === undefined ? hookBot : options.as;
  const query = new URLSearchParams({
    ...(as ? { api_key: s.t.store.getUser(as.id).apiKey } : {}),
    ...options.query,
  });
  return rawRequest(
    s.base,
    "POST",
    `/external/${integration}?${query}`,
    { "Content-Type": options.contentType ?? "application/json", ...options.headers },
    body,
  );
}

/** The newest message bob (the bots' owner, in #general) can read. */
function newest() {
  const { store } = s.t;
  const bob = s.seed.bob.id;
  return store.getMessage(bob, store.maxMessageId(bob)).message;
}

async function expectPosted(
  reply: Promise<Reply>,
  topic: string,
  content: string,
  sender: User = hookBot,
): Promise<void> {
  const r = await reply;
  expect(r.body).toMatchObject({ result: "success", msg: "" });
  expect(r.status).toBe(200);
  const message = newest();
  expect(message.senderId).toBe(sender.id);
  expect(message.topic).toBe(topic);
  expect(message.content).toBe(content);
}

async function expectNothingPosted(reply: Promise<Reply>): Promise<Reply> {
  const before = s.t.store.maxMessageId(s.seed.bob.id);
  const r = await reply;
  expect(s.t.store.maxMessageId(s.seed.bob.id)).toBe(before);
  return r;
}

const GENERAL = { stream: "general" };

describe("Zulip's generic JSON webhook", () => {
  it("posts the payload as Python's json.dumps(indent=2) in a code block, topic JSON", async () => {
    const expected = [
      "```json",
      "{",
      '  "check_id": 2048467,',
      '  "check_name": "Test check",',
      '  "check_type": "HTTP",',
      '  "check_params": {',
      '    "basic_auth": false,',
      '    "encryption": false,',
      '    "full_url": "http://someurl.com/",',
      '    "header": "User-Agent:Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)",',
      '    "hostname": "someurl.com",',
      '    "ipv6": false,',
      '    "port": 80,',
      '    "url": "/"',
      "  },",
      '  "tags": [],',
      '  "previous_state": "UP",',
      '  "current_state": "DOWN",',
      '  "state_changed_timestamp": 1457939434,',
      '  "state_changed_utc_time": "2016-03-14T07:10:34",',
      '  "long_description": "Non-recoverable failure in name resolution",',
      '  "description": "DNS error",',
      '  "first_probe": {',
      '    "ip": "85.17.156.99",',
      '    "ipv6": "2001:1af8:4100:a09b::454",',
      '    "location": "Amsterdam 5, Netherlands"',
      "  },",
      '  "second_probe": {',
      '    "ip": "64.141.100.136",',
      '    "ipv6": "",',
      '    "location": "Calgary, Canada"',
      "  }",
      "}",
      "```",
    ].join("\n");
    await expectPosted(
      hook("json", fixture("json/pingdom_http_up_to_down.json"), { query: GENERAL }),
      "JSON",
      expected,
    );
  });

  it("escapes non-ASCII text as Python does (ensure_ascii)", async () => {
    const body = JSON.stringify({ city: "Zürich 🐝" });
    await expectPosted(
      hook("json", body, { query: GENERAL }),
      "JSON",
      '```json\n{\n  "city": "Z\\u00fcrich \\ud83d\\udc1d"\n}\n```',
    );
  });

  it("refuses a body that is not JSON and tells the bot's owner", async () => {
    const r = await hook("json", "{not json", { query: GENERAL });
    expect(r).toMatchObject({ status: 400, body: { result: "error", code: "BAD_REQUEST", msg: "Malformed JSON" } });
    const notice = newest();
    expect(notice.recipient).toMatchObject({ type: "direct" });
    expect(s.t.store.getUser(notice.senderId).email).toBe("notification-bot@zulip.com");
    expect(notice.content).toBe(
      "Hi there! It looks like you tried to set up the Zulip JSON integration,\n" +
        "but didn't correctly configure the webhook to send data in the JSON format\nthat this integration expects!",
    );
    notificationSeen = notice.id;
  });
});

describe("the Slack-compatible incoming webhook", () => {
  it("posts a text payload under Zulip's '(no topic)', stored as the empty topic", async () => {
    await expectPosted(
      hook("slack_incoming", fixture("slack_incoming/text.json"), { query: GENERAL }),
      "",
      "Hello, world.",
    );
  });

  it("reads a form-encoded payload: the icon emoji, the channel as the topic", async () => {
    await expectPosted(
      hook("slack_incoming", fixture("slack_incoming/urlencoded_text.txt").trim(), {
        query: GENERAL,
        contentType: "application/x-www-form-urlencoded",
      }),
      "devops",
      ":zap: chris has started deploying project tag v0.0.2rc10 to staging",
    );
  });

  it("renders a legacy attachment with Slack's links and bold converted", async () => {
    const expected = `## [[FIRING:2] InstanceDown for api-server (env="prod", severity="critical")](https://alertmanager.local//#/alerts?receiver=default)

:chart_with_upwards_trend: **[Graph](http://generator.local/1)**   :notebook: **[Runbook](https://runbook.local/1)**

**Alert details**:
**Alert:** api-server down - \`critical\`
**Description:** api-server at 1.2.3.4:8080 couldn't be scraped **Details:**
   • **alertname:** \`InstanceDown\`
   • **env:** \`prod\`
   • **instance:** \`1.2.3.4:8080\`
   • **job:** \`api-server\`
   • **severity:** \`critical\`

**Alert:** api-server down - \`critical\`
**Description:** api-server at 1.2.3.4:8081 couldn't be scraped **Details:**
   • **alertname:** \`InstanceDown\`
   • **env:** \`prod\`
   • **instance:** \`1.2.3.4:8081\`
   • **job:** \`api-server\`
   • **severity:** \`critical\``;
    await expectPosted(
      hook("slack_incoming", fixture("slack_incoming/attachment.json"), { query: GENERAL }),
      "prometheus-alerts",
      expected,
    );
  });

  it("renders attachment fields, skipping a field with neither title nor value", async () => {
    await expectPosted(
      hook("slack_incoming", fixture("slack_incoming/attachment_fields.json"), { query: GENERAL }),
      "",
      "Build bla bla succeeded\n\n**Requested by**: Some user\n**Duration**: 00:02:03\n" +
        "**Build pipeline**: ConsumerAddressModule\n**Title without value**\nValue without title",
    );
  });

  it("renders blocks: an image accessory, no button, fields as a two-column table", async () => {
    await expectPosted(
      hook("slack_incoming", fixture("slack_incoming/attachment_blocks.json"), { query: GENERAL }),
      "",
      `This is a section block with an accessory image.

[cute cat](https://pbs.twimg.com/profile_images/625633822235693056/lNGUneLX_400x400.jpg)

This is a section block with a button.

| | |
|-|-|
| one | two |
| three | four |
| five |  |`,
    );
  });

  it("converts Slack's emphasis as Zulip's tests expect", async () => {
    const cases = [
      ["some *foo* word", "some **foo** word"],
      ["*foo*", "**foo**"],
      ["*foo* *bar*", "**foo** **bar**"],
      ["*foo*a*bar*", "*foo*a*bar*"],
      ["some _foo_ word", "some *foo* word"],
    ] as const;
    for (const [text, content] of cases)
      await expectPosted(hook("slack_incoming", JSON.stringify({ text }), { query: GENERAL }), "", content);
  });

  it("posts nothing for a null text, and wants a payload when the body is a form", async () => {
    const r = await expectNothingPosted(hook("slack_incoming", JSON.stringify({ text: null }), { query: GENERAL }));
    expect(r).toMatchObject({ status: 200, body: { result: "success" } });
    await expectRejectedUnchanged(
      s,
      () => hook("slack_incoming", "", { query: GENERAL, contentType: "application/x-www-form-urlencoded" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'payload' argument",
    );
  });
});

describe("where the message goes", () => {
  it("the topic parameter overrides the integration's topic", async () => {
    await expectPosted(hook("json", "{}", { query: { ...GENERAL, topic: "mine" } }), "mine", "```json\n{}\n```");
  });

  it("a stream given by ID", async () => {
    const query = { stream: String(s.seed.general.id) };
    await expectPosted(hook("json", "{}", { query }), "JSON", "```json\n{}\n```");
    expect(newest().recipient).toMatchObject({ type: "channel", channelId: s.seed.general.id });
  });

  it("without a stream, a direct message to the bot's owner", async () => {
    await expectPosted(hook("json", "{}"), "", "```json\n{}\n```");
    expect(newest().recipient).toMatchObject({ type: "direct" });
  });

  it("a channel that does not exist: success, nothing posted, the owner told once a minute", async () => {
    const r = await hook("json", "{}", { query: { stream: "nonexistent" }, as: genericBot });
    expect(r).toMatchObject({ status: 200, body: { result: "success" } });
    const notice = newest();
    expect(notice.id).toBeGreaterThan(notificationSeen);
    expect(notice.content).toBe(
      "Your bot `generic-bot@test.dev` tried to send a message to channel #**nonexistent**, " +
        "but that channel does not exist. Click [here](#channels/new) to create it.",
    );
    await expectNothingPosted(hook("json", "{}", { query: { stream: "nonexistent" }, as: genericBot }));
  });

  it("a private channel the bot is not in answers like one that does not exist", async () => {
    const other = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "third-bot@test.dev",
      fullName: "Third Bot",
      bot: { type: 2, ownerId: s.seed.bob.id },
    });
    const r = await hook("json", "{}", { query: { stream: "secret" }, as: other });
    expect(r).toMatchObject({ status: 200, body: { result: "success" } });
    expect(newest().content).toContain(
      "tried to send a message to channel #**secret**, but that channel does not exist",
    );
  });

  it("a person may post with their own key (as in Zulip), but has no owner to write to", async () => {
    await expectPosted(
      hook("json", "{}", { query: GENERAL, as: s.seed.alice }),
      "JSON",
      "```json\n{}\n```",
      s.seed.alice,
    );
    await expectRejectedUnchanged(
      s,
      () => hook("json", "{}", { as: s.seed.alice }),
      400,
      "BAD_REQUEST",
      "Missing 'stream' argument: only a bot's messages can go to its owner",
    );
  });
});

describe("authentication", () => {
  const refused = (call: () => Promise<Reply>, status: number, code: string, msg: string) =>
    expectRejectedUnchanged(s, call, status, code, msg);

  it("wants an api_key", async () => {
    await refused(
      () => hook("json", "{}", { as: null, query: GENERAL }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'api_key' argument",
    );
  });

  it("refuses a malformed key and a wrong one with Zulip's INVALID_API_KEY", async () => {
    await refused(
      () => hook("json", "{}", { as: null, query: { ...GENERAL, api_key: "short" } }),
      401,
      "INVALID_API_KEY",
      "Malformed API key",
    );
    const wrong = { ...GENERAL, api_key: "a".repeat(32) };
    await refused(() => hook("json", "{}", { as: null, query: wrong }), 401, "INVALID_API_KEY", "Invalid API key");
  });

  it("refuses a deactivated bot", async () => {
    const { store } = s.t;
    const gone = store.createUser({
      realmId: s.seed.realm.id,
      email: "gone-bot@test.dev",
      fullName: "Gone Bot",
      bot: { type: 2, ownerId: s.seed.bob.id },
    });
    store.deactivateBot(s.seed.bob.id, gone.id);
    await refused(
      () => hook("json", "{}", { as: gone, query: GENERAL }),
      401,
      "USER_DEACTIVATED",
      "Account is deactivated",
    );
  });

  it("refuses another realm's bot on this realm's host", async () => {
    await refused(
      () => hook("json", "{}", { as: foreignBot, query: GENERAL }),
      400,
      "BAD_REQUEST",
      "Account is not associated with this subdomain",
    );
  });

  it("an incoming webhook bot's key does nothing else (Zulip's 401 on the API)", async () => {
    const r = await s.call(hookBot, "GET", "/users/me");
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: "UNAUTHORIZED", msg: "This API is not available to incoming webhook bots." });
  });

  it("an integration that does not exist is 404", async () => {
    const r = await hook("nonesuch", "{}", { query: GENERAL });
    expect(r.status).toBe(404);
  });
});

describe("GitHub", () => {
  const github = (name: string, event: string, query: Record<string, string> = GENERAL, edit?: (p: Json) => void) => {
    const payload = JSON.parse(fixture(`github/${name}.json`)) as Json;
    edit?.(payload);
    return hook("github", JSON.stringify(payload), { query, headers: { "X-GitHub-Event": event } });
  };
  const PR_TOPIC = "public-repo / PR #1 Update the README with new information";
  const ISSUE_TOPIC = "public-repo / issue #2 Spelling error in the README file";

  it("ping: the setup message, topic the repository", async () => {
    await expectPosted(
      github("ping", "ping"),
      "public-repo",
      "GitHub webhook has been successfully configured by TomaszKolek.",
    );
  });

  it("push: one commit by the pusher, topic repository / branch", async () => {
    await expectPosted(
      github("push__1_commit", "push"),
      "public-repo / changes",
      "baxterthehacker [pushed](https://github.com/baxterthehacker/public-repo/compare/9049f1265b7d...0d1a26e67d8f) " +
        "1 commit to branch changes.\n\n* Update README.md " +
        "([0d1a26e67d8](https://github.com/baxterthehacker/public-repo/commit/0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c))",
    );
  });

  it("push: other committers are named; more than 20 commits are summed up", async () => {
    const commits = (payload: Json) => {
      const one = (payload["commits"] as Json[])[0]!;
      const names = ["Tomasz", "Tomasz", "Tomasz", "Tomasz", "Ben", "Ben", "Ben", "James", "James", "Zoe"];
      payload["commits"] = Array.from({ length: 25 }, (_, i) => ({
        ...one,
        author: { name: names[i % names.length], email: "x@example.com" },
      }));
    };
    const row =
      "* Update README.md ([0d1a26e67d8](https://github.com/baxterthehacker/public-repo/commit/0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c))\n";
    await expectPosted(
      github("push__1_commit", "push", GENERAL, commits),
      "public-repo / changes",
      "baxterthehacker [pushed](https://github.com/baxterthehacker/public-repo/compare/9049f1265b7d...0d1a26e67d8f) " +
        "25 commits to branch changes. Commits by Tomasz (12), Ben (7), James (4) and others (2).\n\n" +
        row.repeat(20) +
        "[and 5 more commit(s)]",
    );
  });

  it("push: a tag, and a branch left out by the branches filter", async () => {
    const tag = (payload: Json) => {
      payload["ref"] = "refs/tags/abc";
      payload["created"] = true;
    };
    await expectPosted(
      github("push__1_commit", "push", GENERAL, tag),
      "public-repo",
      "baxterthehacker pushed tag abc.",
    );
    await expectNothingPosted(github("push__1_commit", "push", { ...GENERAL, branches: "master,devel" }));
  });

  it("pull request opened: branches and the description quoted; a long title cut in the topic", async () => {
    await expectPosted(
      github("pull_request__opened", "pull_request"),
      "public-repo / PR #1 This is a very long Pull request titl...",
      "baxterthehacker opened [PR #1](https://github.com/baxterthehacker/public-repo/pull/1) from " +
        "`baxterthehacker:changes` to `baxterthehacker:master`:\n\n~~~ quote\n" +
        "This is a pretty simple change that we need to pull into master.\n~~~",
    );
  });

  it("pull request closed and merged", async () => {
    await expectPosted(
      github("pull_request__closed", "pull_request"),
      PR_TOPIC,
      "baxterthehacker closed without merge [PR #1](https://github.com/baxterthehacker/public-repo/pull/1).",
    );
    await expectPosted(
      github("pull_request__merged", "pull_request"),
      PR_TOPIC,
      "baxterthehacker merged [PR #1](https://github.com/baxterthehacker/public-repo/pull/1).",
    );
  });

  it("with a topic parameter the title moves into the message", async () => {
    await expectPosted(
      github("pull_request__closed", "pull_request", { ...GENERAL, topic: "notifications" }),
      "notifications",
      "baxterthehacker closed without merge [PR #1 Update the README with new information]" +
        "(https://github.com/baxterthehacker/public-repo/pull/1).",
    );
  });

  it("issues opened and closed, and a comment", async () => {
    await expectPosted(
      github("issues", "issues"),
      ISSUE_TOPIC,
      "baxterthehacker opened [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n" +
        "~~~ quote\nIt looks like you accidently spelled 'commit' with two 't's.\n~~~",
    );
    const closed = (payload: Json) => {
      payload["action"] = "closed";
    };
    await expectPosted(
      github("issues", "issues", GENERAL, closed),
      ISSUE_TOPIC,
      "baxterthehacker closed [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n" +
        "~~~ quote\nIt looks like you accidently spelled 'commit' with two 't's.\n~~~",
    );
    await expectPosted(
      github("issue_comment", "issue_comment"),
      ISSUE_TOPIC,
      "baxterthehacker [commented](https://github.com/baxterthehacker/public-repo/issues/2#issuecomment-99262140) " +
        "on [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n" +
        "~~~ quote\nYou are totally right! I'll get this fixed right away.\n~~~",
    );
  });

  it("only_events and exclude_events match Zulip's event names with shell patterns", async () => {
    await expectNothingPosted(github("issues", "issues", { ...GENERAL, only_events: '["push_*"]' }));
    await expectNothingPosted(github("issues", "issues", { ...GENERAL, exclude_events: '["iss?es"]' }));
    await expectPosted(
      github("ping", "ping", { ...GENERAL, only_events: '["push_*", "p[i]ng"]' }),
      "public-repo",
      "GitHub webhook has been successfully configured by TomaszKolek.",
    );
  });

  it("an event Zulip does not post: 200 with UNSUPPORTED_WEBHOOK_EVENT_TYPE; an ignored one: success", async () => {
    const r = await expectNothingPosted(github("issues", "discussion", GENERAL, (p) => void (p["action"] = "created")));
    expect(r).toEqual({
      status: 200,
      body: {
        result: "error",
        msg: "The 'discussion:created' event isn't currently supported by the GitHub webhook; ignoring",
        code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE",
        webhook_name: "GitHub",
        event_type: "discussion:created",
      },
    });
    const ignored = await expectNothingPosted(github("issues", "check_suite"));
    expect(ignored.body).toMatchObject({ result: "success" });
  });

  it("a missing X-GitHub-Event header is refused and the owner told", async () => {
    const r = await hook("github", fixture("github/ping.json"), { query: GENERAL, as: genericBot });
    expect(r).toMatchObject({
      status: 400,
      body: {
        code: "MISSING_HTTP_EVENT_HEADER",
        msg: "Missing the HTTP event header 'X-GitHub-Event'",
        header: "X-GitHub-Event",
      },
    });
    // genericBot's owner was told about a missing channel within the minute: this notice waits.
    const other = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "headless-bot@test.dev",
      fullName: "Headless Bot",
      bot: { type: 2, ownerId: s.seed.bob.id },
    });
    await hook("github", fixture("github/ping.json"), { query: GENERAL, as: other });
    expect(newest().content).toBe(
      "Hi there!  Your bot Headless Bot just sent an HTTP request to /api/v1/external/github that\n" +
        "is missing the HTTP X-GitHub-Event header.  Because this header is how\n" +
        "GitHub indicates the event type, this usually indicates a configuration\n" +
        "issue, where you either entered the URL for a different integration, or are running\n" +
        "an older version of the third-party service that doesn't provide that header.\n" +
        "Contact your server's administrator if you need help debugging!",
    );
  });

  it("a payload missing a field it needs is a 400 naming the field", async () => {
    await expectRejectedUnchanged(
      s,
      () =>
        hook("github", JSON.stringify({ action: "opened" }), {
          query: GENERAL,
          headers: { "X-GitHub-Event": "issues" },
        }),
      400,
      "BAD_REQUEST",
      'payload["issue"] is missing',
    );
  });
});

describe("parameters in a form body", () => {
  it("takes api_key, stream and payload from the body, as Zulip reads request.POST", async () => {
    const form = new URLSearchParams({
      api_key: s.t.store.getUser(hookBot.id).apiKey,
      stream: "general",
      payload: JSON.stringify({ text: "from a form" }),
    });
    const r = rawRequest(
      s.base,
      "POST",
      "/external/slack_incoming",
      { "Content-Type": "application/x-www-form-urlencoded" },
      form.toString(),
    );
    await expectPosted(r, "", "from a form");
  });
});

describe("Alertmanager", () => {
  const query = { ...GENERAL, name: "topic", desc: "description" };
  const source =
    "http://cobalt:9090/graph?g0.expr=avg+by%28host%29+%28sensors_temp_input%7Bfeature%3D~%22core_%5B0-9%5D%2B%22%7D" +
    "%29+%3E+15&g0.tab=0";

  it("firing alerts of one group: one message listing them, the group as the topic", async () => {
    await expectPosted(
      hook("alertmanager", fixture("alertmanager/alert.json"), { query }),
      "andromeda",
      `:alert: **FIRING**\n* CPU core temperature is 34.75C ([source](${source}))\n` +
        `* CPU core temperature is 17.625C ([source](${source}))`,
    );
  });

  it("a single resolved alert", async () => {
    await expectPosted(
      hook("alertmanager", fixture("alertmanager/single_alert.json"), { query }),
      "andromeda",
      `:squared_ok: **Resolved** CPU core temperature is 34.75C ([source](${source}))`,
    );
  });

  it("one message per group and status; default fields, and their fallbacks", async () => {
    const payload = JSON.parse(fixture("alertmanager/alert.json")) as { alerts: Json[] };
    const [first, second] = payload.alerts as [Json, Json];
    second["status"] = "resolved";
    payload.alerts.push({ ...first, labels: { instance: "db1" }, annotations: {} });
    const before = s.t.store.maxMessageId(s.seed.bob.id);
    const r = await hook("alertmanager", JSON.stringify(payload), { query: GENERAL });
    expect(r.body).toMatchObject({ result: "success" });
    const { store } = s.t;
    const ids = store
      .getMessageWindow(s.seed.bob.id, { narrow: [], anchor: "newest", numBefore: 3, numAfter: 0 })
      .ids.filter((id) => id > before);
    const posted = ids.map((id) => store.getMessage(s.seed.bob.id, id).message);
    expect(posted.map((m) => [m.topic, m.content])).toEqual([
      ["(unknown)", `:alert: **FIRING** High CPU Temperature ([source](${source}))`],
      ["(unknown)", `:squared_ok: **Resolved** High CPU Temperature ([source](${source}))`],
      ["db1", `:alert: **FIRING** <missing field: alertname> ([source](${source}))`],
    ]);
  });
});

describe("GitLab", () => {
  const gitlab = (name: string, event: string, query: Record<string, string> = GENERAL, edit?: (p: Json) => void) => {
    const payload = JSON.parse(fixture(`gitlab/${name}.json`)) as Json;
    edit?.(payload);
    return hook("gitlab", JSON.stringify(payload), { query, headers: { "X-Gitlab-Event": event } });
  };
  const attrs = (p: Json) => p["object_attributes"] as Json;
  const PROJECT = "https://gitlab.com/tomaszkolek0/my-awesome-project";
  const PUSHED =
    `Tomasz Kolek [pushed](${PROJECT}/-/compare/5fcdd5551fc3085df79bece2c32b1400802ac407...` +
    "eb6ae1e591e0819dc5bf187c6bfe18ec065a80e9) 2 commits to branch tomek.\n\n" +
    `* b ([66abd2da288](${PROJECT}/commit/66abd2da28809ffa128ed0447965cf11d7f863a7))\n` +
    `* c ([eb6ae1e591e](${PROJECT}/commit/eb6ae1e591e0819dc5bf187c6bfe18ec065a80e9))`;

  it("push: Zulip's text; with a topic parameter, led by a link to the project; the branches filter", async () => {
    await expectPosted(gitlab("push_hook", "Push Hook"), "my-awesome-project / tomek", PUSHED);
    await expectPosted(
      gitlab("push_hook", "Push Hook", { ...GENERAL, topic: "Specific topic" }),
      "Specific topic",
      `[[my-awesome-project](${PROJECT})] ${PUSHED}`,
    );
    await expectPosted(
      gitlab("push_hook", "Push Hook", { ...GENERAL, branches: "master,tomek" }),
      "my-awesome-project / tomek",
      PUSHED,
    );
    await expectNothingPosted(gitlab("push_hook", "Push Hook", { ...GENERAL, branches: "master" }));
  });

  it("push: a deleted branch; a System Hook named from the payload", async () => {
    const removed = (p: Json) => void (p["after"] = "0000000000000000000000000000000000000000");
    await expectPosted(
      gitlab("push_hook", "Push Hook", GENERAL, removed),
      "my-awesome-project / tomek",
      "Tomasz Kolek deleted branch tomek.",
    );
    await expectPosted(gitlab("push_hook", "System Hook"), "my-awesome-project / tomek", PUSHED);
  });

  it("issues: closed, and opened with its assignee and description", async () => {
    const topic = "my-awesome-project / issue #1 Issue title_new";
    await expectPosted(
      gitlab("issue_hook__issue_closed", "Issue Hook"),
      topic,
      `Tomasz Kolek closed [issue #1](${PROJECT}/issues/1).`,
    );
    const opened = (p: Json) => void (attrs(p)["action"] = "open");
    await expectPosted(
      gitlab("issue_hook__issue_closed", "Issue Hook", GENERAL, opened),
      topic,
      `Tomasz Kolek created [issue #1](${PROJECT}/issues/1) (assigned to Tomasz Kolek):\n\n~~~ quote\nIssue description\n~~~`,
    );
    const hidden = (p: Json) => {
      attrs(p)["action"] = "open";
      attrs(p)["description"] = "Visible <!-- hidden\ncomment -->  ";
      p["assignees"] = [{ name: "Ann" }, { name: "Bo" }, { name: "Cy" }];
    };
    await expectPosted(
      gitlab("issue_hook__issue_closed", "Confidential Issue Hook", GENERAL, hidden),
      topic,
      `Tomasz Kolek created [issue #1](${PROJECT}/issues/1) (assigned to Ann, Bo and Cy):\n\n~~~ quote\nVisible\n~~~`,
    );
  });

  it("merge requests: opened and merged; the title left out of the topic on request", async () => {
    await expectPosted(
      gitlab("merge_request_hook__merge_request_created_with_assignee", "Merge Request Hook"),
      "my-awesome-project / MR #3 New Merge Request",
      `Tomasz Kolek created [MR #3](${PROJECT}/merge_requests/3) from \`tomek\` to \`master\` ` +
        "(assigned to Tomasz Kolek):\n\n~~~ quote\ndescription of merge request\n~~~",
    );
    const merged = (p: Json) => void (attrs(p)["action"] = "merge");
    await expectPosted(
      gitlab("merge_request_hook__merge_request_created_with_assignee", "Merge Request Hook", GENERAL, merged),
      "my-awesome-project / MR #3 New Merge Request",
      `Tomasz Kolek merged [MR #3](${PROJECT}/merge_requests/3) from \`tomek\` to \`master\`.`,
    );
    const closed = (p: Json) => void (attrs(p)["action"] = "close");
    await expectPosted(
      gitlab(
        "merge_request_hook__merge_request_created_with_assignee",
        "Merge Request Hook",
        {
          ...GENERAL,
          use_merge_request_title: "false",
        },
        closed,
      ),
      "my-awesome-project / MR #3",
      `Tomasz Kolek closed [MR #3](${PROJECT}/merge_requests/3).`,
    );
  });

  it("an event not served is unsupported; a missing header is refused", async () => {
    const r = await expectNothingPosted(gitlab("push_hook", "Pipeline Hook"));
    expect(r).toMatchObject({
      status: 200,
      body: { code: "UNSUPPORTED_WEBHOOK_EVENT_TYPE", event_type: "Pipeline Hook", webhook_name: "GitLab" },
    });
    const missing = await hook("gitlab", fixture("gitlab/push_hook.json"), { query: GENERAL, as: genericBot });
    expect(missing).toMatchObject({ status: 400, body: { msg: "Missing the HTTP event header 'X-GitLab-Event'" } });
  });
});

describe("creating an incoming webhook bot for an integration", () => {
  it("takes an integration served here as service_name, and refuses another", async () => {
    const create = (short: string, service: string) =>
      s.call(s.seed.alice, "POST", "/bots", {
        full_name: `Hook ${short}`,
        short_name: short,
        bot_type: 2,
        service_name: service,
      });
    const r = await create("gh", "github");
    expect(r.body).toMatchObject({ result: "success" });
    await expectRejectedUnchanged(s, () => create("jira", "jira"), 400, "BAD_REQUEST", "Invalid integration 'jira'.");
  });
});
