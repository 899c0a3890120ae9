/**
 * @module test/support/tcp-proxy
 * A TCP proxy on loopback between one client and a server (a cluster node and
 * nats-server, for the partition tests): `cut()` severs every connection and refuses
 * new ones until `restore()`; `cutAfter(bytes)` severs once that many more bytes went
 * from the client to the server (to cut a write in the middle).
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export interface TcpProxy {
  /** The proxy's address, as the target's scheme gives it: `nats://127.0.0.1:PORT`. */
  readonly url: string;
  cut(): void;
  cutAfter(bytes: number): Promise<void>;
  restore(): void;
  close(): Promise<void>;
}

export async function startProxy(target: { host: string; port: number }, scheme = "nats"): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let open = true;
  let budget: { left: number; done: () => void } | null = null;
  const sever = (): void => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  const cut = (): void => {
    open = false;
    sever();
  };
  const server: Server = createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.on("data", (chunk: Buffer) => {
      if (budget !== null) {
        if (chunk.length >= budget.left) {
          upstream.write(chunk.subarray(0, budget.left));
          const done = budget.done;
          budget = null;
          // The bytes written reach the server before the sockets go.
          upstream.end(() => {
            cut();
            done();
          });
          client.pause();
          return;
        }
        budget.left -= chunk.length;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    cut,
    cutAfter: (bytes) => new Promise<void>((done) => (budget = { left: bytes, done })),
    restore: () => {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
