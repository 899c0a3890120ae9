/**
 * @module tools/commands/generate
 * `parley generate --data DIR --messages N [--users U] [--channels C] [--seed S] [--pg DIR]`:
 * builds a realistic realm in a new store (see tools/generate/), optionally writing the
 * same dataset as PostgreSQL COPY files in Zulip's schema for bench/peer.
 */
import { generateDataset } from "../generate/generate.js";
import { intOption, output, parseOptions } from "../args.js";

export async function run(argv: string[]): Promise<number> {
  const parsed = parseOptions(argv, {
    messages: { type: "string" },
    users: { type: "string" },
    channels: { type: "string" },
    seed: { type: "string" },
    batch: { type: "string" },
    pg: { type: "string" },
  });
  const dir = parsed.values["data"] as string;
  if (parsed.values["messages"] === undefined) throw new Error("missing --messages N (e.g. --messages 100000)");
  const messages = intOption(parsed, "messages", 0, 100, 100_000_000);
  const users = parsed.values["users"] === undefined ? undefined : intOption(parsed, "users", 0, 10, 1_000_000);
  const channels = parsed.values["channels"] === undefined ? undefined : intOption(parsed, "channels", 0, 2, 100_000);
  const seed = intOption(parsed, "seed", 1, 0, 0xffffffff);
  const batchSize = intOption(parsed, "batch", 2000, 100, 50_000);
  const pgDir = typeof parsed.values["pg"] === "string" ? parsed.values["pg"] : null;
  const manifest = await generateDataset(dir, {
    messages,
    seed,
    batchSize,
    pgDir,
    quiet: Boolean(parsed.values["json"]),
    ...(users === undefined ? {} : { users }),
    ...(channels === undefined ? {} : { channels }),
  });
  const { scale } = manifest;
  output(
    parsed,
    manifest,
    [
      `generated ${scale.messages} messages, ${scale.users} users, ${scale.channels} channels in ${manifest.seconds.toFixed(1)} s (seed ${scale.seed})`,
      `  ${manifest.subscriptions} subscriptions, ${manifest.churnEvents} joins/leaves, rare word '${manifest.rareWord}' in ${manifest.rareCount} messages`,
      `  peer zerver_usermessage rows: ${manifest.usermessageRows} (${manifest.usermessageRowsWithoutSoftDeactivation} without soft deactivation)`,
      pgDir ? `  COPY files in ${pgDir}` : "  (no --pg DIR: no PostgreSQL files written)",
    ].join("\n"),
  );
  return 0;
}
