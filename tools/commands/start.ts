/**
 * @module tools/commands/start
 * `parley start [--data DIR] [--port N] [--host H]`, what `npm start` runs: one
 * command from a fresh checkout to a server with something in it. Opens or creates
 * the data directory; when it holds no realm yet, creates the demo realm (default
 * subdomain, see tools/demo/realm.ts); then serves like `parley serve` and prints the
 * URL, the demo owner's login (API email and key) and a curl command that works as
 * printed. Default port 9991, Zulip's development port. With --workers N (or the
 * configuration's WORKERS) it serves from N processes as `parley serve --workers` does,
 * once the demo realm is written.
 */
import type { Store } from "../../src/engine/index.js";
import { parseOptions } from "../args.js";
import { openForCommand, parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { readDemoLogin, rememberDemoLogin } from "../demo/login.js";
import { createDemoRealm } from "../demo/realm.js";
import { jwtKeysUsable, readServeSettings, SERVE_OPTIONS, startSupervisor, untilSignal } from "./serve.js";
import { checkPortFree, externalImages, startParley, type Parley } from "../../src/server.js";

const USAGE =
  "parley start [--data DIR] [--config FILE] [--port N] [--host H] [--external-host NAME] [--compat-port N] [--no-rate-limit] [--no-sync] [--log-level L] [--log-file PATH] [--slow-request-ms N] [--workers N|auto] [--json]";

interface Login {
  readonly subdomain: string;
  readonly email: string;
  readonly apiKey: string;
}

/** The recorded demo login, if its user still exists and may log in. */
function findLogin(store: Store, dir: string): Login | null {
  const recorded = readDemoLogin(dir);
  if (!recorded) return null;
  const realm = store.findRealmBySubdomain(recorded.subdomain);
  const user = realm && !realm.deactivated ? store.findUserByEmail(realm.id, recorded.email) : undefined;
  return user?.isActive ? { subdomain: realm?.subdomain ?? "", email: user.email, apiKey: user.apiKey } : null;
}

/** Quotes a word for POSIX shells only when it needs it, so the usual case stays readable. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A curl command fetching the newest messages. The realm is chosen by the Host
 * header: the default realm answers on the bare URL, another realm needs its
 * subdomain in Host.
 */
function curlExample(url: string, login: Login, externalHost: string | undefined): string {
  const host =
    login.subdomain === "" ? [] : ["-H", shellWord(`Host: ${login.subdomain}.${externalHost ?? "localhost"}`)];
  return [
    "curl",
    "-sSu",
    shellWord(`${login.email}:${login.apiKey}`),
    ...host,
    `${url}/api/v1/messages`,
    "-G",
    "--data-urlencode",
    "anchor=newest",
    "-d",
    "num_before=5",
    "-d",
    "num_after=0",
  ].join(" ");
}

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("start", USAGE, () => {
    const parsed = parseOptions(argv, SERVE_OPTIONS);
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    return { parsed, dir: parsed.values["data"] as string, settings: readServeSettings(parsed) };
  });
  if (!options || !(await jwtKeysUsable("start", options.settings))) return USAGE_EXIT;
  const { dir, settings } = options;

  let store: Store | null = null;
  let running: { port: number; url: string; compatUrl: string | null; stopped: Promise<number> };
  let createdDemo = false;
  let login: Login | null;
  try {
    // A busy port is found before the demo is written, so the first thing the
    // operator sees is the port problem and the fix (--port N).
    await checkPortFree(settings.host, settings.port);
    const images = externalImages(settings.config, dir);
    store = openForCommand(dir, "start", { noSync: settings.noSync, renderer: images.renderer });
    if (store.listRealms().length === 0) {
      if (!options.parsed.values["json"]) console.error(`parley: ${dir} has no realm yet: creating the demo realm`);
      const demo = createDemoRealm(store, { subdomain: "" });
      rememberDemoLogin(dir, { subdomain: demo.realm.subdomain, email: demo.owner.email });
      createdDemo = true;
    }
    login = findLogin(store, dir);
    if (settings.workers > 1) {
      // The workers open the directory themselves (src/workers): this process only supervises them.
      store.close();
      store = null;
      running = await startSupervisor(argv, dir, settings);
    } else {
      const parley: Parley = await startParley(store, settings, dir, images);
      // Handlers go in before the greeting: whoever reads it may signal at once, and a
      // signal arriving before them would kill the process without closing the store.
      running = { port: parley.port, url: parley.url, compatUrl: parley.compatUrl, stopped: untilSignal(parley) };
    }
  } catch (error) {
    store?.close();
    throw error;
  }
  const { port, url, compatUrl, stopped } = running;
  const curl = login ? curlExample(url, login, settings.externalHost) : null;

  if (options.parsed.values["json"]) {
    // One line, like `parley serve --json`, so the first line carries everything.
    console.log(
      JSON.stringify({
        url,
        port,
        host: settings.host,
        data: dir,
        created_demo: createdDemo,
        compat_url: compatUrl,
        workers: settings.workers,
        login: login && { subdomain: login.subdomain, email: login.email, api_key: login.apiKey },
        curl,
      }),
    );
  } else {
    console.log(`listening on ${url}`);
    console.log(`data: ${dir}${createdDemo ? " (demo realm created)" : ""}`);
    if (compatUrl !== null) console.log(`HTTP/1.0-capable listener on ${compatUrl}`);
    if (settings.workers > 1) console.log(`workers: 1 writer and ${settings.workers - 1} reader(s)`);
    if (login) {
      console.log(`login: ${login.email}`);
      console.log(`api key: ${login.apiKey}`);
      console.log(`try: ${curl ?? ""}`);
    } else {
      console.log(
        `no demo login in ${dir}: log in with an API key printed by parley realm create or parley user create`,
      );
    }
    console.log("press Ctrl+C to stop");
  }
  return stopped;
}
