/**
 * @module test/support/chromium
 * Debian's chromium driven by playwright-core (no browser download): installed with
 * apt-get when /usr/bin/chromium is missing, launched headless with the network
 * chatter (updates, sync, QUIC) turned off.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    // Two browser test files may start at once on a fresh machine: flock makes the
    // second wait for the first's install (then finds chromium there). A machine whose
    // package lists were never fetched gets them first.
    const install = `test -x ${CHROMIUM} || { apt-get install -y -o DPkg::Lock::Timeout=300 chromium || { apt-get update && apt-get install -y -o DPkg::Lock::Timeout=300 chromium; }; }`;
    execFileSync("flock", ["/tmp/parley-chromium-install.lock", "sh", "-c", install], {
      stdio: "ignore",
      timeout: 600_000,
    });
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}
