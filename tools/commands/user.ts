/**
 * @module tools/commands/user
 * `parley user create --realm S --email E --name NAME [--role R] [--bot --owner-email E]`:
 * adds a user (or a generic bot owned by an existing user) to a realm and prints the
 * user ID, email and API key. `--realm ''` names the default realm. Roles are Zulip's
 * numbers (100 owner ... 600 guest) or their names.
 */
import type { Role } from "../../src/engine/index.js";
import { output, parseOptions, requireString } from "../args.js";
import { describeSubdomain, openForCommand, parseOrUsage, parseRole, requireDataDir, requireRealm, roleName, USAGE_EXIT } from "../demo/cli.js";

const USAGE = "parley user create [--data DIR] --realm S --email E --name NAME [--role owner|administrator|moderator|member|guest] [--bot --owner-email E] [--json]";

/** Zulip's bot type for a generic (API) bot; the only kind the CLI creates. */
const GENERIC_BOT = 1;

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("user", USAGE, () => {
    const parsed = parseOptions(argv, {
      realm: { type: "string" },
      email: { type: "string" },
      name: { type: "string" },
      role: { type: "string" },
      bot: { type: "boolean" },
      "owner-email": { type: "string" },
    });
    const [action, ...extra] = parsed.positionals;
    if (action !== "create") throw new Error(action === undefined ? "missing action: create" : `unknown action '${action}'`);
    if (extra.length > 0) throw new Error(`unexpected argument '${extra[0]}'`);
    const bot = parsed.values["bot"] === true;
    const ownerEmail = parsed.values["owner-email"];
    // A bot always acts for someone; an owner without --bot is almost surely a typo.
    if (bot && typeof ownerEmail !== "string") throw new Error("missing --owner-email (a bot needs an owner)");
    if (!bot && ownerEmail !== undefined) throw new Error("--owner-email is only for bots: add --bot");
    const role = parsed.values["role"];
    return {
      parsed,
      dir: parsed.values["data"] as string,
      subdomain: requireString(parsed, "realm"),
      email: requireString(parsed, "email"),
      name: requireString(parsed, "name"),
      role: typeof role === "string" ? parseRole(role) : undefined,
      ownerEmail: bot ? (ownerEmail as string) : null,
    };
  });
  if (!options) return USAGE_EXIT;

  requireDataDir(options.dir, options.subdomain);
  const store = openForCommand(options.dir, "user create");
  try {
    const realm = requireRealm(store, options.subdomain, options.dir);
    let botOwnerId: number | null = null;
    if (options.ownerEmail !== null) {
      const owner = store.findUserByEmail(realm.id, options.ownerEmail);
      if (!owner) throw new Error(`no user with email '${options.ownerEmail}' in realm ${describeSubdomain(realm.subdomain)} to own the bot`);
      botOwnerId = owner.id;
    }
    const user = store.createUser({
      realmId: realm.id,
      email: options.email,
      fullName: options.name,
      ...(options.role !== undefined ? { role: options.role } : {}),
      ...(botOwnerId !== null ? { bot: { type: GENERIC_BOT, ownerId: botOwnerId } } : {}),
    });
    const role: Role = user.role;
    output(
      options.parsed,
      { user_id: user.id, email: user.email, full_name: user.fullName, api_key: user.apiKey, role, is_bot: user.isBot, bot_owner_id: user.botOwnerId, realm_id: realm.id, subdomain: realm.subdomain },
      [
        `created ${user.isBot ? "bot" : roleName(role)} ${user.fullName} (user ${user.id}) in realm ${describeSubdomain(realm.subdomain)}`,
        `email:   ${user.email}`,
        `api key: ${user.apiKey}`,
      ].join("\n"),
    );
    return 0;
  } finally {
    store.close();
  }
}
