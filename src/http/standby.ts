/**
 * @module http/standby
 * What a cluster node's port answers while the node has no server to serve from
 * (docs/cluster.md §5): between a leader's step-down and its rejoining as a follower,
 * for as long as its NATS connection is away. Every request gets 503 with the reason
 * and `Retry-After`, but GET /health, which gets the node's status. It binds the port
 * beside the server it replaces (SO_REUSEPORT), as the roles' servers do (§9).
 */
import uWS from "uWebSockets.js";
import type { ClusterStatus } from "./cluster-hooks.js";
import { carriesBody, refuseAfterBody } from "./forward.js";
import { readHead } from "./request.js";
import { errorReply } from "./respond.js";
import { WORKER_HEADER } from "./worker-headers.js";

export interface Standby {
  /** Stops listening and drops the connections it holds. */
  close(): void;
}

export function listenStandby(host: string, port: number, node: string, status: () => ClusterStatus): Promise<Standby> {
  const app = uWS.App();
  app.any("/*", (res, req) => {
    const head = readHead(req, res);
    const now = status();
    const reply =
      head.url === "/health"
        ? { status: 503, body: JSON.stringify({ role: now.role, applied: now.applied, reason: now.reason }) }
        : errorReply(503, `This node cannot serve now: ${now.reason ?? "it is changing role"}; try again`, null);
    refuseAfterBody(res, carriesBody(head, req), reply, [
      [WORKER_HEADER, node],
      ["Retry-After", "1"],
    ]);
  });
  return new Promise((resolve, reject) => {
    // 0: not exclusive, so that the next server binds the port while this one still holds it.
    const listen = app.listen as unknown as (
      h: string,
      p: number,
      options: number,
      cb: (socket: uWS.us_listen_socket | false) => void,
    ) => void;
    listen.call(app, host, port, 0, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${host}:${port} while the node changes role`));
      resolve({
        close: () => {
          uWS.us_listen_socket_close(socket);
          // In the binary (uWS 20.30), absent from the bundled type declarations.
          (app as unknown as { close(): void }).close();
        },
      });
    });
  });
}
