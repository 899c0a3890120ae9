/**
 * @module test/support/fake-bouncer
 * A push notification bouncer on loopback (a real node:http server) that records
 * every request and answers as told: success, a refusal with a code, a 5xx, or
 * silence (a hung bouncer). It can go down and come back on the same port. Tests open
 * the recorded `encrypted_data` with the device's key (tweetnacl secretbox.open).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import nacl from "tweetnacl";

export interface BouncerRequest {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly userAgent: string | undefined;
  readonly contentType: string | undefined;
  readonly body: Record<string, unknown>;
}

export type BouncerMode =
  | { readonly kind: "ok"; readonly deleteTokenIds?: readonly string[] }
  | { readonly kind: "refuse"; readonly status: number; readonly code: string; readonly msg?: string }
  | { readonly kind: "error"; readonly status: number }
  | { readonly kind: "hang" };

export class FakeBouncer {
  readonly requests: BouncerRequest[] = [];
  mode: BouncerMode = { kind: "ok" };
  #server: Server | null = null;
  #port = 0;
  readonly #hung = new Set<ServerResponse>();

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Listens (again, on the same port after down()). */
  async up(): Promise<void> {
    const server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#port, "127.0.0.1", () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Stops listening and drops every connection: requests now fail to connect. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (!server) return;
    for (const res of this.#hung) res.destroy();
    this.#hung.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Requests to one remotes/ endpoint, in order. */
  to(endpoint: string): BouncerRequest[] {
    return this.requests.filter((r) => r.path === `/api/v1/remotes/${endpoint}`);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      body = { unparsable: true };
    }
    this.requests.push({
      path: req.url ?? "",
      authorization: req.headers.authorization,
      userAgent: req.headers["user-agent"],
      contentType: req.headers["content-type"],
      body,
    });
    const mode = this.mode;
    const reply = (status: number, value: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(value));
    };
    switch (mode.kind) {
      case "hang":
        this.#hung.add(res);
        return;
      case "error":
        reply(mode.status, { result: "error", msg: "boom" });
        return;
      case "refuse":
        reply(mode.status, { result: "error", msg: mode.msg ?? "refused", code: mode.code });
        return;
      case "ok":
        if (req.url === "/api/v1/remotes/push/e2ee/register")
          reply(200, { result: "success", msg: "", device_id: this.requests.length });
        else
          reply(200, {
            result: "success",
            msg: "",
            apple_successfully_sent_count: 0,
            android_successfully_sent_count: 1,
            delete_token_ids: mode.deleteTokenIds ?? [],
          });
    }
  }
}

/** Opens one push request's encrypted_data with the device's push key (base64 of 0x31 + key). */
export function openPayload(pushKeyBase64: string, encryptedData: string): Record<string, unknown> {
  const key = Buffer.from(pushKeyBase64, "base64").subarray(1);
  const bytes = Buffer.from(encryptedData, "base64");
  const plain = nacl.secretbox.open(bytes.subarray(24), bytes.subarray(0, 24), key);
  if (plain === null) throw new Error("encrypted_data does not open with this key");
  return JSON.parse(Buffer.from(plain).toString("utf8")) as Record<string, unknown>;
}
