/**
 * @module mail/eml
 * Reading back the .eml files the file transport writes (for `parley mail list/show`
 * and tests): header unfolding, RFC 2047 encoded words, and quoted-printable or
 * base64 single-part bodies, which is all nodemailer produces for a text mail.
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

/** Parses one .eml file's text. */
export function parseEml(raw: string): Omit<ReadMail, "id" | "file"> {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? "" : raw.slice(split).replace(/^\r?\n\r?\n/, "");
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  const text =
    encoding === "quoted-printable"
      ? decodeQuotedPrintable(body)
      : encoding === "base64"
        ? Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
        : body;
  return {
    from: headers.get("from") ?? "",
    to: headers.get("to") ?? "",
    subject: headers.get("subject") ?? "",
    date: headers.get("date") ?? "",
    text,
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
