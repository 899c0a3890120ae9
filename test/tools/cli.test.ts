/**
 * @module test/tools/cli.test
 * The operator CLI end to end, as operators run it: the built dist/tools/parley.js in
 * child processes over temporary data directories (the suite runs after
 * `npm run build`). Servers listen on --port 0 and the test reads the bound port from
 * their first line of output, then talks to them over real HTTP.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Message } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";

/**
 * Every message's sender, topic and content, straight from the store (timestamps differ by run; key 0 is not a
 * message).
 */
function messageList(dir: string): { senderId: number; topic: string; content: string }[] {
  const store = openStore(dir);
  try {
    return [...internals(store).tables.messages.getRange({ start: 1 })].map(({ value }) => {
      const m = value as Message;
      return { senderId: m.senderId, topic: m.topic, content: m.content };
    });
  } finally {
    store.close();
  }
}

const CLI = fileURLToPath(new URL("../../dist/tools/parley.js", import.meta.url));

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one CLI command to completion. */
function parley(...args: string[]): Result {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json<T = Record<string, unknown>>(r: Result): T {
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
}

interface Running {
  readonly proc: ChildProcessWithoutNullStreams;
  /** Everything printed so far. */
  stdout(): string;
  /** Base URL from the first line (`listening on URL`). */
  readonly url: string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** The URL in a server's first line: `listening on URL`, or with --json an object with `url`. */
function urlOf(line: string): string | null {
  if (line.startsWith("{")) {
    const value = (JSON.parse(line) as { url?: unknown }).url;
    return typeof value === "string" ? value : null;
  }
  return /^listening on (http:\/\/\S+)$/.exec(line)?.[1] ?? null;
}

/** Starts a long-running command (serve, start) and waits for its whole greeting. */
function launch(args: string[], lastLine = /press Ctrl\+C to stop/): Promise<Running> {
  const proc = spawn(process.execPath, [CLI, ...args]);
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no greeting within 30 s: ${out} ${err}`)), 30_000);
    proc.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    proc.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (!lastLine.test(out)) return;
      clearTimeout(timer);
      const url = urlOf(out.split("\n")[0] ?? "");
      if (!url) {
        reject(new Error(`first line is neither 'listening on URL' nor JSON with a url: ${out}`));
        return;
      }
      resolve({
        proc,
        stdout: () => out,
        url,
        stop: () => {
          proc.kill("SIGTERM");
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before its greeting: ${out} ${err}`));
    });
  });
}

