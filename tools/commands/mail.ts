/**
 * @module tools/commands/mail
 * `parley mail list [--data DIR]` and `parley mail show ID [--data DIR]`: the mail a
 * server without EMAIL_HOST wrote to DATA/outbox/ (Zulip's development mail log).
 * Reads files only, so it works while the server runs.
 */
import { join } from "node:path";
import { readOutboxDir } from "../../src/mail/eml.js";
import { output, parseOptions } from "../args.js";
import { parseOrUsage, USAGE_EXIT } from "../demo/cli.js";

const USAGE = "parley mail list [--data DIR] [--json] | parley mail show ID [--data DIR] [--json]";

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("mail", USAGE, () => {
    const parsed = parseOptions(argv, {});
    const [action, id, ...rest] = parsed.positionals;
    if (rest.length > 0) throw new Error(`unexpected argument '${rest[0]}'`);
    if (action === "list" && id === undefined) return { parsed, action, id: null };
    if (action === "show" && id !== undefined && /^\d+$/.test(id)) return { parsed, action, id: Number(id) };
    throw new Error(action === "show" ? "show needs a mail ID (see parley mail list)" : "expected list or show");
  });
  if (!options) return USAGE_EXIT;
  const dir = join(options.parsed.values["data"] as string, "outbox");
  const mails = readOutboxDir(dir);
  if (options.action === "list") {
    const lines =
      mails.length === 0 ? [`no mail in ${dir}`] : mails.map((m) => `${m.id}\t${m.date}\t${m.to}\t${m.subject}`);
    output(
      options.parsed,
      mails.map(({ text: _text, ...rest }) => rest),
      lines.join("\n"),
    );
    return 0;
  }
  const mail = mails.find((m) => m.id === options.id);
  if (!mail) {
    console.error(`parley mail: no mail ${options.id} in ${dir}`);
    return 1;
  }
  output(
    options.parsed,
    mail,
    [`From: ${mail.from}`, `To: ${mail.to}`, `Date: ${mail.date}`, `Subject: ${mail.subject}`, "", mail.text].join(
      "\n",
    ),
  );
  return 0;
}
