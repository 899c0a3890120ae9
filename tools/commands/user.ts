/**
 * @module tools/commands/user
 * `parley user create --realm S --email E --name NAME [--role R] [--bot --owner-email E]
 * [--password | --password-file FILE]`: adds a user (or a generic bot owned by an
 * existing user) to a realm and prints the user ID, email and API key. `--realm ''`
 * names the default realm. Roles are Zulip's numbers (100 owner ... 600 guest) or
 * their names. `--password` reads the password from standard input's first line,
 * `--password-file` from a file's, so that it never appears in `ps`; it must pass
 * Zulip's strength rule (6 to 100 characters, not trivially guessable).
 *
 * A person is made as Zulip's do_create_user makes one: subscribed to the realm's
 * default channels and greeted by the Welcome Bot.
 *
 * `parley user grant --realm S --email E --permission P [--revoke]`: Zulip's special
 * permissions (its `manage.py change_user_role`): can_change_user_emails lets an owner
 * change other users' emails with PATCH /users/{id} new_email; can_create_users lets an
 * administrator create accounts with POST /users.
 */
import { hashNewPassword, type Role } from "../../src/engine/index.js";
import { passwordOption } from "../password-input.js";
import { output, parseOptions, requireString } from "../args.js";
import {
  describeSubdomain,
  openForCommand,
  parseOrUsage,
  parseRole,
  requireDataDir,
  requireRealm,
  roleName,
  USAGE_EXIT,
} from "../demo/cli.js";

const USAGE = [
  "parley user create [--data DIR] --realm S --email E --name NAME [--role owner|administrator|moderator|member|guest] [--bot --owner-email E] [--password | --password-file FILE] [--json]",
  "       parley user grant [--data DIR] --realm S --email E --permission can_change_user_emails|can_create_users [--revoke] [--json]",
].join("\n");

/** Special permissions an operator grants (Zulip's change_user_role names). */
const PERMISSIONS = ["can_change_user_emails", "can_create_users"] as const;
type Permission = (typeof PERMISSIONS)[number];

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
      password: { type: "boolean" },
      "password-file": { type: "string" },
      permission: { type: "string" },
      revoke: { type: "boolean" },
    });
    const [action, ...extra] = parsed.positionals;
    if (action !== "create" && action !== "grant")
      throw new Error(action === undefined ? "missing action: create or grant" : `unknown action '${action}'`);
    if (extra.length > 0) throw new Error(`unexpected argument '${extra[0]}'`);
    if (action === "grant") {
      const permission = requireString(parsed, "permission");
      if (!(PERMISSIONS as readonly string[]).includes(permission))
        throw new Error(`unknown permission '${permission}' (known: ${PERMISSIONS.join(", ")})`);
      return {
        action,
        parsed,
        dir: parsed.values["data"] as string,
        subdomain: requireString(parsed, "realm"),
        email: requireString(parsed, "email"),
        permission: permission as Permission,
        grant: parsed.values["revoke"] !== true,
      } as const;
    }
    for (const name of ["permission", "revoke"])
      if (parsed.values[name] !== undefined) throw new Error(`--${name} is only for 'user grant'`);
    const bot = parsed.values["bot"] === true;
    const ownerEmail = parsed.values["owner-email"];
    // A bot always acts for someone; an owner without --bot is almost surely a typo.
    if (bot && typeof ownerEmail !== "string") throw new Error("missing --owner-email (a bot needs an owner)");
    if (!bot && ownerEmail !== undefined) throw new Error("--owner-email is only for bots: add --bot");
    const role = parsed.values["role"];
    const password = passwordOption(parsed, "password", "password-file");
    if (bot && password !== undefined) throw new Error("bots log in with their API key: no --password");
    return {
      action: "create" as const,
      password,
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
  const store = openForCommand(options.dir, `user ${options.action}`);
  try {
    const realm = requireRealm(store, options.subdomain, options.dir);
    if (options.action === "grant") {
      const target = store.findUserByEmail(realm.id, options.email);
      if (!target)
        throw new Error(`no user with email '${options.email}' in realm ${describeSubdomain(realm.subdomain)}`);
      const user =
        options.permission === "can_change_user_emails"
          ? store.setCanChangeUserEmails(target.id, options.grant)
          : store.setCanCreateUsers(target.id, options.grant);
      const has = options.permission === "can_change_user_emails" ? user.canChangeUserEmails : user.canCreateUsers;
      output(
        options.parsed,
        { user_id: user.id, email: user.email, [options.permission]: has === true },
        `${user.email} ${options.grant ? "now has" : "no longer has"} ${options.permission}`,
      );
      return 0;
    }
    let botOwnerId: number | null = null;
    if (options.ownerEmail !== null) {
      const owner = store.findUserByEmail(realm.id, options.ownerEmail);
      if (!owner)
        throw new Error(
          `no user with email '${options.ownerEmail}' in realm ${describeSubdomain(realm.subdomain)} to own the bot`,
        );
      botOwnerId = owner.id;
    }
    // Hashed before the write (scrypt takes tens of milliseconds), checked for strength first.
    const password =
      options.password === undefined
        ? undefined
        : await hashNewPassword(options.password, { email: options.email, fullName: options.name });
    const details = {
      realmId: realm.id,
      email: options.email,
      fullName: options.name,
      ...(options.role !== undefined ? { role: options.role } : {}),
    };
    const user =
      botOwnerId !== null
        ? store.createUser({ ...details, bot: { type: GENERIC_BOT, ownerId: botOwnerId } })
        : store.createAccount({ ...details, ...(password !== undefined ? { password } : {}) });
    const role: Role = user.role;
    output(
      options.parsed,
      {
        user_id: user.id,
        email: user.email,
        full_name: user.fullName,
        api_key: user.apiKey,
        role,
        is_bot: user.isBot,
        bot_owner_id: user.botOwnerId,
        realm_id: realm.id,
        subdomain: realm.subdomain,
      },
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
