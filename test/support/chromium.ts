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
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    // The lock timeout: another test or engineer may be running apt-get right now.
    execFileSync("apt-get", ["install", "-y", "-o", "DPkg::Lock::Timeout=300", "chromium"], { stdio: "ignore", timeout: 600_000 });
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}
