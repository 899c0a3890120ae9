/**
 * @module bench/attacks/compat-body
 * Hardening item 3: an unauthenticated 400 MiB body to POST /api/v1/fetch_api_key on
 * the compatibility listener (Node's parser), once with its length declared and once
 * chunked (no length to refuse it by), from a client that sends all of it whatever
 * the server answers. Before the fix that listener had no body limit and buffered it
 * all (RSS 1.3 GB); now it applies the endpoint's 16 KiB, answers 413 at once, and
 * reads on and drops the rest (for at most 10 s) before closing.
 */
import { connect } from "node:net";
import type { Attack, AttackTarget } from "./types.js";

const MiB = 1024 * 1024;
const BODY_BYTES = 400 * MiB;
const CHUNK = Buffer.alloc(MiB, "x");

/** Sends BODY_BYTES until all is sent, the server closes, or `signal` aborts; says what came back and when. */
function sendBody(target: AttackTarget, declared: boolean, signal: AbortSignal): Promise<string> {
  const url = new URL(target.compatUrl);
  const length = declared ? `Content-Length: ${BODY_BYTES}` : "Transfer-Encoding: chunked";
  const frame = declared
    ? CHUNK
    : Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from("\r\n")]);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let sent = 0;
    let answer: string | null = null;
    let sentAtAnswer = 0;
    let finished = false;
    const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;
    const done = (how: string) => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve(
        `${declared ? "declared" : "chunked"}: ${answer ?? "no answer"} after ${mib(sentAtAnswer)} sent; ${how} with ${mib(sent)} sent`,
      );
    };
    socket.on("data", (chunk: Buffer) => {
      if (answer !== null) return;
      sentAtAnswer = sent;
      answer = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString("latin1", 0, 16))?.[1] ?? "garbled";
    });
    socket.on("error", (error: NodeJS.ErrnoException) => done(`connection ${error.code ?? error.message}`));
    socket.on("close", () => done("closed by the server"));
    signal.addEventListener("abort", () => done("stopped"), { once: true });
    socket.write(
      `POST ${url.pathname.replace(/\/$/, "")}/api/v1/fetch_api_key HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-www-form-urlencoded\r\n${length}\r\n\r\n`,
    );
    const pump = () => {
      while (sent < BODY_BYTES && !finished) {
        sent += CHUNK.length;
        if (!socket.write(frame)) {
          socket.once("drain", pump);
          return;
        }
      }
      if (!declared && !finished) socket.write("0\r\n\r\n");
    };
    pump();
  });
}

export const attack: Attack = {
  item: 3,
  name: "400 MiB body to fetch_api_key on the compat port",
  async run(target, signal) {
    const declared = await sendBody(target, true, signal);
    const chunked = await sendBody(target, false, signal);
    return `${declared}; ${chunked}`;
  },
};
