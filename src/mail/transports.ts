/**
 * @module mail/transports
 * Where outgoing mail goes: an SMTP server (nodemailer) when the configuration names
 * one (EMAIL_HOST), else .eml files in DATA/outbox/ that `parley mail list` and
 * `parley mail show` read, like Zulip's development mail log.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer, { type Transporter } from "nodemailer";
import type { ServerConfig } from "../config/index.js";

export interface OutgoingMail {
  readonly id: number;
  /** A formatted From header: "Name" <address>. */
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  /** An HTML alternative (multipart/alternative with the text). */
  readonly html?: string | null;
}

export interface MailTransport {
  /** Resolves once the mail is accepted for delivery; rejects with the reason otherwise. */
  deliver(mail: OutgoingMail): Promise<void>;
  /** What the operator sees at start ("SMTP smtp.example.com:587", "files in DATA/outbox"). */
  readonly description: string;
  close(): void;
}

/** A nodemailer error that will not go away by retrying (the server refused the recipients for good). */
export function isPermanentFailure(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { code?: unknown; responseCode?: unknown };
  return e.code === "EENVELOPE" && typeof e.responseCode === "number" && e.responseCode >= 500 && e.responseCode < 600;
}

export class SmtpTransport implements MailTransport {
  readonly description: string;
  readonly #transport: Transporter;

  constructor(
    config: Pick<
      ServerConfig,
      "EMAIL_HOST" | "EMAIL_PORT" | "EMAIL_HOST_USER" | "EMAIL_HOST_PASSWORD" | "EMAIL_USE_TLS" | "EMAIL_USE_SSL"
    >,
    options: { timeoutMs?: number } = {},
  ) {
    const host = config.EMAIL_HOST ?? "localhost";
    this.description = `SMTP ${host}:${config.EMAIL_PORT}`;
    const timeout = options.timeoutMs ?? 30_000;
    this.#transport = nodemailer.createTransport({
      host,
      port: config.EMAIL_PORT,
      secure: config.EMAIL_USE_SSL,
      requireTLS: config.EMAIL_USE_TLS,
      ignoreTLS: !config.EMAIL_USE_TLS && !config.EMAIL_USE_SSL,
      ...(config.EMAIL_HOST_USER !== undefined
        ? { auth: { user: config.EMAIL_HOST_USER, pass: config.EMAIL_HOST_PASSWORD ?? "" } }
        : {}),
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    });
  }

  async deliver(mail: OutgoingMail): Promise<void> {
    await this.#transport.sendMail({
      from: mail.from,
      to: [...mail.to],
      subject: mail.subject,
      text: mail.text,
      ...(mail.html ? { html: mail.html } : {}),
    });
  }

  close(): void {
    this.#transport.close();
  }
}

/** The file of a mail in the outbox directory: its outbox ID, zero-padded so names sort by ID. */
export function emlFileName(id: number): string {
  return `${String(id).padStart(8, "0")}.eml`;
}

export class FileTransport implements MailTransport {
  readonly description: string;
  readonly #dir: string;
  readonly #composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });

  constructor(dir: string) {
    this.#dir = dir;
    this.description = `files in ${dir}`;
  }

  async deliver(mail: OutgoingMail): Promise<void> {
    const info = await this.#composer.sendMail({
      from: mail.from,
      to: [...mail.to],
      subject: mail.subject,
      text: mail.text,
      ...(mail.html ? { html: mail.html } : {}),
      textEncoding: "quoted-printable",
    });
    const message = (info as { message?: unknown }).message;
    if (!Buffer.isBuffer(message)) throw new Error("nodemailer produced no message");
    mkdirSync(this.#dir, { recursive: true });
    // Written whole then renamed, so a reader never sees half a mail.
    const target = join(this.#dir, emlFileName(mail.id));
    const temporary = `${target}.tmp`;
    writeFileSync(temporary, message);
    renameSync(temporary, target);
  }

  close(): void {
    this.#composer.close();
  }
}

/** The transport the configuration asks for. */
export function transportFor(config: ServerConfig, dataDir: string): MailTransport {
  return config.EMAIL_HOST !== undefined ? new SmtpTransport(config) : new FileTransport(join(dataDir, "outbox"));
}

/** The From header: NOREPLY_EMAIL_ADDRESS, else noreply@ the external host (Zulip's default). */
export function fromHeader(config: ServerConfig, externalHost: string, name: string | null): string {
  const address = config.NOREPLY_EMAIL_ADDRESS ?? `noreply@${externalHost.replace(/:\d+$/, "")}`;
  if (name === null) return address;
  return `"${name.replace(/["\\\r\n]/g, "")}" <${address}>`;
}