function basic(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`;
}

async function api(
  url: string,
  method: string,
  path: string,
  auth: string | null,
  params: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new URLSearchParams(params);
  const isGet = method === "GET";
  const response = await fetch(`${url}/api/v1${path}${isGet && form.size > 0 ? `?${form}` : ""}`, {
    method,
    headers: auth ? { Authorization: auth } : {},
    ...(isGet ? {} : { body: form }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** One HTTP/1.0 GET over a raw socket (fetch cannot speak 1.0); the whole reply, read until the server closes. */
function getHttp10(url: string, path: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let reply = "";
    socket.on("data", (chunk: Buffer) => (reply += chunk.toString("utf8")));
    socket.on("end", () => resolve(reply));
    socket.on("error", reject);
    socket.write(`GET ${path} HTTP/1.0\r\n\r\n`);
  });
}

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-cli-"));
  dirs.push(dir);
  return dir;
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Login {
  user_id: number;
  email: string;
  api_key: string;
}

describe("parley realm create, user create, serve", () => {
  const dir = tempDir();
  let owner: Login;
  let member: Login & { role: number };
  let bot: Login & { is_bot: boolean; bot_owner_id: number };

  it("creates the default realm and prints the owner's login", () => {
    owner = json<Login>(
      parley(
        "realm",
        "create",
        "--data",
        dir,
        "--subdomain",
        "",
        "--name",
        "CLI Test",
        "--owner-email",
        "owner@cli.test",
        "--owner-name",
        "Olga Owner",
        "--json",
      ),
    );
    expect(owner.email).toBe("owner@cli.test");
    expect(owner.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(owner.user_id).toBeGreaterThan(0);
  });

  it("creates a member by role name and a bot owned by the owner", () => {
    member = json(
      parley(
        "user",
        "create",
        "--data",
        dir,
        "--realm",
        "",
        "--email",
        "max@cli.test",
        "--name",
        "Max Member",
        "--role",
        "moderator",
        "--json",
      ),
    );
    expect(member.role).toBe(300);
    bot = json(
      parley(
        "user",
        "create",
        "--data",
        dir,
        "--realm",
        "",
        "--email",
        "helper-bot@cli.test",
        "--name",
        "Helper",
        "--bot",
        "--owner-email",
        "owner@cli.test",
        "--json",
      ),
    );
    expect(bot.is_bot).toBe(true);
    expect(bot.bot_owner_id).toBe(owner.user_id);
    expect(new Set([owner.api_key, member.api_key, bot.api_key]).size).toBe(3);
  });

  it("prints a readable summary without --json", () => {
    const r = parley(
      "user",
      "create",
      "--data",
      dir,
      "--realm",
      "",
      "--email",
      "gus@cli.test",
      "--name",
      "Gus",
      "--role",
      "600",
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/created guest Gus \(user \d+\)/);
    expect(r.stdout).toMatch(/api key: [A-Za-z0-9]{32}/);
  });

  it("serves: the keys authenticate, and SIGTERM exits 0 and frees the directory", async () => {
    const server = await launch(["serve", "--data", dir, "--port", "0", "--no-rate-limit"]);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.stdout()).toContain("CLI Test");

      const settings = await api(server.url, "GET", "/server_settings", null);
      expect(settings.status).toBe(200);
      expect(settings.body["realm_name"]).toBe("CLI Test");

      // The directory is held while the server runs: a second writer would clash with it.
      const busy = parley("user", "create", "--data", dir, "--realm", "", "--email", "late@cli.test", "--name", "Late");
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/in use by parley serve \(pid \d+, since [^)]+\): stop it first.*--data DIR/);
      // verify too: the server's in-memory state is not shared, so a check beside it would race.
      const verifying = parley("verify", "--data", dir);
      expect(verifying.code).toBe(1);
      expect(verifying.stderr).toMatch(/in use by parley serve/);

      // Each printed key logs its own user in (GET /users/me answers who the caller is).
      for (const login of [owner, member, bot]) {
        const me = await api(server.url, "GET", "/users/me", basic(login.email, login.api_key));
        expect(me.status).toBe(200);
        expect(me.body).toMatchObject({ user_id: login.user_id, email: login.email });
      }
      expect((await api(server.url, "GET", "/users/me", basic(member.email, member.api_key))).body).toMatchObject({
        role: 300,
        is_bot: false,
      });
      expect((await api(server.url, "GET", "/users/me", basic(bot.email, bot.api_key))).body).toMatchObject({
        is_bot: true,
      });

      const sent = await api(server.url, "POST", "/messages", basic(member.email, member.api_key), {
        type: "direct",
        to: JSON.stringify([owner.user_id]),
        content: "hello from the CLI test",
      });
      expect(sent.status).toBe(200);
      expect(typeof sent.body["id"]).toBe("number");

      const newest = await api(server.url, "GET", "/messages", basic(owner.email, owner.api_key), {
        anchor: "newest",
        num_before: "5",
        num_after: "0",
      });
      expect(newest.status).toBe(200);
      const messages = newest.body["messages"] as { id: number; content: string }[];
      expect(messages.map((m) => m.id)).toContain(sent.body["id"]);

      const asBot = await api(server.url, "GET", "/messages", basic(bot.email, bot.api_key), {
        anchor: "newest",
        num_before: "1",
        num_after: "0",
      });
      expect(asBot.status).toBe(200);

      const wrong = await api(server.url, "GET", "/messages", basic(owner.email, member.api_key), {
        anchor: "newest",
        num_before: "1",
        num_after: "0",
      });
      expect(wrong.status).toBe(401);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(existsSync(join(dir, "parley.lock"))).toBe(false);
  });

  it("prints one JSON line with the bound port under --json", async () => {
    const server = await launch(["serve", "--data", dir, "--port", "0", "--json"], /\n/);
    try {
      const line = server.stdout().split("\n")[0] ?? "";
      expect(JSON.parse(line)).toMatchObject({ port: Number(new URL(server.url).port), url: server.url });
      expect((await api(server.url, "GET", "/server_settings", null)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);

  it("answers HTTP/1.0 on --compat-port and names that listener in the JSON line", async () => {
    const server = await launch(["serve", "--data", dir, "--port", "0", "--compat-port", "0", "--json"], /\n/);
    try {
      const line = JSON.parse(server.stdout().split("\n")[0] ?? "") as { compat_url?: unknown };
      expect(line.compat_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const reply = await getHttp10(String(line.compat_url), "/api/v1/server_settings");
      expect(reply).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(reply).toContain('"realm_name":"CLI Test"');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);

  it("makes a person as Zulip does: the realm's default channels, the Welcome Bot's greeting", () => {
    const before = openStore(dir);
    try {
      before.subscribe(owner.user_id, {
        channels: [{ name: "general" }],
        principals: [owner.user_id],
        newChannel: { isDefault: true },
      });
    } finally {
      before.close();
    }
    const joiner = json<Login>(
      parley(
        "user",
        "create",
        "--data",
        dir,
        "--realm",
        "",
        "--email",
        "joiner@cli.test",
        "--name",
        "Joiner",
        "--json",
      ),
    );
    const store = openStore(dir);
    try {
      expect(store.subscriptionLists(joiner.user_id, false).subscribed.map((s) => s.channel.name)).toEqual(["general"]);
      const dms = store.getMessages(joiner.user_id, {
        anchor: "newest",
        numBefore: 5,
        numAfter: 0,
        narrow: [{ operator: "is", operand: "dm" }],
      });
      expect(dms.messages.map((m) => store.getUser(m.message.senderId).fullName)).toEqual(["Welcome Bot"]);
    } finally {
      store.close();
    }
  });
});

describe("passwords and special permissions", () => {
  const dir = tempDir();

  /** Runs a command with `input` on its standard input. */
  const withStdin = (input: string, ...args: string[]): Result => {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000, input });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it("takes passwords from standard input or a file, refuses weak ones, and the server logs them in", async () => {
    const owner = json<Login>(
      withStdin(
        "harbour-lights-77\n",
        "realm",
        "create",
        "--data",
        dir,
        "--subdomain",
        "",
        "--name",
        "Pw",
        "--owner-email",
        "owner@pw.test",
        "--owner-password",
        "--json",
      ),
    );
    const file = join(dir, "member-password.txt");
    writeFileSync(file, "copper-kettle-31\r\nsecond line ignored\n");
    const member = json<Login>(
      parley(
        "user",
        "create",
        "--data",
        dir,
        "--realm",
        "",
        "--email",
        "max@pw.test",
        "--name",
        "Max",
        "--password-file",
        file,
        "--json",
      ),
    );
    const weak = withStdin(
      "123456\n",
      "user",
      "create",
      "--data",
      dir,
      "--realm",
      "",
      "--email",
      "weak@pw.test",
      "--name",
      "Weak",
      "--password",
    );
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/The password is too weak\./);
    const both = parley(
      "user",
      "create",
      "--data",
      dir,
      "--realm",
      "",
      "--email",
      "b@pw.test",
      "--name",
      "Both",
      "--password",
      "--password-file",
      file,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give --password or --password-file, not both/);
    const bot = parley(
      "user",
      "create",
      "--data",
      dir,
      "--realm",
      "",
      "--email",
      "b-bot@pw.test",
      "--name",
      "Botty",
      "--bot",
      "--owner-email",
      "owner@pw.test",
      "--password-file",
      file,
    );
    expect(bot.code).toBe(2);
    expect(
      json(
        parley(
          "user",
          "grant",
          "--data",
          dir,
          "--realm",
          "",
          "--email",
          "owner@pw.test",
          "--permission",
          "can_change_user_emails",
          "--json",
        ),
      ),
    ).toMatchObject({ user_id: owner.user_id, can_change_user_emails: true });
    const grant = (...extra: string[]) =>
      json(parley("user", "grant", "--data", dir, "--realm", "", "--email", "owner@pw.test", ...extra, "--json"));
    expect(grant("--permission", "can_create_users")).toMatchObject({ user_id: owner.user_id, can_create_users: true });

    const server = await launch(["serve", "--data", dir, "--port", "0", "--no-rate-limit"]);
    try {
      const login = (username: string, password: string) =>
        api(server.url, "POST", "/fetch_api_key", null, { username, password });
      expect((await login("owner@pw.test", "harbour-lights-77")).body).toMatchObject({
        api_key: owner.api_key,
        user_id: owner.user_id,
      });
      expect((await login("max@pw.test", "copper-kettle-31")).body).toMatchObject({ api_key: member.api_key });
      expect((await login("max@pw.test", "copper-kettle-31\r")).status).toBe(401);
      expect((await login("weak@pw.test", "123456")).status).toBe(401);
      // The granted permission lets the owner change an email.
      const changed = await api(server.url, "PATCH", `/users/${member.user_id}`, basic(owner.email, owner.api_key), {
        new_email: "maxine@pw.test",
      });
      expect(changed.status).toBe(200);
      expect((await login("maxine@pw.test", "copper-kettle-31")).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe("errors", () => {
  const dir = tempDir();
  beforeAll(() => {
    json(
      parley(
        "realm",
        "create",
        "--data",
        dir,
        "--subdomain",
        "acme",
        "--name",
        "Acme",
        "--owner-email",
        "boss@acme.test",
        "--json",
      ),
    );
  });

  it("missing options are usage errors (exit 2) that name the option", () => {
    const r = parley("user", "create", "--data", dir, "--realm", "acme", "--name", "No Email");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing --email");
    const realm = parley("realm", "create", "--data", dir, "--subdomain", "x", "--owner-email", "a@b.c");
    expect(realm.code).toBe(2);
    expect(realm.stderr).toContain("missing --name");
  });

  it("bad options are usage errors too", () => {
    expect(
      parley(
        "user",
        "create",
        "--data",
        dir,
        "--realm",
        "acme",
        "--email",
        "r@acme.test",
        "--name",
        "R",
        "--role",
        "king",
      ).code,
    ).toBe(2);
    const bot = parley(
      "user",
      "create",
      "--data",
      dir,
      "--realm",
      "acme",
      "--email",
      "b@acme.test",
      "--name",
      "B",
      "--bot",
    );
    expect(bot.code).toBe(2);
    expect(bot.stderr).toContain("missing --owner-email");
    expect(parley("user", "create", "--data", dir, "--realm", "acme", "--frobnicate").code).toBe(2);
    expect(parley("realm", "delete", "--data", dir).code).toBe(2);
    expect(parley("serve", "--data", dir, "--port", "http").code).toBe(2);
  });

  it("an existing email fails (exit 1) with the engine's message", () => {
    const r = parley(
      "user",
      "create",
      "--data",
      dir,
      "--realm",
      "acme",
      "--email",
      "boss@acme.test",
      "--name",
      "Again",
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Email 'boss@acme.test' already in use");
  });

  it("an unknown realm says how to create it", () => {
    const r = parley("user", "create", "--data", dir, "--realm", "x", "--email", "a@x.test", "--name", "A");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no realm with subdomain 'x'");
    expect(r.stderr).toContain("parley realm create");
    // The default realm was never created in this directory.
    expect(parley("user", "create", "--data", dir, "--realm", "", "--email", "a@x.test", "--name", "A").code).toBe(1);
    // Nor is a missing directory created by asking.
    const missing = join(dir, "nowhere");
    expect(parley("user", "create", "--data", missing, "--realm", "", "--email", "a@x.test", "--name", "A").code).toBe(
      1,
    );
    expect(existsSync(missing)).toBe(false);
  });

  it("an existing subdomain fails", () => {
    const r = parley(
      "realm",
      "create",
      "--data",
      dir,
      "--subdomain",
      "acme",
      "--name",
      "Acme 2",
      "--owner-email",
      "x@acme.test",
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("already in use");
  });

  it("realm deactivate and reactivate switch a realm, keeping its users; an unknown realm fails", () => {
    const off = json(parley("realm", "deactivate", "--data", dir, "--subdomain", "acme", "--json"));
    expect(off).toMatchObject({ subdomain: "acme", deactivated: true, changed: true });
    const store = openStore(dir);
    try {
      const realm = store.findRealmBySubdomain("acme")!;
      expect(realm.deactivated).toBe(true);
      expect(store.findUserByEmail(realm.id, "boss@acme.test")?.isActive).toBe(true);
    } finally {
      store.close();
    }
    const on = parley("realm", "reactivate", "--data", dir, "--subdomain", "acme");
    expect(on.code).toBe(0);
    expect(on.stdout).toContain("'Acme' with subdomain 'acme' is now active");
    expect(json(parley("realm", "reactivate", "--data", dir, "--subdomain", "acme", "--json"))).toMatchObject({
      deactivated: false,
      changed: false,
    });
    const unknown = parley("realm", "reactivate", "--data", dir, "--subdomain", "nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no realm with subdomain 'nope'");
    expect(parley("realm", "reactivate", "--data", dir).stderr).toContain("missing --subdomain");
  });

  it("an unknown command exits 2 with the usage", () => {
    const r = parley("frobnicate");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
    expect(r.stderr).toContain("usage: parley");
  });
});

describe("parley demo", () => {
  const dir = tempDir();

  it("creates the demo realm, which verify finds clean", () => {
    const demo = json<{
      subdomain: string;
      users: { role: number; is_bot: boolean }[];
      channels: { kind: string }[];
      channel_messages: number;
      direct_messages: number;
      starred: number;
    }>(parley("demo", "--data", dir, "--json"));
    expect(demo.subdomain).toBe("");
    expect(demo.users.some((u) => u.role === 600)).toBe(true);
    expect(demo.users.some((u) => u.is_bot)).toBe(true);
    expect(new Set(demo.channels.map((c) => c.kind))).toEqual(
      new Set(["public", "private-shared", "private-protected"]),
    );
    expect(demo.channel_messages + demo.direct_messages).toBeGreaterThanOrEqual(300);
    expect(demo.direct_messages).toBeGreaterThan(0);
    expect(demo.starred).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(join(dir, "demo-login.json"), "utf8"))).toEqual({
      subdomain: "",
      email: "desdemona@example.com",
    });

    const verify = parley("verify", "--data", dir, "--json");
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      clean: true,
      messages: demo.channel_messages + demo.direct_messages,
    });
  });

  it("has deterministic content", () => {
    const [first, second] = [tempDir(), tempDir()];
    json(parley("demo", "--data", first, "--json"));
    json(parley("demo", "--data", second, "--json"));
    const messages = messageList(first);
    expect(messages.length).toBeGreaterThan(300);
    expect(messageList(second)).toEqual(messages);
    // The content exercises what clients render specially.
    const all = messages.map((m) => m.content).join("\n");
    for (const feature of ["@**", "```", "https://", ":tada:", "#**"]) expect(all).toContain(feature);
  });

  it("refuses to overwrite an existing realm", () => {
    const r = parley("demo", "--data", dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("already exists");
  });
});

