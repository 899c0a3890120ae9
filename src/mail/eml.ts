/**
 * @module mail/eml
 * Reading back the .eml files the file transport writes (for `parley mail list/show`
 * and tests): header unfolding, RFC 2047 encoded words, quoted-printable or base64
 * bodies, single-part or multipart/alternative (text and HTML), which is all
 * nodemailer produces for the mail parley sends.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface ReadMail {
  readonly id: number;
  readonly file: string;
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly date: string;
  readonly text: string;
  /** The HTML alternative, null for a text-only mail. */
  readonly html: string | null;
}

function decodeWords(value: string): string {
  return value.replace(
    /=\?([^?]+)\?([bBqQ])\?([^?]*)\?=\s*(?==\?)?/g,
    (_, _charset: string, encoding: string, data: string) => {
      if (encoding.toUpperCase() === "B") return Buffer.from(data, "base64").toString("utf8");
      return decodeQuotedPrintable(data.replace(/_/g, " "));
    },
  );
}

export function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const input = text.replace(/=\r?\n/g, "");
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === "=" && /^[0-9A-Fa-f]{2}$/.test(input.slice(i + 1, i + 3))) {
      bytes.push(parseInt(input.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

interface Part {
  readonly headers: Map<string, string>;
  readonly body: string;
}

function splitPart(raw: string): Part {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? "" : raw.slice(split).replace(/^\r?\n\r?\n/, "");
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  return { headers, body };
}

function decodeBody(part: Part): string {
  const encoding = (part.headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (encoding === "quoted-printable") return decodeQuotedPrintable(part.body);
  if (encoding === "base64") return Buffer.from(part.body.replace(/\s+/g, ""), "base64").toString("utf8");
  return part.body;
}

/** The parts of a multipart body, by its boundary. */
function subParts(part: Part, boundary: string): Part[] {
  const out: Part[] = [];
  const pieces = part.body.split(`--${boundary}`);
  for (const piece of pieces.slice(1)) {
    if (piece.startsWith("--")) break;
    out.push(splitPart(piece.replace(/^\r?\n/, "").replace(/\r?\n$/, "")));
  }
  return out;
}

/** Parses one .eml file's text. */
export function parseEml(raw: string): Omit<ReadMail, "id" | "file"> {
  const top = splitPart(raw);
  const type = top.headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  let text = "";
  let html: string | null = null;
  if (type.toLowerCase().startsWith("multipart/") && boundary !== undefined) {
    for (const part of subParts(top, boundary)) {
      const partType = (part.headers.get("content-type") ?? "text/plain").toLowerCase();
      if (partType.startsWith("text/html")) html = decodeBody(part);
      else if (partType.startsWith("text/plain")) text = decodeBody(part);
    }
  } else text = decodeBody(top);
  return {
    from: top.headers.get("from") ?? "",
    to: top.headers.get("to") ?? "",
    subject: top.headers.get("subject") ?? "",
    date: top.headers.get("date") ?? "",
    text,
    html,
  };
}

/** Every mail in an outbox directory, by ID (empty when the directory does not exist). */
export function readOutboxDir(dir: string): ReadMail[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^\d+\.eml$/.test(n))
    .sort()
    .map((file) => ({
      id: Number(file.slice(0, -4)),
      file: join(dir, file),
      ...parseEml(readFileSync(join(dir, file), "utf8")),
    }));
}
