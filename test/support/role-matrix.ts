/**
 * @module test/support/role-matrix
 * The callers of a permission matrix over HTTP: the seed realm's owner, an
 * administrator, a moderator, a member, a guest, a bot, and another realm's owner
 * (who asks their own subdomain, so the server must tell the realms apart).
 */
import type { User } from "../../src/engine/index.js";
import { basicAuth, encodeParams, rawRequest, type TestServer } from "./http.js";

export type Caller = "owner" | "admin" | "moderator" | "member" | "guest" | "bot" | "another realm";

export interface RoleMatrix {
  readonly users: Readonly<Record<Caller, User>>;
  readonly everyone: readonly [Caller, User][];
  /** A request as `user`, to their own realm. */
  as(
    user: User,
    method: string,
    path: string,
    params?: Record<string, unknown>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

/**
 * `externalHost` is the server's (startServer's default is "localhost"); the other realm
 * is its `bee.` subdomain, asked by a raw request since fetch cannot set Host.
 */
export function roleMatrix(server: TestServer, externalHost = "chat.example.com"): RoleMatrix {
  const { store } = server.t;
  const realmId = server.seed.realm.id;
  const users: Record<Caller, User> = {
    owner: server.seed.owner,
    admin: store.createUser({ realmId, email: "admin@test.dev", fullName: "Ada Admin", role: 200 }),
    moderator: store.createUser({ realmId, email: "mod@test.dev", fullName: "Moe Mod", role: 300 }),
    member: server.seed.bob,
    guest: server.seed.guest,
    bot: store.createUser({
      realmId,
      email: "helper-bot@test.dev",
      fullName: "Helper",
      bot: { type: 1, ownerId: server.seed.bob.id },
    }),
    "another realm": store.createRealm({
      subdomain: "bee",
      name: "Bee",
      owner: { email: "queen@bee.test", fullName: "Queen" },
    }).owner,
  };
  return {
    users,
    everyone: Object.entries(users) as [Caller, User][],
    async as(user, method, path, params = {}) {
      if (user.realmId === realmId) return server.call(user, method, path, params);
      const form = encodeParams(params).toString();
      const query = method === "GET" || method === "DELETE";
      const headers: Record<string, string> = {
        Host: `bee.${externalHost}`,
        Authorization: basicAuth(store.getUser(user.id)),
        ...(query ? {} : { "Content-Type": "application/x-www-form-urlencoded" }),
      };
      return rawRequest(
        server.base,
        method,
        query && form !== "" ? `${path}?${form}` : path,
        headers,
        query ? "" : form,
      );
    },
  };
}