describe("parley start", () => {
  it("creates the demo in an empty directory and prints a URL, a login and a curl that works", async () => {
    const dir = join(tempDir(), "data");
    const server = await launch(["start", "--data", dir, "--port", "0"]);
    try {
      const out = server.stdout();
      const email = /^login: (\S+)$/m.exec(out)?.[1];
      const key = /^api key: (\S+)$/m.exec(out)?.[1];
      const curl = /^try: (curl .*)$/m.exec(out)?.[1];
      expect(email).toBe("desdemona@example.com");
      expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(curl).toBe(
        `curl -sSu ${email}:${key} ${server.url}/api/v1/messages -G --data-urlencode anchor=newest -d num_before=5 -d num_after=0`,
      );

      const settings = await api(server.url, "GET", "/server_settings", null);
      expect(settings.body["realm_name"]).toBe("Parley Demo");
      const me = await api(server.url, "GET", "/users/me", basic(email ?? "", key ?? ""));
      expect(me.body).toMatchObject({ email, role: 100 });
      const newest = await api(server.url, "GET", "/messages", basic(email ?? "", key ?? ""), {
        anchor: "newest",
        num_before: "5",
        num_after: "0",
      });
      expect(newest.status).toBe(200);
      expect((newest.body["messages"] as unknown[]).length).toBe(5);

      // A second start on the same port explains and suggests --port.
      const port = new URL(server.url).port;
      const clash = parley("start", "--data", join(tempDir(), "data"), "--port", port);
      expect(clash.code).toBe(1);
      expect(clash.stderr).toContain(`port ${port}`);
      expect(clash.stderr).toContain("--port");
    } finally {
      expect(await server.stop()).toBe(0);
    }

    // A second start serves the existing data without another demo.
    const again = await launch(["start", "--data", dir, "--port", "0", "--json"], /\n/);
    try {
      const line = JSON.parse(again.stdout().split("\n")[0] ?? "") as {
        created_demo: boolean;
        login: { email: string };
      };
      expect(line.created_demo).toBe(false);
      expect(line.login.email).toBe("desdemona@example.com");
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});
