/**
 * Node's listeners (http/compat-listener: --compat-port, and the writer worker's internal
 * socket, which answers every request a reader forwards) hand each request an abort
 * signal that fires when its client leaves before the answer, ending a long-poll, and
 * not when an answered request's connection closes (an abort builds a DOMException
 * with its stack, for every forwarded answer).
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { Admission, Pipeline } from "../../src/http/admission.js";
import { listenCompat, type CompatListener } from "../../src/http/compat-listener.js";
import { BodyBudget } from "../../src/http/load-limits.js";
import { success, type Reply } from "../../src/http/respond.js";
import type { RequestHead } from "../../src/http/request.js";

let listener: CompatListener | null = null;
afterEach(() => {
  listener?.close();
  listener = null;
});

/** A pipeline whose GET /wait answers only when its signal fires, and anything else at once. */
function pipeline(signals: AbortSignal[]): Pipeline {
  return {
    admit: (head: RequestHead): Admission => ({
      head,
      note: {
        id: "t",
        method: head.method,
        startedAt: performance.now(),
        route: null,
        fixedPath: null,
        userId: null,
        realmId: null,
      },
      counted: false,
      refusal: null,
      mode: "buffer",
      maxBodyBytes: 1024,
      caller: null,
    }),
    handle: (admission, _body, signalOf) => {
      const signal = signalOf();
      signals.push(signal);
      const reply: Reply = success({}, []);
      if (admission.head.url !== "/wait") return Promise.resolve({ reply, headers: [] });
      return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ reply, headers: [] })));
    },
    finish: (_admission, reply, headers) => ({ reply, headers }),
    budget: new BodyBudget(),
    maxConnections: 0,
    logError: () => undefined,
  };
}

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: "127.0.0.1", path, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("compat listener: a request's abort signal", () => {
  it("stays quiet for an answered request, also once its connection closed", async () => {
    const signals: AbortSignal[] = [];
    listener = await listenCompat(pipeline(signals), 0, "127.0.0.1");
    expect(await get(listener.port, "/now")).toBe(200);
    // The connection (no agent: Connection: close) is gone; let its close events run.
    await new Promise((r) => setTimeout(r, 50));
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
  });

  it("fires when the client leaves before the answer (a long-poll ends)", async () => {
    const signals: AbortSignal[] = [];
    listener = await listenCompat(pipeline(signals), 0, "127.0.0.1");
    const port = listener.port;
    const req = request({ port, host: "127.0.0.1", path: "/wait", agent: false });
    req.on("error", () => undefined);
    req.end();
    while (signals.length === 0) await new Promise((r) => setTimeout(r, 5));
    req.destroy();
    while (!signals[0]!.aborted) await new Promise((r) => setTimeout(r, 5));
    expect(signals[0]!.aborted).toBe(true);
  });
});
