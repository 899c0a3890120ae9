/**
 * @module test/support/zulip-js
 * The official zulip-js client (CommonJS, untyped) with the slice of its API the tests
 * drive, logged in as a seeded user of a test server.
 */
import { createRequire } from "node:module";
import type { TestServer } from "./http.js";

export type Result = Record<string, unknown> & { result: string };
type Call = (p: Record<string, unknown>) => Promise<Result>;

export interface ZulipClient {
  users: { me: { subscriptions: { add: Call } } };
  messages: {
    send: Call;
    retrieve: Call;
    update: Call;
    deleteById: Call;
    getById: Call;
    getHistoryById: Call;
    flags: { add: Call; remove: Call };
  };
  streams: { topics: { retrieve: Call } };
  queues: { register: Call; deregister: Call };
  events: { retrieve: Call };
  reactions: { add: Call };
  typing: { send: Call };
}

const zulipInit = createRequire(import.meta.url)("zulip-js") as (config: {
  username: string;
  apiKey: string;
  realm: string;
}) => Promise<ZulipClient>;

/** A zulip-js client for `user` against the test server. */
export function zulipClient(server: TestServer, user: { email: string; apiKey: string }): Promise<ZulipClient> {
  return zulipInit({ username: user.email, apiKey: user.apiKey, realm: server.base });
}
