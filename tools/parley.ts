#!/usr/bin/env node
/**
 * @module tools/parley
 * The operator CLI. Each subcommand lives in tools/commands/<name>.ts and exports
 * `run(argv): Promise<number>` (the exit code). Every subcommand takes --data DIR and
 * prints JSON with --json.
 */
const COMMANDS: Record<string, () => Promise<{ run(argv: string[]): Promise<number> }>> = {
  verify: () => import("./commands/verify.js"),
  start: () => import("./commands/start.js"),
  serve: () => import("./commands/serve.js"),
  realm: () => import("./commands/realm.js"),
  user: () => import("./commands/user.js"),
  demo: () => import("./commands/demo.js"),
  generate: () => import("./commands/generate.js"),
  backup: () => import("./commands/backup.js"),
  restore: () => import("./commands/restore.js"),
  import: () => import("./commands/import.js"),
  mail: () => import("./commands/mail.js"),
  shard: () => import("./commands/shard.js"),
};

const USAGE = `usage: parley <command> [options]

commands:
  start     [--port N] [--host H] [serve options]  create a demo realm if DIR has none, then serve (npm start)
  serve     [--port N] [--host H] [--external-host NAME] [--compat-port N] [--no-rate-limit] [--no-sync]
            [--log-level silent|error|warn|info|debug] [--log-file PATH] [--slow-request-ms N] [--workers N|auto]
                                                 serve the Zulip API (default port 9991); --compat-port
                                                 adds a listener that also answers HTTP/1.0; --workers
                                                 serves from N processes (auto: one per core)
  realm create --subdomain S --name NAME --owner-email E [--owner-name N] [--owner-password | --owner-password-file F]
  realm move --subdomain S --to-shard NAME --map FILE --nginx-conf FILE --source-data DIR --target-data DIR
            [--nginx-pid FILE] [--stop-target CMD] [--start-target CMD]   move a realm to another shard (docs/cluster.md)
  shard nginx-config --map FILE [--out FILE]     nginx's routing by Host from a shard map (docs/cluster.md)
  user create --realm S --email E --name NAME [--role R] [--bot --owner-email E] [--password | --password-file F]
  user grant --realm S --email E --permission can_change_user_emails [--revoke]
  demo      [--data DIR]                         create a demo realm with users, channels and messages
  verify    [--data DIR]                         rebuild indexes from records; exit 0 when clean
  backup    --data DIR --to DEST [--no-compact]  online backup while a server runs: LMDB snapshot, configuration, manifest
  restore   --from DEST --data NEWDIR            restore a backup into a new or empty directory, then verify
  import    --data DIR --from EXPORT [--subdomain S]  a realm from a Zulip organization export (manage.py export .tar.gz or its directory)
            [--max-json-size SIZE] [--max-file-size SIZE] [--max-total-size SIZE] [--max-entries N] [--max-ratio N]
  mail      list | show ID                       mail written to DATA/outbox/ (when no EMAIL_HOST is configured)
  generate  --data DIR --messages N [--users U] [--channels C] [--seed S] [--pg DIR]   a seeded benchmark dataset (--pg: also PostgreSQL COPY files)

every command takes --data DIR (default ./data) and --json for JSON output.`;

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    console.error(`parley: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  const command = await load();
  return command.run(rest);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`parley: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
