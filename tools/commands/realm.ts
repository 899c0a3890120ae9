/**
 * @module tools/commands/realm
 * `parley realm create --subdomain S --name NAME --owner-email E [--owner-name N]
 * [--owner-password | --owner-password-file FILE]`: creates a realm (organization)
 * with its first owner and prints the owner's user ID, email and API key, which is
 * everything needed to log in over the API. The subdomain '' creates the default
 * realm, served on bare hosts such as 127.0.0.1. The owner's password (for POST
 * /fetch_api_key) comes from standard input's first line or a file's, never argv.
 *
 * `parley realm deactivate|reactivate --subdomain S`: the operator's switch (Zulip's
 * `manage.py deactivate_realm` / `reactivate_realm`). A deactivated realm refuses every
 * key and login but keeps its data, so reactivating brings it back as it was; an owner
 * deactivates over the API with POST /realm/deactivate.
 *
 * `parley realm move`: to another shard (tools/commands/realm-move.ts).
 */
import { hashNewPassword } from "../../src/engine/index.js";
import { output, parseOptions, requireString } from "../args.js";
import { passwordOption } from "../password-input.js";
import {
  describeSubdomain,
  openForCommand,
  parseOrUsage,
  requireDataDir,
  requireRealm,
  USAGE_EXIT,
} from "../demo/cli.js";

const USAGE = [
  "parley realm create [--data DIR] --subdomain S --name NAME --owner-email E [--owner-name N] [--owner-password | --owner-password-file FILE] [--json]",
  "       parley realm deactivate|reactivate [--data DIR] --subdomain S [--json]",
  "       parley realm move --subdomain S --to-shard NAME --map FILE ... (parley realm move --help)",
].join("\n");

export async function run(argv: string[]): Promise<number> {
  const [first] = argv;
  if (first === "deactivate" || first === "reactivate") return setActive(argv, first);
  if (first === "move") return (await import("./realm-move.js")).run(argv.slice(1));
  const options = parseOrUsage("realm", USAGE, () => {
    const parsed = parseOptions(argv, {
      subdomain: { type: "string" },
      name: { type: "string" },
      "owner-email": { type: "string" },
      "owner-name": { type: "string" },
      "owner-password": { type: "boolean" },
      "owner-password-file": { type: "string" },
    });
    const [action, ...extra] = parsed.positionals;
    if (action !== "create")
      throw new Error(
        action === undefined
          ? "missing action: create, deactivate, reactivate or move"
          : `unknown action '${action}' (known: create, deactivate, reactivate, move)`,
      );
    if (extra.length > 0) throw new Error(`unexpected argument '${extra[0]}'`);
    const ownerEmail = requireString(parsed, "owner-email");
    const ownerName = parsed.values["owner-name"];
    return {
      password: passwordOption(parsed, "owner-password", "owner-password-file"),
      parsed,
      dir: parsed.values["data"] as string,
      subdomain: requireString(parsed, "subdomain"),
      name: requireString(parsed, "name"),
      ownerEmail,
      // Without a name the owner is called by the email's local part, which the
      // operator can recognise; Zulip requires some full name.
      ownerName: typeof ownerName === "string" ? ownerName : (ownerEmail.split("@")[0] ?? ownerEmail),
    };
  });
  if (!options) return USAGE_EXIT;

  const password =
    options.password === undefined
      ? undefined
      : await hashNewPassword(options.password, { email: options.ownerEmail, fullName: options.ownerName });
  const store = openForCommand(options.dir, "realm create");
  try {
    const owner0 = {
      email: options.ownerEmail,
      fullName: options.ownerName,
      ...(password !== undefined ? { password } : {}),
    };
    const { realm, owner } = store.createRealm({ subdomain: options.subdomain, name: options.name, owner: owner0 });
    output(
      options.parsed,
      {
        realm_id: realm.id,
        subdomain: realm.subdomain,
        name: realm.name,
        user_id: owner.id,
        email: owner.email,
        full_name: owner.fullName,
        api_key: owner.apiKey,
      },
      [
        `created realm ${realm.id} '${realm.name}' with subdomain ${describeSubdomain(realm.subdomain)} in ${options.dir}`,
        `owner:   ${owner.fullName} (user ${owner.id})`,
        `email:   ${owner.email}`,
        `api key: ${owner.apiKey}`,
      ].join("\n"),
    );
    return 0;
  } finally {
    store.close();
  }
}

async function setActive(argv: string[], action: "deactivate" | "reactivate"): Promise<number> {
  const options = parseOrUsage("realm", USAGE, () => {
    const parsed = parseOptions(argv.slice(1), { subdomain: { type: "string" } });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    return { parsed, dir: parsed.values["data"] as string, subdomain: requireString(parsed, "subdomain") };
  });
  if (!options) return USAGE_EXIT;
  requireDataDir(options.dir, options.subdomain);
  const store = openForCommand(options.dir, `realm ${action}`);
  try {
    const realm = requireRealm(store, options.subdomain, options.dir);
    const deactivated = action === "deactivate";
    const changed = realm.deactivated !== deactivated;
    if (changed) store.setRealmDeactivated(realm.id, deactivated);
    const state = `${changed ? "is now" : "was already"} ${deactivated ? "deactivated" : "active"}`;
    const where = `with subdomain ${describeSubdomain(realm.subdomain)}`;
    output(
      options.parsed,
      { realm_id: realm.id, subdomain: realm.subdomain, deactivated, changed },
      `realm ${realm.id} '${realm.name}' ${where} ${state}`,
    );
    return 0;
  } finally {
    store.close();
  }
}
