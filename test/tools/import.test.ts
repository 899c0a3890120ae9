/**
 * `parley import` of a Zulip organization export that the test writes in Zulip's
 * format (realm.json + messages-000001.json in a .tar.gz, as manage.py export makes
 * it), then served by `parley serve` and checked over real HTTP: users and roles,
 * channels, protected history by subscription history, direct messages and groups,
 * read/starred flags, mentions, reactions, groups, topic policies, deactivations,
 * original timestamps, and the report of what was not carried over.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { request } from "node:http";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type User } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";

const CLI = resolve(import.meta.dirname, "../../dist/tools/parley.js");
const root = mkdtempSync(join(tmpdir(), "parley-import-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

const T0 = 1_700_000_000;
const [IAGO, HAMLET, CORDELIA, OTHELLO, PROSPERO, BOT, NOTIFICATION_BOT] = [10, 11, 12, 13, 14, 15, 99];
const [GENERAL, SECRET, ARCHIVE] = [20, 21, 22];
const personal = (user: number) => 40 + (user - 10);
const HUDDLE_RECIPIENT = 50;

/** A small organization in the shape of zerver/lib/export.py's output. */
function writeExport(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const user = (id: number, name: string, role: number, extra: Record<string, unknown> = {}) => ({
    id,
    email: `user${id}@zulip.example`,
    delivery_email: `${name.toLowerCase()}@acme.example`,
    full_name: name,
    role,
    is_bot: false,
    bot_type: null,
    bot_owner: null,
    is_active: true,
    timezone: "Europe/Paris",
    api_key: `SECRET-KEY-${id}`,
    date_joined: T0,
    ...extra,
  });
  const sub = (userId: number, recipient: number, extra: Record<string, unknown> = {}) => ({
    id: userId * 100 + recipient,
    user_profile: userId,
    recipient,
    active: true,
    is_muted: false,
    color: "#c2c2c2",
    pin_to_top: false,
    ...extra,
  });
  const created = (userId: number, stream: number, at: number, last: number | null, type = 301) => ({
    id: userId * 1000 + stream + at,
    event_type: type,
    event_time: at,
    modified_user: userId,
    modified_stream: stream,
    event_last_message_id: last,
    realm: 7,
  });
  const realm = {
    zerver_realm: [{ id: 7, string_id: "acme", name: "Acme Corp", date_created: T0 }],
    zerver_userprofile: [
      user(IAGO, "Iago", 100),
      user(HAMLET, "Hamlet", 400),
      user(CORDELIA, "Cordelia", 400),
      user(OTHELLO, "Othello", 600),
      user(PROSPERO, "Prospero", 400, { is_active: false }),
      user(BOT, "Helper Bot", 400, {
        is_bot: true,
        bot_type: 1,
        bot_owner: IAGO,
        delivery_email: "helper-bot@acme.example",
      }),
    ],
    zerver_userprofile_crossrealm: [{ id: NOTIFICATION_BOT, email: "notification-bot@zulip.com" }],
    zerver_stream: [
      {
        id: GENERAL,
        name: "general",
        description: "Everyone",
        invite_only: false,
        history_public_to_subscribers: true,
        is_web_public: false,
        deactivated: false,
        date_created: T0,
      },
      {
        id: SECRET,
        name: "secret",
        description: "Leads only",
        invite_only: true,
        history_public_to_subscribers: false,
        is_web_public: false,
        deactivated: false,
        date_created: T0,
      },
      {
        id: ARCHIVE,
        name: "archive",
        description: "",
        invite_only: false,
        history_public_to_subscribers: true,
        is_web_public: false,
        deactivated: true,
        date_created: T0,
      },
    ],
    zerver_recipient: [
      { id: 30, type: 2, type_id: GENERAL },
      { id: 31, type: 2, type_id: SECRET },
      { id: 32, type: 2, type_id: ARCHIVE },
      ...[IAGO, HAMLET, CORDELIA, OTHELLO, PROSPERO, BOT].map((u) => ({ id: personal(u), type: 1, type_id: u })),
      { id: HUDDLE_RECIPIENT, type: 3, type_id: 60 },
    ],
    zerver_huddle: [{ id: 60, huddle_hash: "abc", group_size: 3 }],
    zerver_subscription: [
      ...[IAGO, HAMLET, OTHELLO, PROSPERO].map((u) => sub(u, 30)),
      sub(CORDELIA, 30, { is_muted: true }),
      sub(IAGO, 31),
      sub(HAMLET, 31),
      sub(CORDELIA, 31),
      sub(IAGO, 32),
      ...[IAGO, HAMLET, CORDELIA].map((u) => sub(u, HUDDLE_RECIPIENT)),
      ...[IAGO, HAMLET, CORDELIA, OTHELLO, PROSPERO, BOT].map((u) => sub(u, personal(u))),
    ],
    zerver_realmauditlog: [
      ...[IAGO, HAMLET, OTHELLO, PROSPERO].map((u) => created(u, GENERAL, T0 + 1, null)),
      created(IAGO, SECRET, T0 + 1, null),
      created(HAMLET, SECRET, T0 + 1, null),
      created(IAGO, ARCHIVE, T0 + 1, null),
      // Cordelia joins #secret after message 103; Hamlet leaves #general after 106 and comes back after 109.
      created(CORDELIA, SECRET, T0 + 300, 103),
      created(HAMLET, GENERAL, T0 + 375, 106, 303),
      created(HAMLET, GENERAL, T0 + 395, 109, 302),
    ],
    zerver_reaction: [
      {
        id: 1,
        user_profile: HAMLET,
        message: 101,
        emoji_name: "+1",
        emoji_code: "1f44d",
        reaction_type: "unicode_emoji",
      },
      {
        id: 2,
        user_profile: CORDELIA,
        message: 101,
        emoji_name: "party_parrot",
        emoji_code: "3",
        reaction_type: "realm_emoji",
      },
    ],
    zerver_usergroup: [
      { id: 70, realm: 7 },
      { id: 71, realm: 7 },
    ],
    zerver_namedusergroup: [
      {
        usergroup_ptr: 70,
        name: "leads",
        description: "Team leads",
        is_system_group: false,
        realm_for_sharding: 7,
        deactivated: false,
      },
      {
        usergroup_ptr: 71,
        name: "role:members",
        description: "Members",
        is_system_group: true,
        realm_for_sharding: 7,
        deactivated: false,
      },
    ],
    zerver_usergroupmembership: [
      { id: 1, user_group: 70, user_profile: IAGO },
      { id: 2, user_group: 70, user_profile: HAMLET },
    ],
    zerver_usertopic: [
      {
        id: 1,
        user_profile: HAMLET,
        stream: GENERAL,
        recipient: 30,
        topic_name: "greetings",
        last_updated: T0 + 500,
        visibility_policy: 1,
      },
    ],
    zerver_client: [
      { id: 1, name: "website" },
      { id: 2, name: "ZulipMobile" },
    ],
    zerver_realmemoji: [
      { id: 3, name: "party_parrot", realm: 7, author: IAGO, file_name: "3.gif", deactivated: false },
    ],
    // A draft mentions a person by Zulip's ID: the import must rename it as it does in messages.
    zerver_draft: [{ user_profile: IAGO, recipient: null, topic: "", content: "ask @**Hamlet|11** later" }],
  };
  const message = (id: number, sender: number, recipient: number, at: number, content: string, subject = "") => ({
    id,
    sender,
    recipient,
    subject,
    content,
    rendered_content: `<p>${content}</p>`,
    date_sent: T0 + at,
    sending_client: 1,
    realm: 7,
    has_attachment: false,
  });
  const messages = [
    {
      ...message(101, IAGO, 30, 100, "Hello @**Hamlet|11**, welcome!", "greetings"),
      last_edit_time: T0 + 150,
      edit_history: JSON.stringify([
        {
          user_id: IAGO,
          timestamp: T0 + 150,
          prev_content: "Hello @**Hamlet|11**!",
          prev_rendered_content: "<p>x</p>",
        },
      ]),
    },
    message(102, HAMLET, 31, 200, "secret before cordelia joined", "plans"),
    message(103, IAGO, personal(HAMLET), 250, "a direct word"),
    message(104, IAGO, 31, 350, "after cordelia joined", "plans"),
    message(105, CORDELIA, HUDDLE_RECIPIENT, 360, "group chat"),
    message(106, PROSPERO, 30, 370, "last words before leaving", "greetings"),
    message(107, NOTIFICATION_BOT, 30, 380, "a notification", "greetings"),
    {
      // Resolved, then unresolved: Zulip does not count either as a move.
      ...message(108, IAGO, 30, 385, "while hamlet was away", "greetings"),
      edit_history: JSON.stringify([
        { user_id: HAMLET, timestamp: T0 + 392, prev_topic: "✔ greetings", topic: "greetings" },
        { user_id: IAGO, timestamp: T0 + 391, prev_topic: "greetings", topic: "✔ greetings" },
      ]),
    },
    message(109, IAGO, 32, 390, "into the archive", "old"),
    {
      // Moved here from a channel the export does not hold; renamed earlier by someone it does not hold either
      // (Zulip's older entries say prev_subject).
      ...message(110, IAGO, 30, 396, "welcome back", "greetings"),
      edit_history: JSON.stringify([
        { user_id: IAGO, timestamp: T0 + 399, prev_stream: 77, stream: GENERAL },
        { user_id: 4242, timestamp: T0 + 398, prev_subject: "hi" },
      ]),
    },
  ];
  const um = (user: number, msg: number, mask: number) => ({
    id: user * 1000 + msg,
    user_profile: user,
    message: msg,
    flags_mask: mask,
  });
  const userMessages = [
    um(IAGO, 101, 1),
    um(HAMLET, 101, 1 | 8),
    um(CORDELIA, 101, 2),
    um(OTHELLO, 101, 0),
    um(PROSPERO, 101, 1),
    um(HAMLET, 102, 1 | 2),
    um(IAGO, 102, 0),
    um(IAGO, 103, 1),
    um(HAMLET, 103, 0),
    um(IAGO, 104, 1),
    um(HAMLET, 104, 1),
    um(CORDELIA, 104, 0),
    um(CORDELIA, 105, 1),
    um(IAGO, 105, 1 | 4),
    um(HAMLET, 105, 0),
    um(PROSPERO, 106, 1),
    um(HAMLET, 106, 1),
    um(IAGO, 108, 1),
    um(IAGO, 109, 1),
    um(IAGO, 110, 1),
    um(HAMLET, 110, 0),
  ];
  writeFileSync(join(dir, "realm.json"), JSON.stringify(realm));
  writeFileSync(
    join(dir, "messages-000001.json"),
    JSON.stringify({ zerver_message: messages, zerver_usermessage: userMessages }),
  );
  writeFileSync(join(dir, "attachment.json"), JSON.stringify({ zerver_attachment: [] }));
  // Zulip's export_emoji_from_local: emoji/<realm>/emoji/images/<file>, listed in emoji/records.json.
  mkdirSync(join(dir, "emoji", "7", "emoji", "images"), { recursive: true });
  writeFileSync(join(dir, "emoji", "7", "emoji", "images", "3.gif"), PARROT_GIF);
  writeFileSync(
    join(dir, "emoji", "records.json"),
    JSON.stringify([
      { realm_id: 7, author: IAGO, name: "party_parrot", file_name: "3.gif", path: "7/emoji/images/3.gif" },
    ]),
  );
}

