/**
 * @module http/pages
 * The few pages served outside /api/v1, for people following links from mail:
 * /join/{key}/ (GET form, POST submit) and /accounts/confirm_new_email/{key}/ (GET).
 */
import type { Realm, Store } from "../../engine/index.js";
import type { ServerInfo } from "../endpoint.js";
import { realmUrl } from "../realm-url.js";
import type { Reply } from "../respond.js";
import { confirmEmailChange } from "./confirm-email.js";
import { page } from "./html.js";
import { joinForm, joinSubmit } from "./join.js";
import { notFoundPage } from "./link-errors.js";

/** Keys are generated as 24 [a-z0-9]; anything else is shown as an unknown link without a lookup. */
const KEY = "([a-z0-9]{1,64})";
const JOIN = new RegExp(`^/join/${KEY}/?$`);
const CONFIRM_EMAIL = new RegExp(`^/accounts/confirm_new_email/${KEY}/?$`);

export interface PageRoute {
  /** The logged path template. */
  readonly template: string;
  readonly methods: readonly string[];
  handle(input: PageInput): Reply | Promise<Reply>;
}

export interface PageInput {
  readonly method: string;
  readonly store: Store;
  readonly realm: Realm | undefined;
  readonly server: ServerInfo;
  readonly fields: ReadonlyMap<string, string>;
  readonly remoteAddress: string;
}

/** The page a path names, or null when it is not one of these paths. */
export function matchPage(path: string): PageRoute | null {
  if (path === "/join" || path.startsWith("/join/")) {
    const key = JOIN.exec(path)?.[1];
    return {
      template: "/join/:key",
      methods: ["GET", "POST"],
      handle: ({ method, store, realm, server, fields, remoteAddress }) => {
        if (key === undefined || realm === undefined) return notFoundPage();
        const ctx = { store, realm, realmUrl: realmUrl(server, realm), key };
        if (method !== "POST") return joinForm(ctx);
        return joinSubmit({ ...ctx, remoteAddress, guard: server.joins, cost: server.passwordHashCost }, fields);
      },
    };
  }
  if (path.startsWith("/accounts/confirm_new_email")) {
    const key = CONFIRM_EMAIL.exec(path)?.[1];
    return {
      template: "/accounts/confirm_new_email/:key",
      methods: ["GET"],
      handle: ({ store, realm, server }) =>
        key === undefined || realm === undefined
          ? notFoundPage()
          : confirmEmailChange(store, realm, realmUrl(server, realm), key),
    };
  }
  return null;
}

export function methodNotAllowedPage(allowed: readonly string[]): Reply {
  return page(405, "Method not allowed", "<p>This page cannot be used that way.</p>", [["Allow", allowed.join(", ")]]);
}
