/**
 * @module test/support/smtp
 * A real SMTP server on loopback (smtp-server, from the nodemailer authors) that keeps
 * what it receives, for tests of the mail path end to end.
 */
import { createServer as createNetServer } from "node:net";
import { SMTPServer } from "smtp-server";
import { parseEml } from "../../src/mail/eml.js";

export interface ReceivedMail {
  readonly envelopeTo: string[];
  readonly subject: string;
  readonly from: string;
  readonly text: string;
  readonly html: string | null;
}

export interface TestSmtp {
  readonly port: number;
  readonly received: ReceivedMail[];
  /** Resolves with the next mail received (or one already waiting). */
  next(): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** A free loopback port (for a server that is meant to be down at first). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts the server on `port` (0: any); `rejectRecipients` answers 550 to every RCPT TO. */
export async function startSmtp(port = 0, options: { rejectRecipients?: boolean } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const waiting: ((mail: ReceivedMail) => void)[] = [];
  let taken = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (options.rejectRecipients) callback(Object.assign(new Error("No such mailbox"), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const parsed = parseEml(Buffer.concat(chunks).toString("utf8"));
        const mail = {
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
          subject: parsed.subject,
          from: parsed.from,
          text: parsed.text,
          html: parsed.html,
        };
        received.push(mail);
        waiting.shift()?.(mail);
        callback();
      });
    },
  });
  const bound = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
  return {
    port: bound,
    received,
    next() {
      const ready = received[taken];
      if (ready) {
        taken++;
        return Promise.resolve(ready);
      }
      return new Promise((resolve) =>
        waiting.push((mail) => {
          taken++;
          resolve(mail);
        }),
      );
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