/** The emoji image's bytes (the importer copies them; they need not decode). */
const PARROT_GIF = Buffer.from("GIF89a parrot frames");

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}
function parley(...args: string[]): Result {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const exportDir = join(root, "staging", "zulip-export-acme");
const tarball = join(root, "zulip-export-acme.tar.gz");
const dataDir = join(root, "data");
let report: {
  realm: { id: number; subdomain: string };
  imported: Record<string, number>;
  notCarried: Record<string, { count: number }>;
  ignoredTables: Record<string, number>;
  report_file: string;
};

beforeAll(() => {
  writeExport(exportDir);
  expect(spawnSync("tar", ["-czf", tarball, "-C", join(root, "staging"), "zulip-export-acme"]).status).toBe(0);
  const r = parley("import", "--data", dataDir, "--from", tarball, "--json");
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  report = JSON.parse(r.stdout) as typeof report;
});

describe("parley import from a Zulip export", () => {
  it("reports what it imported and what it could not carry over", () => {
    expect(report.realm.subdomain).toBe("acme");
    expect(report.imported).toMatchObject({
      users: 5,
      bots: 1,
      channels: 3,
      messages: 9,
      reactions: 2,
      "custom emoji": 1,
      "user groups": 1,
      "topic policies": 1,
      "deactivated users": 1,
      "muted channels": 1,
      "archived channels": 1,
    });
    const reasons = Object.keys(report.notCarried).join("\n");
    expect(reasons).toMatch(/message from a Zulip system bot/);
    expect(reasons).not.toMatch(/emoji/);
    // Zulip's collapsed flag is carried (IAGO collapsed message 105).
    expect(reasons).not.toMatch(/collapsed/);
    expect(report.imported["collapsed flags"]).toBe(1);
    expect(reasons).toMatch(/API keys/);
    expect(report.ignoredTables).toEqual({});
    const saved = JSON.parse(readFileSync(report.report_file, "utf8")) as {
      ids: { users: Record<string, number>; messages: Record<string, number> };
    };
    expect(Object.keys(saved.ids.messages)).toHaveLength(9);
    const store = openStore(dataDir, { noSync: true });
    try {
      const drafts = store.drafts(saved.ids.users[String(IAGO)]!).map((d) => d.content);
      expect(drafts).toEqual([`ask @**Hamlet|${saved.ids.users[String(HAMLET)]}** later`]);
    } finally {
      store.close();
    }
    expect(saved.ids.messages["107"]).toBeUndefined();
    expect(readFileSync(join(dataDir, "data.mdb")).includes("SECRET-KEY-11")).toBe(false);
  });

  it("takes edit histories: editors mapped, earlier content rewritten and rendered, the two timestamps derived", () => {
    expect(report.imported["edit histories"]).toBe(3);
    expect(report.notCarried).toMatchObject({
      "edit history: the editor was not imported (the entry names none)": { count: 1 },
      "edit history: a move from or to a channel not in the export (left out of the entry)": { count: 1 },
    });
    const saved = JSON.parse(readFileSync(report.report_file, "utf8")) as {
      ids: { users: Record<string, number>; messages: Record<string, number> };
    };
    const store = openStore(dataDir, { noSync: true });
    try {
      const record = (zulipId: number) => store.findMessageRecord(saved.ids.messages[String(zulipId)]!)!;
      const hamlet = saved.ids.users[String(HAMLET)]!;
      const iago = saved.ids.users[String(IAGO)]!;
      const welcome = record(101);
      expect(welcome.editHistory).toEqual([
        {
          userId: iago,
          timestamp: T0 + 150,
          prevContent: `Hello @**Hamlet|${hamlet}**!`,
          prevRenderedContent: expect.stringContaining(`data-user-id="${hamlet}"`),
        },
      ]);
      expect([welcome.lastEditTimestamp, welcome.lastMovedTimestamp]).toEqual([T0 + 150, null]);
      const resolved = record(108);
      expect(resolved.editHistory?.map((e) => [e.prevTopic, e.topic])).toEqual([
        ["✔ greetings", "greetings"],
        ["greetings", "✔ greetings"],
      ]);
      expect([resolved.lastEditTimestamp, resolved.lastMovedTimestamp]).toEqual([null, null]);
      const back = record(110);
      expect(back.editHistory).toEqual([{ userId: null, timestamp: T0 + 398, prevTopic: "hi" }]);
      expect([back.lastEditTimestamp, back.lastMovedTimestamp]).toEqual([null, T0 + 398]);
      expect(record(104).editHistory).toBeNull();
    } finally {
      store.close();
    }
  });

  it("serves the imported realm: history, flags, mentions, reactions and DMs as they were in Zulip", async () => {
    const store = openStore(dataDir, { noSync: true });
    const users: Record<string, User> = {};
    try {
      expect(store.verify().differences).toEqual([]);
      // History is not news: no one is emailed about the imported messages they never read.
      expect(store.missedEmailBatches()).toEqual([]);
      for (const name of ["iago", "hamlet", "cordelia", "othello", "prospero"])
        users[name] = store.findUserByEmail(report.realm.id, `${name}@acme.example`)!;
    } finally {
      store.close();
    }
    const child = spawn(
      process.execPath,
      [CLI, "serve", "--data", dataDir, "--port", "0", "--json", "--no-sync", "--log-level", "silent"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    const url = await new Promise<string>((r, reject) => {
      child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
      createInterface({ input: child.stdout! }).once("line", (line) => r((JSON.parse(line) as { url: string }).url));
    });
    // The realm is chosen by Host (acme.localhost), which fetch cannot set.
    const get = (user: User, path: string, params: Record<string, string> = {}, method = "GET") =>
      new Promise<Record<string, unknown>>((resolveBody, reject) => {
        const target = new URL(`${url}/api/v1${path}?${new URLSearchParams(params)}`);
        const req = request(
          {
            method,
            host: target.hostname,
            port: target.port,
            path: target.pathname + target.search,
            headers: {
              Host: "acme.localhost",
              Authorization: `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}`,
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () =>
              resolveBody(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>),
            );
          },
        );
        req.on("error", reject);
        req.end();
      });
    type Msg = {
      id: number;
      content: string;
      flags: string[];
      timestamp: number;
      subject: string;
      reactions: { emoji_name: string; user_id: number }[];
      display_recipient: unknown;
      type: string;
    };
    const messages = async (user: User, narrow: unknown[] = []) =>
      (
        await get(user, "/messages", {
          anchor: "oldest",
          num_before: "0",
          num_after: "100",
          narrow: JSON.stringify(narrow),
          apply_markdown: "false",
        })
      )["messages"] as Msg[];

    try {
      const { iago, hamlet, cordelia, othello, prospero } = users as Record<string, User>;
      expect(iago!.role).toBe(100);
      expect(othello!.role).toBe(600);

      // Protected history: Cordelia joined #secret after message 102.
      const secretForCordelia = await messages(cordelia!, [{ operator: "channel", operand: "secret" }]);
      expect(secretForCordelia.map((m) => m.content)).toEqual(["after cordelia joined"]);
      expect(secretForCordelia[0]!.flags).not.toContain("read");
      const secretForHamlet = await messages(hamlet!, [{ operator: "channel", operand: "secret" }]);
      expect(secretForHamlet.map((m) => m.content)).toEqual(["secret before cordelia joined", "after cordelia joined"]);
      expect(secretForHamlet[0]!.flags).toEqual(expect.arrayContaining(["read", "starred"]));

      // #general for Hamlet: the mention (its Zulip user ID rewritten), reactions, original times, his absence.
      const general = await messages(hamlet!, [{ operator: "channel", operand: "general" }]);
      expect(general.map((m) => m.content)).toEqual([
        "Hello @**Hamlet|" + String(hamlet!.id) + "**, welcome!",
        "last words before leaving",
        "while hamlet was away",
        "welcome back",
      ]);
      expect(general[0]!.flags).toEqual(expect.arrayContaining(["read", "mentioned"]));
      expect(general[0]!.timestamp).toBe(T0 + 100);
      expect(general[0]!.subject).toBe("greetings");
      expect(general[0]!.reactions).toEqual([
        expect.objectContaining({ emoji_name: "+1", user_id: hamlet!.id }),
        expect.objectContaining({ emoji_name: "party_parrot", reaction_type: "realm_emoji" }),
      ]);
      // The custom emoji, its image copied under a fresh file name and served where register says.
      const emoji = await get(users["hamlet"]!, "/realm/emoji");
      const parrot = Object.values(emoji["emoji"] as Record<string, { name: string; source_url: string }>).find(
        (e) => e.name === "party_parrot",
      )!;
      expect(parrot.source_url).toMatch(/\/user_avatars\/\d+\/emoji\/images\/[0-9a-f]{16}\.gif$/);
      const image = await fetch(new URL(parrot.source_url, url));
      expect(Buffer.from(await image.arrayBuffer())).toEqual(PARROT_GIF);
      expect(general[2]!.flags).toContain("historical");
      expect(general[3]!.flags).not.toContain("historical");
      expect(general[3]!.flags).not.toContain("read");

      // Direct messages: one to one, and the group.
      const dms = await messages(hamlet!, [{ operator: "is", operand: "dm" }]);
      expect(dms.map((m) => m.content)).toEqual(["a direct word", "group chat"]);
      expect((dms[1]!.display_recipient as { id: number }[]).map((r) => r.id).sort((a, b) => a - b)).toEqual(
        [iago!.id, hamlet!.id, cordelia!.id].sort((a, b) => a - b),
      );
      expect(dms[0]!.flags).not.toContain("read");

      // Cordelia starred a message she received; her mute of #general came along.
      const cordeliaGeneral = await messages(cordelia!, [{ operator: "channel", operand: "general" }]);
      expect(cordeliaGeneral[0]!.flags).toContain("starred");
      const subs = (await get(cordelia!, "/users/me/subscriptions"))["subscriptions"] as {
        name: string;
        is_muted: boolean;
      }[];
      expect(subs.find((s) => s.name === "general")?.is_muted).toBe(true);

      // Groups, topic policies, deactivations.
      const groups = (await get(iago!, "/user_groups"))["user_groups"] as {
        name: string;
        members: number[];
        is_system_group: boolean;
      }[];
      expect(groups.find((g) => g.name === "leads")?.members.sort((a, b) => a - b)).toEqual(
        [iago!.id, hamlet!.id].sort((a, b) => a - b),
      );
      const registered = await get(hamlet!, "/register", { fetch_event_types: JSON.stringify(["user_topic"]) }, "POST");
      expect(registered["user_topics"]).toEqual([
        expect.objectContaining({ topic_name: "greetings", visibility_policy: 1 }),
      ]);
      const people = (await get(iago!, "/users"))["members"] as { user_id: number; is_active: boolean }[];
      expect(people.find((p) => p.user_id === prospero!.id)?.is_active).toBe(false);
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
  });

  it("refuses bad arguments with exit code 2, changing nothing", () => {
    const notExport = join(root, "not-an-export");
    mkdirSync(notExport, { recursive: true });
    writeFileSync(join(notExport, "readme.txt"), "hello");
    const fresh = join(root, "fresh");
    const cases: { args: string[]; message: RegExp }[] = [
      { args: ["import", "--data", fresh], message: /missing --from/ },
      { args: ["import", "--data", fresh, "--from", join(root, "missing.tar.gz")], message: /does not exist/ },
      { args: ["import", "--data", fresh, "--from", notExport], message: /is not a Zulip export: no realm.json/ },
      {
        args: ["import", "--data", fresh, "--from", join(notExport, "readme.txt")],
        message: /neither a directory nor a .tar.gz export/,
      },
    ];
    for (const { args, message } of cases) {
      const r = parley(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(existsSync(fresh)).toBe(false);
    }
    // The same realm twice: refused, the directory as it was.
    const before = readdirSync(dataDir).sort();
    const store = openStore(dataDir, { noSync: true });
    const messagesBefore = store.countMessages();
    store.close();
    const again = parley("import", "--data", dataDir, "--from", exportDir);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already has a realm with subdomain 'acme': pass --subdomain S/);
    const after = openStore(dataDir, { noSync: true });
    expect(after.countMessages()).toBe(messagesBefore);
    expect(after.listRealms()).toHaveLength(1);
    after.close();
    expect(readdirSync(dataDir).sort()).toEqual(before);
  });
});
