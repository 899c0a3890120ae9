/**
 * @module tools/commands/demo
 * `parley demo [--data DIR] [--subdomain S] [--name NAME] [--messages N]`: creates a
 * realm to explore (see tools/demo/realm.ts) and prints every demo user's login.
 * The default subdomain '' is the realm served on 127.0.0.1. Refuses, changing
 * nothing, when the realm already exists. The first demo in a data directory is
 * recorded in demo-login.json for `parley start`.
 */
import { intOption, output, parseOptions } from "../args.js";
import { describeSubdomain, openForCommand, parseOrUsage, roleName, USAGE_EXIT } from "../demo/cli.js";
import { rememberDemoLogin } from "../demo/login.js";
import { createDemoRealm, DEFAULT_DEMO_MESSAGES, type DemoResult } from "../demo/realm.js";

const USAGE = "parley demo [--data DIR] [--subdomain S] [--name NAME] [--messages N] [--json]";

/** The JSON form of a demo, shared with `parley start --json`. */
export function demoSummary(demo: DemoResult): Record<string, unknown> {
  return {
    realm_id: demo.realm.id,
    subdomain: demo.realm.subdomain,
    name: demo.realm.name,
    owner: { user_id: demo.owner.id, email: demo.owner.email, api_key: demo.owner.apiKey },
    users: demo.users.map((u) => ({
      user_id: u.id,
      email: u.email,
      full_name: u.fullName,
      role: u.role,
      is_bot: u.isBot,
      api_key: u.apiKey,
    })),
    channels: demo.channels,
    channel_messages: demo.channelMessages,
    direct_messages: demo.directMessages,
    starred: demo.starred,
  };
}

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("demo", USAGE, () => {
    const parsed = parseOptions(argv, {
      subdomain: { type: "string", default: "" },
      name: { type: "string" },
      messages: { type: "string" },
    });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    const name = parsed.values["name"];
    return {
      parsed,
      dir: parsed.values["data"] as string,
      subdomain: parsed.values["subdomain"] as string,
      name: typeof name === "string" ? name : undefined,
      messages: intOption(parsed, "messages", DEFAULT_DEMO_MESSAGES, 1, 100_000),
    };
  });
  if (!options) return USAGE_EXIT;

  const store = openForCommand(options.dir, "demo");
  try {
    if (store.findRealmBySubdomain(options.subdomain)) {
      throw new Error(
        `a realm with subdomain ${describeSubdomain(options.subdomain)} already exists in ${options.dir}; pass --subdomain S for another demo realm or --data DIR for a fresh directory`,
      );
    }
    const started = Date.now();
    const demo = createDemoRealm(store, {
      subdomain: options.subdomain,
      ...(options.name !== undefined ? { name: options.name } : {}),
      messages: options.messages,
    });
    rememberDemoLogin(options.dir, { subdomain: demo.realm.subdomain, email: demo.owner.email });
    const width = Math.max(...demo.users.map((u) => u.email.length));
    output(
      options.parsed,
      demoSummary(demo),
      [
        `created demo realm '${demo.realm.name}' with subdomain ${describeSubdomain(demo.realm.subdomain)} in ${options.dir} (${Date.now() - started} ms)`,
        `${demo.channels.length} channels (${demo.channels.map((c) => `${c.name}${c.kind === "public" ? "" : ` [${c.kind}]`}`).join(", ")})`,
        `${demo.channelMessages} channel messages, ${demo.directMessages} direct messages, ${demo.starred} starred`,
        "logins (API email, API key):",
        ...demo.users.map((u) => `  ${u.email.padEnd(width)}  ${u.apiKey}  ${u.isBot ? "bot" : roleName(u.role)}`),
      ].join("\n"),
    );
    return 0;
  } finally {
    store.close();
  }
}
