/**
 * @module http/endpoints/bots/params
 * What the bot endpoints share: the bot ID path segment, a default channel given by
 * name (and how the access sweep writes one), and Zulip's check_url for webhook URLs.
 */
import { z } from "zod";
import { BadRequestError } from "../../../engine/index.js";
import type { ProbeSpec } from "../../endpoint-testing.js";
import { compoundRef, p } from "../../params.js";

/** Zulip's `bots/<int:bot_id>`: anything but digits names no bot. */
export function botIdParam(pathParams: Readonly<Record<string, string>>): number {
  const raw = pathParams["bot_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("No such bot");
  return Number(raw);
}

/** A bot's default channel, by name (Zulip's bot settings take and show names). */
export const channelNameParam = () => compoundRef(p.str(), ["channelName"]);
export const CHANNEL_NAME_PROBES: readonly ProbeSpec[] = [{ names: "channelName", label: "name", encode: String }];

/** JSON text of a string (Zulip's payload_url and service_payload_url are JSON-encoded). */
export const jsonString = () => p.json(z.string());

/** Zulip's check_url (Django's URLValidator): an http, https, ftp or ftps URL with a host. */
export function checkUrl(value: string, name: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  if (url === null || !["http:", "https:", "ftp:", "ftps:"].includes(url.protocol) || url.hostname === "")
    throw new BadRequestError(`${name} is not a URL`);
  return value;
}
