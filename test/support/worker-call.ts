/**
 * @module test/support/worker-call
 * One API request to a `parley serve --workers` server, answered with the worker that
 * served it (`X-Parley-Worker`) and the rate limit left, for the workers tests.
 */
import { type Agent, request } from "node:http";

export interface WorkerAnswer {
  readonly status: number;
  readonly worker: string;
  readonly remaining: number;
  readonly body: Record<string, unknown>;
}

/**
 * `agent` null: a connection of its own (so the kernel may hand it to either worker).
 * Parameters go in the query for GET (or with `inQuery`), else in a form body.
 */
export function workerCall(
  agent: Agent | null,
  url: string,
  auth: string,
  method: string,
  path: string,
  params: Record<string, string> = {},
  inQuery = method === "GET",
): Promise<WorkerAnswer> {
  const form = new URLSearchParams(params).toString();
  const target = `${url}/api/v1${path}${inQuery && form ? `?${form}` : ""}`;
  return new Promise((resolve, reject) => {
    const req = request(target, { method, agent: agent ?? false, headers: { Authorization: auth } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          worker: String(res.headers["x-parley-worker"] ?? ""),
          remaining: Number(res.headers["x-ratelimit-remaining"] ?? NaN),
          body: JSON.parse(Buffer.concat(chunks).toString() || "{}") as Record<string, unknown>,
        }),
      );
    });
    req.on("error", (error) => reject(new Error(`${method} ${path}: ${error.message}`)));
    if (!inQuery) {
      req.setHeader("Content-Type", "application/x-www-form-urlencoded");
      // Node frames no body of a DELETE by itself.
      req.setHeader("Content-Length", Buffer.byteLength(form));
      req.end(form);
    } else req.end();
  });
}
